#!/usr/bin/env bash
# bench-serve.sh MODEL.gguf [OUTDIR]: kiln serve against llama.cpp's
# llama-server on the same model, same machine, same workload, driven by
# `kiln bench serve` (random 128-in / 64-out token ids, concurrency sweep
# 1,4,16,64). Each server runs alone; ROUNDS (default 1) alternates them.
# Writes OUTDIR/{kiln,llama}-rN.json and .svg (default /tmp/bench-serve).
# Env: KILN (binary, default: built here), LLAMA_SERVER (default
# /tmp/llama-bin/llama-server, from shared/oracle/build-llama-server.sh),
# THREADS (2), CONC (1,4,16,64), PROMPTS (8,16,48,128 per sweep point).
set -euo pipefail
model=${1:?usage: bench-serve.sh MODEL.gguf [OUTDIR]}
out=${2:-/tmp/bench-serve}
mkdir -p "$out"
root=$(cd "$(dirname "$0")/.." && pwd)
kiln=${KILN:-}
if [ -z "$kiln" ]; then kiln=$out/kiln; (cd "$root" && go build -o "$kiln" ./cmd/kiln); fi
llama=${LLAMA_SERVER:-/tmp/llama-bin/llama-server}
threads=${THREADS:-2}
conc=${CONC:-1,4,16,64}
prompts=${PROMPTS:-8,16,48,128}
maxc=$(tr , '\n' <<<"$conc" | sort -n | tail -1)
port=18090

wait_up() { for _ in $(seq 600); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && return 0; sleep 0.2; done; echo "server did not come up" >&2; return 1; }
bench() { # NAME ROUND
  "$kiln" bench serve --base-url "http://127.0.0.1:$port" --model m --tokenizer "$model" \
    --random-input-len 128 --random-output-len 64 --max-concurrency "$conc" --num-prompts "$prompts" \
    --result-file "$out/$1-r$2.json" --chart "$out/$1-r$2.svg" | tee "$out/$1-r$2.txt"
}
for r in $(seq "${ROUNDS:-1}"); do
  "$kiln" serve --model "m=$model" --port $port --threads "$threads" --max-num-seqs "$maxc" --max-model-len 2048 \
    --keep-alive -1s 2>"$out/kiln-serve-r$r.log" &
  pid=$!; wait_up; bench kiln "$r"; kill -TERM $pid; wait $pid || true
  "$llama" -m "$model" --host 127.0.0.1 --port $port -t "$threads" -c $((maxc * 256)) --parallel "$maxc" -kvu \
    --alias m >"$out/llama-server-r$r.log" 2>&1 &
  pid=$!; wait_up; bench llama "$r"; kill -TERM $pid; wait $pid || true
done
