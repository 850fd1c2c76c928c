#!/usr/bin/env bash
# hostile-grammar.sh KILN MODEL: the structured-output denial-of-service
# figures of issue 20, against a fresh `KILN serve --model m=MODEL` per
# scenario (so each peak RSS, /proc's VmHWM, is that scenario's own):
#   huge:  4 concurrent 5 MB guided_json enums (10,000 strings of 500 letters)
#   edge:  4 concurrent 250 KB enums (2,400 x 100 letters: over the compile budget)
#   cache: 8 different 1 MB enums (2,000 x 500, the report's), then 8 different
#          100 KB enums (1,000 x 100, each accepted), one by one, then idle 5 s:
#          live heap, RSS and kiln:grammar_cache_bytes after (CACHE_FLAGS, e.g.
#          "--grammar-cache-memory 32MiB", are passed to this server only)
#   gap:   a stream loop's worst inter-token gap while 2 x 100 KB and 2 x 250 KB
#          enums compile
# Prints one line per scenario. Needs python3 and curl. An older kiln without
# the grammar limits can be measured the same way (compare two binaries).
set -euo pipefail
kiln=${1:?usage: hostile-grammar.sh KILN MODEL}
model=${2:?usage: hostile-grammar.sh KILN MODEL}
port=${PORT:-18123}
tmp=$(mktemp -d)
trap 'kill $pid 2>/dev/null || true; rm -rf "$tmp"' EXIT
pid=

gen() { # N LEN SEED OUT
  python3 - "$@" <<'EOF'
import json, random, sys
n, length, seed, out = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
r = random.Random(seed)
enum = [''.join(r.choice('abcdefghijklmnopqrstuvwxyz') for _ in range(length)) for _ in range(n)]
json.dump({"model": "m", "prompt": "Once", "max_tokens": 5, "guided_json": {"enum": enum}}, open(out, "w"))
EOF
}
serve() {
  "$kiln" serve --model "m=$model" --port "$port" "$@" > "$tmp/serve.log" 2>&1 &
  pid=$!
  for _ in $(seq 100); do curl -sf "localhost:$port/ready" > /dev/null && return; sleep 0.1; done
  echo "server did not start"; cat "$tmp/serve.log"; exit 1
}
stop() { kill "$pid"; wait "$pid" 2>/dev/null || true; }
hwm() { awk '/VmHWM/ {printf "%.0f MiB", $2/1024}' "/proc/$pid/status"; }
rss() { awk '/VmRSS/ {printf "%.0f MiB", $2/1024}' "/proc/$pid/status"; }
post() { curl -s -o "$tmp/out.$RANDOM" -w '%{http_code} ' "localhost:$port/v1/completions" -H 'Content-Type: application/json' -d @"$1"; }

gen 10000 500 1 "$tmp/huge.json"
for s in 1 2 3 4; do gen 2400 100 "$s" "$tmp/edge$s.json"; done
for s in 1 2 3 4 5 6 7 8; do gen 1000 100 "$((s + 10))" "$tmp/ok$s.json"; gen 2000 500 "$((s + 20))" "$tmp/mb$s.json"; done

serve
start=$(date +%s.%N)
codes=$(for i in 1 2 3 4; do post "$tmp/huge.json" & done; wait)
echo "huge (4 x 5 MB at once): statuses $codes in $(echo "$(date +%s.%N) - $start" | bc) s, peak RSS $(hwm)"
stop

serve
start=$(date +%s.%N)
codes=$(for i in 1 2 3 4; do post "$tmp/edge$i.json" & done; wait)
echo "edge (4 x 250 KB at once): statuses $codes in $(echo "$(date +%s.%N) - $start" | bc) s, peak RSS $(hwm)"
start=$(date +%s.%N)
codes=$(post "$tmp/edge1.json")
echo "edge retry: status $codes in $(echo "$(date +%s.%N) - $start" | bc) s"
stop

# shellcheck disable=SC2086
serve ${CACHE_FLAGS:-}
codes=$(for i in 1 2 3 4 5 6 7 8; do post "$tmp/mb$i.json"; done)
codes2=$(for i in 1 2 3 4 5 6 7 8; do post "$tmp/ok$i.json"; done)
sleep 5
heap=$(curl -s "localhost:$port/metrics" | awk '/^go_memstats_heap_inuse_bytes/ {printf "%.0f MiB", $2/1048576}')
cached=$(curl -s "localhost:$port/metrics" | awk '/^kiln:grammar_cache_bytes/ {printf "%.1f MiB", $2/1048576}')
echo "cache (8 x 1 MB: $codes; 8 x 100 KB: $codes2): after 5 s idle heap in use $heap, RSS $(rss), peak $(hwm), grammar cache ${cached:-not reported}"
stop

serve
python3 - "$port" > "$tmp/gap" <<'EOF' &
import http.client, json, sys, time
port = int(sys.argv[1]); worst = 0; n = 0; t0 = time.time()
while time.time() - t0 < 8:
    c = http.client.HTTPConnection('127.0.0.1', port)
    c.request('POST', '/v1/completions', json.dumps({"model": "m", "prompt": "Once upon a time", "max_tokens": 200, "stream": True, "ignore_eos": True}), {'Content-Type': 'application/json'})
    last = None
    for line in c.getresponse():
        if line.startswith(b'data: {'):
            now = time.time()
            if last is not None: worst = max(worst, now - last)
            last = now; n += 1
    c.close()
print(f"{n} tokens streamed, worst gap {worst * 1000:.0f} ms")
EOF
gpid=$!
sleep 2
codes=$(for f in ok1 ok2 edge1 edge2; do post "$tmp/$f.json" & done; wait)
wait $gpid
echo "gap (stream loop while 2 x 100 KB + 2 x 250 KB compile, statuses $codes): $(cat "$tmp/gap")"
stop
