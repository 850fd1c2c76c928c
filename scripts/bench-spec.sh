#!/usr/bin/env bash
# bench-spec.sh TARGET.gguf DRAFT.gguf [OUTDIR]: single-stream decode with
# and without draft-model speculative decoding, kiln serve against
# llama.cpp's llama-server (--model-draft, --spec-type draft-simple) on the
# same pair of models, same machine, same workload: `kiln bench serve`, one
# request at a time (random 64-token prompts, 128 tokens, greedy), and 16
# at a time (speculation's policy at work). The four servers run alone, in
# turn; ROUNDS (default 1) alternates them. Prints each run's output token
# throughput and median TPOT; tables in OUTDIR/*.txt (default
# /tmp/bench-spec). Env: KILN (binary, default built here), LLAMA_SERVER
# (/tmp/llama-bin/llama-server), THREADS (2), K (4 drafted tokens),
# PROMPTS (8), CONC ("1 16").
set -euo pipefail
target=${1:?usage: bench-spec.sh TARGET.gguf DRAFT.gguf [OUTDIR]}
draft=${2:?usage: bench-spec.sh TARGET.gguf DRAFT.gguf [OUTDIR]}
out=${3:-/tmp/bench-spec}
mkdir -p "$out"
root=$(cd "$(dirname "$0")/.." && pwd)
kiln=${KILN:-}
if [ -z "$kiln" ]; then kiln=$out/kiln; (cd "$root" && go build -o "$kiln" ./cmd/kiln); fi
llama=${LLAMA_SERVER:-/tmp/llama-bin/llama-server}
threads=${THREADS:-2}
k=${K:-4}
prompts=${PROMPTS:-8}
port=18095

wait_up() { for _ in $(seq 900); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && return 0; sleep 0.2; done; echo "server did not come up" >&2; return 1; }
# run NAME ROUND CMD...: start a server, bench it at each concurrency, stop it.
run() {
  local name=$1 r=$2; shift 2
  "$@" >"$out/$name-r$r.log" 2>&1 &
  local pid=$!
  wait_up
  for c in ${CONC:-1 16}; do
    "$kiln" bench serve --base-url "http://127.0.0.1:$port" --model m --tokenizer "$target" --seed "$r" \
      --random-input-len 64 --random-output-len 128 --num-prompts $((c == 1 ? prompts : 2 * c)) --max-concurrency "$c" \
      >"$out/$name-c$c-r$r.txt" 2>/dev/null
    echo "$name c=$c r=$r: $(grep -E 'Output token throughput|Median TPOT' "$out/$name-c$c-r$r.txt" | tr -s ' ' | paste -sd ';')"
  done
  # kiln's acceptance: vLLM's spec_decode counters on /metrics.
  curl -fsS "http://127.0.0.1:$port/metrics" 2>/dev/null | grep -E '^vllm:spec_decode_num_(drafts|draft_tokens|accepted_tokens)_total' |
    sed "s/^/  $name r=$r /" || true
  kill -TERM $pid; wait $pid || true
}
kserve=("$kiln" serve --model "m=$target" --port $port --threads "$threads" --max-num-seqs 16 --max-model-len 2048 --keep-alive -1s)
lserve=("$llama" -m "$target" --host 127.0.0.1 --port $port -t "$threads" -c 4096 --parallel 16 -kvu --alias m)
for r in $(seq "${ROUNDS:-1}"); do
  run kiln "$r" "${kserve[@]}"
  run kiln-draft "$r" "${kserve[@]}" --spec draft --draft "$draft" --num-speculative-tokens "$k"
  run llama "$r" "${lserve[@]}"
  run llama-draft "$r" "${lserve[@]}" --model-draft "$draft" --spec-type draft-simple --spec-draft-n-max "$k" -td "$threads"
done
# llama-server logs its acceptance per request ("draft acceptance rate").
grep -h -i 'acceptance' "$out"/llama-draft-r*.log | tail -n 3 || true
