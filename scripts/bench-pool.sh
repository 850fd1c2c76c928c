#!/usr/bin/env bash
# bench-pool.sh [OUTDIR]: the scale-out figures of deploy/README.md, all on
# this machine's loopback, driven by `kiln bench serve`:
#   prefix  - prefix-aware routing vs load-only routing over 2 replicas on a
#             shared-prefix workload (vLLM's prefix-repetition dataset:
#             NUM_PREFIXES prefixes of PREFIX_LEN tokens, 8 requests each,
#             interleaved), each replica's KV cache holding about 60% of
#             what all prefixes need (half of them and room to work), so
#             only a router that keeps each prefix on one replica makes the
#             prefix cache pay. Reports median TTFT per profile.
#   scale   - the same random workload on 1 replica with THREADS threads
#             (direct) and on 2 replicas with THREADS/2 each behind the
#             picker and the proxy: throughput of the whole machine.
#   hop     - 1 replica, one request at a time, direct vs through proxy +
#             picker (prefix and load profiles): the routing hop's added
#             TTFT (p50).
# Writes OUTDIR/*.txt and *.json (default /tmp/bench-pool). Env: KILN
# (binary, default built here), MODEL (default ../shared/models/
# stories260K.gguf), MODEL_NAME (stories), THREADS (2), ROUNDS (1: each
# part's runs alternate ROUNDS times), PARTS ("prefix scale hop"),
# PREFIX_LEN (1024), NUM_PREFIXES (10), KV (the prefix part's
# --kv-cache-memory per replica, default 4MiB: 409 blocks of stories260K),
# LLMD_BIN (the picker, /tmp/llm-d-bin). Ports 18101.. and 19102.. .
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-/tmp/bench-pool}
mkdir -p "$out"
kiln=${KILN:-}
if [ -z "$kiln" ]; then kiln=$out/kiln; (cd "$root" && go build -o "$kiln" ./cmd/kiln); fi
model=${MODEL:-$root/../shared/models/stories260K.gguf}
name=${MODEL_NAME:-stories}
threads=${THREADS:-2}
rounds=${ROUNDS:-1}
parts=${PARTS:-prefix scale hop}
prefix_len=${PREFIX_LEN:-1024}
num_prefixes=${NUM_PREFIXES:-10}
kv=${KV:-4MiB}
export KILN_BIN=$kiln MODEL=$model MODEL_NAME=$name PROXY_PORT=18180 EPP_GRPC=19102 EPP_HEALTH=19103 EPP_METRICS=19190
export STATE=$out/pool
pool() { "$root/deploy/local/kiln-pool.sh" "$@"; }
trap 'pool stop >/dev/null 2>&1 || true' EXIT

# bench RUN URL ARGS...: one `kiln bench serve` run, its table in RUN.txt.
bench() {
  local run=$1 url=$2; shift 2
  "$kiln" bench serve --base-url "$url" --model "$name" --tokenizer "$model" --result-file "$out/$run.json" "$@" \
    >"$out/$run.txt"
  echo "$run: $(grep -E 'Median TTFT|Output token throughput|Request throughput' "$out/$run.txt" | tr -s ' ' | paste -sd ';')"
}

# single THREADS PORT: one replica alone (no picker), for direct runs.
single() {
  "$kiln" serve --model "$name=$model" --host 127.0.0.1 --port "$2" --threads "$1" --keep-alive=-1s \
    ${SERVE_ARGS:-} 2>"$out/single-$2.log" &
  echo $! >"$out/single.pid"
  for _ in $(seq 300); do curl -fsS -o /dev/null "http://127.0.0.1:$2/ready" 2>/dev/null && return 0; sleep 0.2; done
  echo "replica on :$2 not ready" >&2; return 1
}
single_stop() { kill -TERM "$(cat "$out/single.pid")"; wait "$(cat "$out/single.pid")" 2>/dev/null || true; }

for r in $(seq "$rounds"); do
  for part in $parts; do
    case $part in
    prefix)
      for profile in prefix load; do
        PORTS="18101 18102" THREADS=$threads PROFILE=$profile SERVE_ARGS="--kv-cache-memory $kv" pool start >/dev/null
        bench "prefix-$profile-r$r" http://127.0.0.1:18180 --dataset prefix-repetition --prefix-len "$prefix_len" \
          --suffix-len 32 --num-prefixes "$num_prefixes" --output-len 8 --num-prompts $((num_prefixes * 8)) --max-concurrency 2
        for p in 18101 18102; do
          curl -fsS "http://127.0.0.1:$p/metrics" | grep -E '^vllm:prefix_cache_(queries|hits)_total' | sed "s/^/  :$p /"
        done
        pool stop >/dev/null
      done
      ;;
    scale)
      single "$threads" 18101
      bench "scale-1x$threads-r$r" http://127.0.0.1:18101 --random-input-len 128 --random-output-len 64 --num-prompts 64 --max-concurrency 16
      single_stop
      PORTS="18101 18102" THREADS=$threads PROFILE=load pool start >/dev/null
      bench "scale-2x$((threads / 2))-r$r" http://127.0.0.1:18180 --random-input-len 128 --random-output-len 64 --num-prompts 64 --max-concurrency 16
      pool stop >/dev/null
      ;;
    hop)
      # Directly and through the proxy the replica is the same process (a
      # pool of one), so the difference is the proxy and the picker (with
      # the prefix profile, also its call to the replica's /render).
      PORTS="18101" THREADS=$threads PROFILE=prefix pool start >/dev/null
      bench "hop-direct-r$r" http://127.0.0.1:18101 --random-input-len 128 --random-output-len 16 --num-prompts 50 --max-concurrency 1 --seed 1
      bench "hop-prefix-r$r" http://127.0.0.1:18180 --random-input-len 128 --random-output-len 16 --num-prompts 50 --max-concurrency 1 --seed 2
      pool stop >/dev/null
      PORTS="18101" THREADS=$threads PROFILE=load pool start >/dev/null
      bench "hop-load-r$r" http://127.0.0.1:18180 --random-input-len 128 --random-output-len 16 --num-prompts 50 --max-concurrency 1 --seed 3
      pool stop >/dev/null
      ;;
    *) echo "bench-pool: unknown part $part" >&2; exit 1 ;;
    esac
  done
done
