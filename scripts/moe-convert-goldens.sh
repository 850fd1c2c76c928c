#!/usr/bin/env bash
# moe-convert-goldens.sh: run llama.cpp's own convert_hf_to_gguf.py on
# synthetic Hugging Face folders of the four mixture-of-experts
# architectures (Qwen3MoeForCausalLM, MixtralForCausalLM,
# Qwen2MoeForCausalLM, OlmoeForCausalLM) and record every tensor it writes
# (type, shape, sha256 of the bytes) and the model metadata, as
# testdata/convert/moe-llamacpp.json, with the folder's own tensors (HF
# names, one per expert; dtype, shape, sha256). model's
# TestConvertMoEMatchesLlamaCpp makes the same folders again, checks they
# hold those tensors (so synth's writer and kiln's reader cannot drift
# together), and that `kiln convert` writes llama.cpp's tensors and keys
# (no Python in CI).
#
# Folders: each spec below (the test's moeSpecs), seed 7, synthetic vocab,
# written by `kiln synth --format hf` in F32 and BF16, and the BF16 one
# again with every F32 tensor (norms, routers: synth keeps those F32)
# truncated to BF16, as a real all-BF16 checkpoint stores them; the
# converter runs with --outtype f32, bf16, bf16.
#
# The converter's vocabulary step is skipped (set_vocab is a no-op: its
# tokenizer code needs transformers), so tokenizer.* keys are not
# compared; general.name, basename, finetune and size_label (from the
# folder's name) are left out too.
#
# Needs: go; python3 with torch and numpy (Debian 12: apt-get install
# python3-torch python3-numpy; its torch 1.13 lacks the float8 and
# unsigned dtypes the converter's tables name, which the driver below
# stubs); a llama.cpp source tree (LLSRC, default /tmp/llsrc; the pinned
# oracle's: shared/oracle/README.md), whose commit is recorded.
# Usage: scripts/moe-convert-goldens.sh   (from anywhere; writes into the repo)
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
LLSRC="${LLSRC:-/tmp/llsrc}"
PY="${PY:-/usr/bin/python3}"
OUT="$ROOT/testdata/convert/moe-llamacpp.json"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
(cd "$ROOT" && go build -o "$WORK/kiln" ./cmd/kiln)
COMMIT="$(git -C "$LLSRC" log -1 --format=%H 2>/dev/null || echo unknown)"

mkdir -p "$WORK/py/transformers"
cat > "$WORK/py/transformers/__init__.py" <<'EOF'
# Stub: convert_hf_to_gguf.py imports AutoConfig; these archs read config.json itself.
class AutoConfig:
    @staticmethod
    def from_pretrained(*a, **k):
        raise OSError("transformers stub")
EOF
cat > "$WORK/py/drive.py" <<EOF
# convert_hf_to_gguf.py with set_vocab a no-op: tensors and model metadata.
import sys
sys.path[:0] = ["$WORK/py", "$LLSRC/gguf-py", "$LLSRC"]
import torch
for n in ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "uint16", "uint32", "uint64", "float8_e8m0fnu", "float4_e2m1fn_x2"]:
    if not hasattr(torch, n):
        setattr(torch, n, type(n, (), {})())
import convert_hf_to_gguf as c
from conversion.qwen import Qwen2MoeModel, Qwen3MoeModel
from conversion.olmo import OlmoeModel
from conversion.llama import LlamaModel
for cls in (Qwen2MoeModel, Qwen3MoeModel, OlmoeModel, LlamaModel):
    cls.set_vocab = lambda self: None
sys.argv = ["convert_hf_to_gguf.py"] + sys.argv[1:]
c.main()
EOF
cat > "$WORK/py/allbf16.py" <<'EOF'
# allbf16.py DIR: every F32 tensor of DIR/model.safetensors truncated to BF16 (in place).
import json, os, struct, sys
p = os.path.join(sys.argv[1], "model.safetensors")
b = open(p, "rb").read()
hl = struct.unpack("<Q", b[:8])[0]
hdr = json.loads(b[8:8 + hl])
data = b[8 + hl:]
out, new, off = bytearray(), {}, 0
for k, v in sorted(((k, v) for k, v in hdr.items() if k != "__metadata__"), key=lambda kv: kv[1]["data_offsets"][0]):
    s, e = v["data_offsets"]
    raw = data[s:e]
    if v["dtype"] == "F32":
        raw = b"".join(raw[i + 2:i + 4] for i in range(0, len(raw), 4))
        v = dict(v, dtype="BF16")
    new[k] = dict(v, data_offsets=[off, off + len(raw)])
    out += raw
    off += len(raw)
if "__metadata__" in hdr:
    new["__metadata__"] = hdr["__metadata__"]
h = json.dumps(new).encode()
h += b" " * (-len(h) % 8)
open(p, "wb").write(struct.pack("<Q", len(h)) + h + bytes(out))
EOF
cat > "$WORK/py/dump.py" <<EOF
# dump.py NAME SPEC TYPE ALLBF16 FILE DIR: one JSON record of FILE's tensors
# and keys, and of the folder DIR's safetensors tensors it was made from.
import hashlib, json, os, struct, sys
sys.path[:0] = ["$LLSRC/gguf-py"]
from gguf import GGUFReader
name, spec, typ, allbf16, path, folder = sys.argv[1:7]
st = open(os.path.join(folder, "model.safetensors"), "rb").read()
hl = struct.unpack("<Q", st[:8])[0]
hf = {}
for k, v in json.loads(st[8:8 + hl]).items():
    if k != "__metadata__":
        s, e = v["data_offsets"]
        hf[k] = {"dtype": v["dtype"], "shape": v["shape"], "sha256": hashlib.sha256(st[8 + hl + s:8 + hl + e]).hexdigest()[:16]}
r = GGUFReader(path)
tensors = {}
for t in r.tensors:
    tensors[t.name] = {"type": t.tensor_type.name, "shape": [int(d) for d in t.shape],
                       "sha256": hashlib.sha256(t.data.tobytes()).hexdigest()[:16]}
meta = {}
for f in r.fields.values():
    if f.name.startswith(("tokenizer.", "GGUF.")) or f.name in ("general.name", "general.size_label", "general.basename", "general.finetune"):
        continue
    v = f.contents()
    meta[f.name] = v
print(json.dumps({"name": name, "spec": json.loads(spec), "type": typ, "seed": 7, "all_bf16": allbf16 == "1",
                  "hf_tensors": hf, "tensors": tensors, "metadata": meta}, sort_keys=True))
EOF

SPECS=(
  'qwen3moe|{"arch":"qwen3moe","dim":128,"layers":2,"heads":4,"kv_heads":2,"head_dim":64,"ffn":256,"vocab_size":400,"tied":true,"rope_theta":1e6,"norm_eps":1e-6,"experts":8,"experts_used":2,"expert_ffn":64}'
  'mixtral|{"arch":"llama","dim":128,"layers":2,"heads":4,"kv_heads":2,"head_dim":0,"ffn":64,"vocab_size":400,"experts":4,"experts_used":2}'
  'qwen2moe|{"arch":"qwen2moe","dim":128,"layers":2,"heads":4,"kv_heads":2,"head_dim":0,"ffn":256,"vocab_size":400,"rope_theta":1e6,"norm_eps":1e-6,"experts":8,"experts_used":2,"expert_ffn":64,"shared_ffn":96}'
  'olmoe|{"arch":"olmoe","dim":128,"layers":2,"heads":4,"kv_heads":4,"head_dim":0,"ffn":64,"vocab_size":400,"rope_theta":1e4,"norm_eps":1e-5,"experts":8,"experts_used":4}'
)
RECS="$WORK/records.jsonl"
: > "$RECS"
for entry in "${SPECS[@]}"; do
  name="${entry%%|*}" spec="${entry#*|}"
  echo "$spec" > "$WORK/$name.json"
  for variant in F32 BF16 BF16-all; do
    typ="${variant%-all}" all=0
    [[ $variant == *-all ]] && all=1
    dir="$WORK/$name-$variant"
    "$WORK/kiln" synth --format hf "$dir" --spec "$WORK/$name.json" --type "$typ" --seed 7 > /dev/null
    [[ $all == 1 ]] && "$PY" "$WORK/py/allbf16.py" "$dir"
    outtype="$(echo "$typ" | tr 'A-Z' 'a-z')"
    "$PY" "$WORK/py/drive.py" "$dir" --outfile "$WORK/$name-$variant.gguf" --outtype "$outtype" > "$WORK/$name-$variant.log" 2>&1 ||
      { cat "$WORK/$name-$variant.log" >&2; exit 1; }
    "$PY" "$WORK/py/dump.py" "$name-$variant" "$spec" "$typ" "$all" "$WORK/$name-$variant.gguf" "$dir" >> "$RECS"
  done
done
mkdir -p "$(dirname "$OUT")"
COMMIT="$COMMIT" "$PY" - "$RECS" > "$OUT" <<'EOF'
import json, os, sys
models = [json.loads(l) for l in open(sys.argv[1])]
head = json.dumps({"command": "scripts/moe-convert-goldens.sh",
                   "llama_cpp_commit": os.environ["COMMIT"],
                   "note": "tensors and model metadata of llama.cpp's convert_hf_to_gguf.py (set_vocab skipped) on kiln synth --format hf folders; sha256: the first 16 hex digits"}, sort_keys=True)
print(head[:-1] + ', "models": [\n' + ",\n".join(json.dumps(m, sort_keys=True) for m in models) + "\n]}")
EOF
echo "wrote $OUT"
