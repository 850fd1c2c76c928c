#!/usr/bin/env bash
# convert-oracle-goldens.sh: record llama.cpp's behaviour on `kiln convert`
# GGUFs of the tinystories-656k Hugging Face folder, as goldens for kiln's
# tests (no npm in CI): testdata/convert/*.json.
#
#   tinystories-656k-F32-greedy.json   greedy from "Once upon a time", 64 tokens
#   tinystories-656k-F32-probs.json    probs at every position of BOS + 64 story ids
#   tinystories-656k-Q8_0-probs.json   the same on `kiln convert --type Q8_0`
#   tinystories-656k-tokenize.json     llama.cpp's tokenize (special tokens
#                                      parsed) of every string of
#                                      tokenizer/testdata/hf/tinystories-656k.json
#
# Each model record holds the oracle command, what kiln convert was asked
# for and the sha256 of the GGUF it wrote (a test converts again and checks
# it), and the oracle's output. Probabilities are renormalized after
# node-llama-cpp's top-k 40 / top-p 0.95, as in scripts/oracle-goldens.sh.
#
# Needs: go, node and the oracle pinned to its AVX2 build (default
# /tmp/oracle-avx2/llamacpp.mjs, see below; set ORACLE), ../shared/models
# (set SHARED).
# Usage: scripts/convert-oracle-goldens.sh   (from anywhere; writes into the repo)
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SHARED="${SHARED:-$ROOT/../shared/models}"
ORACLE="${ORACLE:-/tmp/oracle-avx2/llamacpp.mjs}"
# kiln computes llama.cpp's AVX2 (haswell) summation orders bit for bit; the
# oracle left to itself loads the best build for the CPU (zen4 on AVX-512
# machines), whose F32 products sum in another order: the F32 goldens were
# 6.5e-5 off kiln with it, 5.6e-7 with the haswell build. So the oracle must
# be pinned (shared/oracle/README.md):
#   cp -al /tmp/oracle /tmp/oracle-avx2 && shared/oracle/pin-cpu.sh /tmp/oracle-avx2 haswell
BINS="$(dirname "$ORACLE")/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64"
if [[ "$(cd "$BINS" 2>/dev/null && ls libggml-cpu-*.so)" != "libggml-cpu-haswell.so" ]]; then
  echo "$ORACLE is not pinned to llama.cpp's haswell (AVX2) CPU build; see the comment above ORACLE in $0" >&2
  exit 1
fi
OUT="$ROOT/testdata/convert"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
(cd "$ROOT" && go build -o "$WORK/kiln" ./cmd/kiln)
mkdir -p "$OUT"
DIR="$SHARED/tinystories-656k"

# BOS and kiln's greedy story from BOS (model/hf_test.go tinyStoriesGolden):
# 65 ids, so llama.cpp takes its tiled flash-attention path, as kiln does.
IDS="1,147,201,282,215,286,598,1662,356,499,826,1363,1145,1652,615,242,1482,951,628,499,826,872,921,318,385,628,499,826,617,242,198,1047,425,1939,122,1924,1171,94,303,328,229,521,776,115,1139,312,447,1456,319,115,133,114,100,167,753,1665,361,303,1900,319,467,730,717,532,856"

# record NAME TYPE ORACLE_ARGS... (the GGUF is $WORK/ts-TYPE.gguf)
record() {
  local name="$1" typ="$2"; shift 2
  local sum
  sum="$(sha256sum "$WORK/ts-$typ.gguf" | cut -d' ' -f1)"
  CMD="node llamacpp.mjs $*" TYP="$typ" SUM="$sum" ORACLE_OUT="$(node "$ORACLE" "$@")" node -e '
    const e = process.env, rec = {command: e.CMD.replace(/\S*\/(\S+\.gguf)/g, "$1")};
    rec.convert = {from: "tinystories-656k", type: e.TYP, sha256: e.SUM};
    rec.llama_cpp_cpu = "haswell";
    if (e.CMD.includes(" probs ")) rec.note = "oracle probabilities are llama.cpp softmax at temperature 1 after node-llama-cpp default top-k 40 and top-p 0.95, renormalized over the kept tokens: compare log p - log p(top-1) within the listed tokens";
    rec.oracle = JSON.parse(e.ORACLE_OUT);
    process.stdout.write(JSON.stringify(rec) + "\n");' > "$OUT/$name.json"
  echo "wrote testdata/convert/$name.json" >&2
}

"$WORK/kiln" convert "$DIR" "$WORK/ts-F32.gguf" --type F32 >&2
"$WORK/kiln" convert "$DIR" "$WORK/ts-Q8_0.gguf" --type Q8_0 >&2
record tinystories-656k-F32-greedy F32 greedy "$WORK/ts-F32.gguf" "Once upon a time" -n 64
record tinystories-656k-F32-probs F32 probs "$WORK/ts-F32.gguf" "ids:$IDS" --top 20 --all-positions
record tinystories-656k-Q8_0-probs Q8_0 probs "$WORK/ts-Q8_0.gguf" "ids:$IDS" --top 20 --all-positions

# Tokenize: one oracle run per string; a string llama.cpp throws on is
# recorded with its error (characters outside a vocab without byte tokens).
node -e 'for (const c of require(process.argv[1]).cases) console.log(JSON.stringify(c.text))' \
  "$ROOT/tokenizer/testdata/hf/tinystories-656k.json" > "$WORK/texts"
{
  printf '{"command": "node llamacpp.mjs tokenize tinystories-656k-F32.gguf TEXT (for each text of tokenizer/testdata/hf/tinystories-656k.json)",\n"cases": [\n'
  sep=""
  while IFS= read -r line; do
    text="$(node -e 'process.stdout.write(JSON.parse(process.argv[1]) + "x")' "$line")"
    text="${text%x}" # the x keeps $(...) from dropping trailing newlines
    if res="$(node "$ORACLE" tokenize "$WORK/ts-F32.gguf" "$text" 2>"$WORK/err")"; then
      printf '%s{"text":%s,"oracle":%s}\n' "$sep" "$line" "$res"
    else
      printf '%s{"text":%s,"error":%s}\n' "$sep" "$line" "$(tail -c 300 "$WORK/err" | node -e 'process.stdout.write(JSON.stringify(require("fs").readFileSync(0,"utf8").trim()))')"
    fi
    sep=","
  done < "$WORK/texts"
  printf ']}\n'
} > "$OUT/tinystories-656k-tokenize.json"
echo "wrote testdata/convert/tinystories-656k-tokenize.json" >&2
