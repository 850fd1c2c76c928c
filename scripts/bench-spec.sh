#!/usr/bin/env bash
# bench-spec.sh TARGET.gguf DRAFT.gguf [OUTDIR]: decode speed with and
# without draft-model speculative decoding, kiln against llama.cpp's
# llama-server (--model-draft, --spec-type draft-simple) on the same pair
# of models, same machine, alternated ROUNDS times (default 3):
#   kiln:  `kiln bench TARGET --prompt 64 --gen 128` (single stream) and
#          `--parallel 16 --gen 64` (16 streams: the policy at work), each
#          without and with `--spec draft --draft DRAFT`; decode tok/s.
#   llama: llama-server's own timing of a 128-token greedy completion of a
#          64-token prompt (POST /completion, timings.predicted_per_second,
#          draft_n / draft_n_accepted), median of the 6 prompts' completions it returns, single stream.
#          (Its /v1 endpoints refuse random-weight output that ends inside
#          a UTF-8 sequence, so `kiln bench serve` cannot drive it here.)
# Env: KILN (binary, default built here), LLAMA_SERVER
# (/tmp/llama-bin/llama-server), THREADS (2), K (4 drafted tokens),
# KILN_SPEC_ARGS (more kiln flags, e.g. --spec-adaptive=false).
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
port=18095
spec=(--spec draft --draft "$draft" --num-speculative-tokens "$k" ${KILN_SPEC_ARGS:-})

kbench() { # NAME ARGS...
  local name=$1; shift
  "$kiln" bench "$target" --threads "$threads" "$@" >"$out/$name.txt" 2>&1
  echo "$name: $(grep -E '^(decode|spec)' "$out/$name.txt" | tr -s ' ' | paste -sd ' ')"
}
lserver() { # NAME ARGS...: llama-server single-stream timings over 4 prompts
  local name=$1; shift
  "$llama" -m "$target" --host 127.0.0.1 --port $port -t "$threads" -c 2048 --parallel 1 --alias m "$@" \
    >"$out/$name.log" 2>&1 &
  local pid=$!
  for _ in $(seq 900); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.2; done
  : >"$out/$name.jsonl"
  for p in 1 2 3 4 5 6; do
    # 64 token ids from a fixed pseudo-random sequence per prompt.
    ids=$(awk -v s="$p" 'BEGIN{srand(s); for(i=0;i<64;i++) printf "%s%d", (i?",":""), 100+int(rand()*31000)}')
    # A completion that ends inside a UTF-8 sequence is answered 500 by
    # llama-server's output parser: that prompt is skipped (said on stderr).
    curl -sS "http://127.0.0.1:$port/completion" -H 'Content-Type: application/json' \
      -d "{\"prompt\":[$ids],\"n_predict\":128,\"ignore_eos\":true,\"temperature\":0,\"cache_prompt\":false}" |
      python3 -c 'import json,sys; r=json.load(sys.stdin); t=r.get("timings")
if t is None: sys.exit("llama-server: %s" % json.dumps(r)[:200])
print(json.dumps({"tps": t["predicted_per_second"], "n": t["predicted_n"], "draft_n": t.get("draft_n", 0), "accepted": t.get("draft_n_accepted", 0)}))' \
      >>"$out/$name.jsonl" || true
  done
  kill -TERM $pid; wait $pid || true
  echo "$name: $(python3 -c 'import json,sys,statistics as s; r=[json.loads(l) for l in open(sys.argv[1])]; d=sum(x["draft_n"] for x in r); a=sum(x["accepted"] for x in r); print("decode %.2f tok/s (median of %d), draft %d tokens, %d accepted (%.0f%%)" % (s.median(x["tps"] for x in r), len(r), d, a, 100*a/d if d else 0))' "$out/$name.jsonl")"
}
for r in $(seq "${ROUNDS:-3}"); do
  kbench "kiln-r$r" --prompt 64 --gen 128
  kbench "kiln-draft-r$r" --prompt 64 --gen 128 "${spec[@]}"
  lserver "llama-r$r"
  lserver "llama-draft-r$r" --model-draft "$draft" --spec-type draft-simple --spec-draft-n-max "$k" -td "$threads"
  kbench "kiln-16-r$r" --prompt 64 --gen 64 --parallel 16
  kbench "kiln-16-draft-r$r" --prompt 64 --gen 64 --parallel 16 "${spec[@]}"
done
