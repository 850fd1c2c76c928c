#!/usr/bin/env bash
# oracle-goldens.sh: record llama.cpp's next-token distributions on small
# synthetic models (and on stories260K) as golden files for kiln's
# forward-pass tests: testdata/oracle/*.json.
#
# For each architecture {llama, qwen2, qwen3, qwen3moe, mixtral, qwen2moe, olmoe} x type {F32 F16 BF16
# Q8_0 Q4_0 Q4_K Q6_K}, for llama, qwen3 and qwen3moe also x {Q4_1 Q5_0
# Q5_1 Q5_K} and for llama and qwen3 x {Q2_K Q3_K} (with those, every
# tensor type kiln's kernels load), it makes
# a small random-weight model with `kiln synth` (dim 256, 2 layers, 4 heads,
# 2 KV heads, ffn 512: every row a multiple of 256 so the K types apply
# everywhere), runs the llama.cpp oracle's `probs` over 64
# fixed token ids at every position (top 20), and writes
#
#   testdata/oracle/<arch>-<type>.json = {
#     "command": the oracle command line,
#     "synth":   kiln synth's --json record: spec, type, seed, sha256, and
#                vocab: the vocabulary's path relative to shared/models,
#     "oracle":  the oracle's output }
#
# Goldens recorded before the oracle asked for topK 0 / topP 1 (2026-11-28)
# hold probabilities renormalized after node-llama-cpp's default top-k 40 /
# top-p 0.95, later ones the full softmax (each golden's "note" says which):
# absolute values differ by a per-position factor, so compare
# log p(token) - log p(top-1) within the listed tokens.
#
# A test regenerates the model with synth.Plan(spec, vocab, type, seed),
# checks the sha256 (a changed generator makes stale goldens fail loudly,
# not silently), runs kiln on "ids" and compares distributions.
# qwen3moe is qwen3 with a mixture-of-experts FFN in each block: 8 experts
# of width 256, 2 per token (Qwen3-30B-A3B has 128 of width 768, 8 per
# token), routed by llama.cpp's build_moe_ffn. mixtral is llama with 8
# experts of width --ffn, 2 per token (Mixtral-8x7B's routing), untied.
# qwen2moe is qwen2 (QKV biases) with 8 experts of width 256, 2 per token,
# not renormalised, plus a shared expert of width 512 behind a sigmoid gate
# (Qwen1.5-MoE-A2.7B: 60 of width 1408, 4 per token, shared 5632), untied.
# olmoe has 8 experts of width --ffn 256, 2 per token, not renormalised, q/k
# RMSNorm over the whole projection, no GQA (OLMoE-1B-7B: 64 of 1024, 8 per
# token), untied.
# Also: llama3rope-F32 (Llama 3 rope_freqs), llama-Q4_K_M, llama-Q5_K_M,
# llama-Q2_K-mix and llama-Q3_K_S/M/L (an F32 synth model put through
# `kiln quantize ... Q4_K_M` etc., llama-quantize's mixes), and stories260K (a trained model):
# greedy from "Once upon a time", probs on a prompt, and its F16 conversion.
#
# Vocabularies: llama uses tokenizers/tok512-spm.model (stories260K's
# SentencePiece model, 512 tokens); qwen2/qwen3 use llama.cpp's GPT-2 vocab GGUF (50257
# byte-level BPE tokens; the 151k Qwen2 vocab would make each model 3x
# larger for no gain: these tests feed token ids, not text). qwen2/qwen3 are
# tied, as Qwen2.5-0.5B and Qwen3-0.6B are; qwen3 has head_dim 128, so
# heads*head_dim (512) != dim (256), as in Qwen3.
#
# Needs: go, node and the oracle (default /tmp/oracle/llamacpp.mjs; set
# ORACLE) pinned to llama.cpp's haswell (AVX2) CPU build, whose summation
# orders kiln reproduces (shared/oracle/README.md, pin-cpu.sh), and
# ../shared/models (set SHARED). Not run in CI (no npm there).
# Quantized KV caches: kv-<kvtype>-<arch>-<type>.json run the oracle with
# --kv-type q8_0 / q4_0 (llama.cpp's one_chunk flash attention over Q8_0 /
# Q4_0 pages) on llama (head 64) and qwen3 (head 128) models of two weight
# types each, over 256 fixed token ids at every position (top 8, to keep
# the files small); the record's "kv_type" tells the test which cache to use.
# llama.cpp rotates q, k, v and the attention output by a Walsh-Hadamard
# matrix for quantized caches by default (LLAMA_ATTN_ROT_DISABLE unset), and
# kiln follows it: do not set that variable when recording.
# Usage: scripts/oracle-goldens.sh   (from anywhere; writes into the repo)
#        ARCHS="qwen3moe" TYPES="F32 Q8_0" scripts/oracle-goldens.sh
#        MIXES="Q5_K_M" scripts/oracle-goldens.sh
#        KVTYPES="q8_0 q4_0" scripts/oracle-goldens.sh   (only the KV goldens)
#   ARCHS and TYPES limit the synth goldens made, MIXES the kiln quantize
#   ones (llama-<mix>); the llama3rope and stories260K records (and the KV
#   goldens) are made only when none is set.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SHARED="${SHARED:-$ROOT/../shared/models}"
ORACLE="${ORACLE:-/tmp/oracle/llamacpp.mjs}"
OUT="$ROOT/testdata/oracle"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

if [[ -z "${KILN:-}" ]]; then
  (cd "$ROOT" && go build -o "$WORK/kiln" ./cmd/kiln)
  KILN="$WORK/kiln"
fi
[[ -f "$ORACLE" ]] || { echo "oracle not found at $ORACLE (see shared/oracle/README.md)" >&2; exit 1; }
[[ -d "$SHARED" ]] || { echo "shared models not found at $SHARED" >&2; exit 1; }
BINS="$(dirname "$ORACLE")/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64"
if [[ "$(cd "$BINS" 2>/dev/null && ls libggml-cpu-*.so)" != "libggml-cpu-haswell.so" ]]; then
  echo "$ORACLE is not pinned to llama.cpp's haswell (AVX2) CPU build: shared/oracle/pin-cpu.sh DIR haswell" >&2
  exit 1
fi
mkdir -p "$OUT"

SEED=42
# 64 fixed token ids in [3, 500): below every vocabulary's size, clear of
# <unk>/<s>/</s>. A 31-bit LCG, so the list is reproducible anywhere.
IDS=""
x=12345
for _ in $(seq 64); do
  x=$(( (x * 1103515245 + 12345) % 2147483648 ))
  IDS="${IDS:+$IDS,}$(( 3 + (x >> 8) % 497 ))"
done

# 256 ids for the KV goldens: the same LCG, continued.
KV_IDS=""
for _ in $(seq 256); do
  x=$(( (x * 1103515245 + 12345) % 2147483648 ))
  KV_IDS="${KV_IDS:+$KV_IDS,}$(( 3 + (x >> 8) % 497 ))"
done

# record NAME VOCAB_FILE SYNTH_JSON QUANT_JSON ORACLE_ARGS...: runs the
# oracle and writes testdata/oracle/NAME.json (with "kv_type": $KV_TYPE
# when that is set).
record() {
  local name="$1" vocab_file="$2" synth_json="$3" quant_json="$4"; shift 4
  local cmd="node llamacpp.mjs $*"
  # The oracle's output goes through a file: 256 positions of it pass the
  # kernel's 128 KiB limit on one environment string.
  node "$ORACLE" "$@" > "$WORK/oracle-out.json"
  KV="${KV_TYPE:-}" CMD="$cmd" VOCAB_FILE="$vocab_file" SYNTH="$synth_json" QUANT="$quant_json" ORACLE_FILE="$WORK/oracle-out.json" \
  node -e '
    const NOTE = "oracle probabilities are llama.cpp softmax at temperature 1 over the whole vocabulary (topK 0, topP 1, minP 0; goldens recorded before 2026-11-28 were renormalized after top-k 40 / top-p 0.95): compare log p - log p(top-1) within the listed tokens";
    const e = process.env, rec = {command: e.CMD.replace(/\S*\/(\S+\.gguf)/g, "$1")};
    if (e.SYNTH) { const s = JSON.parse(e.SYNTH); delete s.file; s.vocab = e.VOCAB_FILE; rec.synth = s; }
    if (e.QUANT) rec.quantize = JSON.parse(e.QUANT);
    if (e.KV) rec.kv_type = e.KV;
    if (e.CMD.includes(" probs ")) rec.note = NOTE;
    rec.oracle = JSON.parse(require("fs").readFileSync(e.ORACLE_FILE, "utf8"));
    process.stdout.write(JSON.stringify(rec) + "\n");' > "$OUT/$name.json"
  echo "wrote testdata/oracle/$name.json" >&2
}

# synth ARCH TYPE EXTRA...: prints kiln synth's --json record.
synth() {
  local arch="$1" typ="$2"; shift 2
  "$KILN" synth "$WORK/$arch-$typ.gguf" --arch "${SYNTH_ARCH[$arch]:-$arch}" --dim 256 --layers 2 --heads 4 --kv-heads 2 \
    --ffn 512 --type "$typ" --seed "$SEED" --json "$@"
}

declare -A VOCAB=([llama]=tokenizers/tok512-spm.model [qwen2]=llamacpp-vocab/ggml-vocab-gpt-2.gguf [qwen3]=llamacpp-vocab/ggml-vocab-gpt-2.gguf
  [qwen3moe]=llamacpp-vocab/ggml-vocab-gpt-2.gguf [mixtral]=tokenizers/tok512-spm.model
  [qwen2moe]=llamacpp-vocab/ggml-vocab-gpt-2.gguf [olmoe]=llamacpp-vocab/ggml-vocab-gpt-2.gguf)
declare -A SYNTH_ARCH=([mixtral]=llama)
declare -A EXTRA=(
  [llama]="--head-dim 64 --rope-theta 10000 --norm-eps 1e-5"
  [qwen2]="--head-dim 64 --rope-theta 1000000 --norm-eps 1e-6 --tied"
  [qwen3]="--head-dim 128 --rope-theta 1000000 --norm-eps 1e-6 --tied"
  [qwen3moe]="--head-dim 128 --rope-theta 1000000 --norm-eps 1e-6 --tied --experts 8 --experts-used 2 --expert-ffn 256"
  [mixtral]="--head-dim 64 --rope-theta 1000000 --norm-eps 1e-5 --experts 8 --experts-used 2"
  [qwen2moe]="--head-dim 64 --rope-theta 1000000 --norm-eps 1e-6 --experts 8 --experts-used 2 --expert-ffn 256 --shared-ffn 512"
  [olmoe]="--head-dim 64 --kv-heads 4 --ffn 256 --rope-theta 10000 --norm-eps 1e-5 --experts 8 --experts-used 2"
)

# kv_goldens: the quantized-KV records (see the header).
kv_goldens() {
  local kv arch typ rec
  for kv in ${KVTYPES:-q8_0 q4_0}; do
    for at in llama:F32 llama:Q8_0 qwen3:F16 qwen3:Q4_0; do
      arch="${at%%:*}" typ="${at##*:}"
      # shellcheck disable=SC2086
      rec="$(synth "$arch" "$typ" --vocab "$SHARED/${VOCAB[$arch]}" ${EXTRA[$arch]})"
      KV_TYPE="$kv" record "kv-$kv-$arch-$typ" "${VOCAB[$arch]}" "$rec" "" probs "$WORK/$arch-$typ.gguf" "ids:$KV_IDS" \
        --top 8 --all-positions --kv-type "$kv"
    done
  done
}
if [[ -n "${KVTYPES:-}" ]]; then
  kv_goldens
  exit 0
fi
# The types with a minimum per block (Q4_1, Q5_1, Q5_K) or with no faster
# llama.cpp path than vec_dot (Q5_0), recorded for fewer architectures: the
# kernels are shared, the MoE path is qwen3moe's.
# Q2_K and Q3_K (vec_dot only as well) for llama and qwen3.
declare -A MORE_TYPES=([llama]="Q4_1 Q5_0 Q5_1 Q5_K Q2_K Q3_K" [qwen3]="Q4_1 Q5_0 Q5_1 Q5_K Q2_K Q3_K" [qwen3moe]="Q4_1 Q5_0 Q5_1 Q5_K")

FULL=1
[[ -n "${ARCHS:-}${TYPES:-}${MIXES:-}${YARN:-}" ]] && FULL=0
if [[ "$FULL" == 1 || -n "${ARCHS:-}${TYPES:-}" ]]; then
  for arch in ${ARCHS:-llama qwen2 qwen3 qwen3moe mixtral}; do
    for typ in ${TYPES:-F32 F16 BF16 Q8_0 Q4_0 Q4_K Q6_K ${MORE_TYPES[$arch]:-}}; do
      # shellcheck disable=SC2086
      rec="$(synth "$arch" "$typ" --vocab "$SHARED/${VOCAB[$arch]}" ${EXTRA[$arch]})"
      record "$arch-$typ" "${VOCAB[$arch]}" "$rec" "" probs "$WORK/$arch-$typ.gguf" "ids:$IDS" --top 20 --all-positions
    done
  done
fi

# kiln quantize: the F32 llama model as llama-quantize's mixes.
if [[ "$FULL" == 1 || -n "${MIXES:-}" ]]; then
  for mix in ${MIXES:-Q4_K_M Q5_K_M Q2_K Q3_K_S Q3_K_M Q3_K_L}; do
    # Q2_K names both a tensor type (the synth golden llama-Q2_K) and
    # llama-quantize's mix: the mix's golden is llama-Q2_K-mix.
    name="llama-$mix"
    [[ "$mix" == Q2_K ]] && name="llama-$mix-mix"
    rec="$(synth llama F32 --vocab "$SHARED/${VOCAB[llama]}" ${EXTRA[llama]})"
    "$KILN" quantize "$WORK/llama-F32.gguf" "$WORK/$name.gguf" "$mix" >&2
    q="{\"type\":\"$mix\",\"sha256\":\"$(sha256sum "$WORK/$name.gguf" | cut -d' ' -f1)\"}"
    record "$name" "${VOCAB[llama]}" "$rec" "$q" probs "$WORK/$name.gguf" "ids:$IDS" --top 20 --all-positions
  done
fi

# YaRN as Qwen2.5 and Qwen3 declare it (config.json rope_scaling {"type": "yarn", "factor": 4,
# "original_max_position_embeddings": ...}), with an original context of 64 so that a 256-token
# prompt (the LCG above, continued) runs to 4x past it. context_length is 512: the oracle in a
# context of exactly the prompt's length returned a wrong last position (3.3 off; a context shift).
# YARN=1 makes only these.
if [[ "$FULL" == 1 || -n "${YARN:-}" ]]; then
  LONG_IDS="$IDS"; y=$x
  for _ in $(seq 192); do
    y=$(( (y * 1103515245 + 12345) % 2147483648 ))
    LONG_IDS="$LONG_IDS,$(( 3 + (y >> 8) % 497 ))"
  done
  for arch in qwen2 qwen3; do
    # shellcheck disable=SC2086
    rec="$(synth "$arch" F32 --vocab "$SHARED/${VOCAB[$arch]}" ${EXTRA[$arch]} --ctx 512 --rope-scaling yarn:4:64)"
    mv "$WORK/$arch-F32.gguf" "$WORK/${arch}yarn-F32.gguf"
    record "${arch}yarn-F32" "${VOCAB[$arch]}" "$rec" "" probs "$WORK/${arch}yarn-F32.gguf" "ids:$LONG_IDS" --top 20 --all-positions --ctx 512
  done
fi

[[ "$FULL" == 1 ]] || exit 0

# Llama 3 frequency scaling through rope_freqs.weight (Llama 3.2's numbers).
rec="$(synth llama F32 --vocab "$SHARED/${VOCAB[llama]}" --head-dim 64 --rope-theta 500000 --norm-eps 1e-5 --llama3-rope 32,1,4,8192)"
mv "$WORK/llama-F32.gguf" "$WORK/llama3rope-F32.gguf"
record llama3rope-F32 "${VOCAB[llama]}" "$rec" "" probs "$WORK/llama3rope-F32.gguf" "ids:$IDS" --top 20 --all-positions

# stories260K: a trained model, where greedy strings must agree token for token.
S260="$SHARED/stories260K.gguf"
record stories260K-greedy "" "" "" greedy "$S260" "Once upon a time" -n 64
record stories260K-probs "" "" "" probs "$S260" "Once upon a time, there was a little girl named Lily. She" --top 20 --all-positions
"$KILN" quantize "$S260" "$WORK/stories260K-F16.gguf" F16 >&2
q="{\"from\":\"stories260K.gguf\",\"type\":\"F16\",\"sha256\":\"$(sha256sum "$WORK/stories260K-F16.gguf" | cut -d' ' -f1)\"}"
record stories260K-F16-probs "" "" "$q" probs "$WORK/stories260K-F16.gguf" "Once upon a time, there was a little girl named Lily. She" --top 20 --all-positions

kv_goldens
