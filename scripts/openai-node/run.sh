#!/usr/bin/env bash
# run.sh: build kiln, serve ../shared/models/stories260K.gguf on a free
# loopback port, and drive it with the official OpenAI Node SDK (check.mjs).
# Skips with a message when node or the model is absent. npm ci needs the
# npm registry (CI has it).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
model=$root/../shared/models/stories260K.gguf
command -v node >/dev/null && command -v npm >/dev/null || { echo "openai-node: skipped (node/npm not installed)"; exit 0; }
[ -f "$model" ] || { echo "openai-node: skipped ($model absent)"; exit 0; }
(cd "$here" && npm ci --silent --no-audit --no-fund)
tmp=$(mktemp -d)
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; rm -rf "$tmp"' EXIT
(cd "$root" && go build -o "$tmp/kiln" ./cmd/kiln)
"$tmp/kiln" serve --model "stories=$model" --port 0 --api-key ci-key --kv-cache-memory 64MiB 2>"$tmp/log" &
pid=$!
for _ in $(seq 100); do
  url=$(grep -o 'url=http://[0-9.:]*' "$tmp/log" | head -1 | cut -d= -f2 || true)
  [ -n "$url" ] && break
  sleep 0.1
done
[ -n "$url" ] || { echo "kiln serve did not start:"; cat "$tmp/log"; exit 1; }
node "$here/check.mjs" "$url" ci-key stories
kill -TERM $pid
wait $pid
grep -q 'msg=stopped' "$tmp/log" || { echo "kiln serve did not stop cleanly:"; tail "$tmp/log"; exit 1; }
