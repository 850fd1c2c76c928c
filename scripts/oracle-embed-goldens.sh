#!/usr/bin/env bash
# oracle-embed-goldens.sh: record llama.cpp's embeddings (node-llama-cpp's
# embedding context) of synthetic models as goldens for kiln's
# /v1/embeddings: testdata/oracle-embed/embed-<arch>-F32.json =
#   {"command": the oracle command line, "synth": kiln synth's --json
#    record (as scripts/oracle-goldens.sh), "oracle": {tokens, embedding}}.
# Without <arch>.pooling_type llama.cpp pools none and node-llama-cpp
# returns the last token's final-norm hidden state
# (llama_get_embeddings_ith(ctx, -1)), unnormalised: kiln's "last" pooling.
# With one (synth --pooling-type) it pools so; kiln's test pools likewise.
# Needs what oracle-goldens.sh needs (ORACLE's folder pinned to haswell).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SHARED="${SHARED:-$ROOT/../shared/models}"
ORACLE="${ORACLE:-/tmp/oracle/llamacpp.mjs}"
OUT="$ROOT/testdata/oracle-embed"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
BINS="$(dirname "$ORACLE")/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64"
if [[ "$(cd "$BINS" 2>/dev/null && ls libggml-cpu-*.so)" != "libggml-cpu-haswell.so" ]]; then
  echo "$ORACLE is not pinned to llama.cpp's haswell (AVX2) CPU build" >&2
  exit 1
fi
(cd "$ROOT" && go build -o "$WORK/kiln" ./cmd/kiln)
mkdir -p "$WORK/oracle" && ln -s "$(cd "$(dirname "$ORACLE")" && pwd)/node_modules" "$WORK/oracle/node_modules"
cp "$ROOT/scripts/oracle-embed.mjs" "$WORK/oracle/"
IDS="17,230,45,301,99,12,477,256,8,140,333,61,402,77,190,5"
declare -A VOCAB=([llama]=tokenizers/tok512-spm.model [qwen3]=llamacpp-vocab/ggml-vocab-gpt-2.gguf)
declare -A EXTRA=(
  [llama]="--head-dim 64 --rope-theta 10000 --norm-eps 1e-5"
  [qwen3]="--head-dim 128 --rope-theta 1000000 --norm-eps 1e-6 --tied"
)
# NAME ARCH POOLING_TYPE: qwen3-mean carries qwen3.pooling_type = 1, which
# llama.cpp reads for qwen3: it pools by mean (llama_get_embeddings_seq).
for rec3 in "llama llama 0" "qwen3 qwen3 0" "qwen3-mean qwen3 1"; do
  read -r name arch pt <<<"$rec3"
  # shellcheck disable=SC2086
  rec="$("$WORK/kiln" synth "$WORK/$name.gguf" --arch "$arch" --dim 256 --layers 2 --heads 4 --kv-heads 2 \
    --ffn 512 --type F32 --seed 42 --json --vocab "$SHARED/${VOCAB[$arch]}" --pooling-type "$pt" ${EXTRA[$arch]})"
  out="$(cd "$WORK/oracle" && node oracle-embed.mjs "$WORK/$name.gguf" "$IDS")"
  REC="$rec" OUTJ="$out" VOC="${VOCAB[$arch]}" CMD="node scripts/oracle-embed.mjs MODEL $IDS" node -e '
    const e = process.env;
    const rec = {command: e.CMD, synth: JSON.parse(e.REC), oracle: JSON.parse(e.OUTJ)};
    delete rec.synth.file; rec.synth.vocab = e.VOC;
    process.stdout.write(JSON.stringify(rec) + "\n");' > "$OUT/embed-$name-F32.json"
  echo "wrote testdata/oracle-embed/embed-$name-F32.json" >&2
done
