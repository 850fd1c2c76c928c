#!/usr/bin/env bash
# run.sh [--url BASE --model NAME [--key KEY] | --llama-server BIN]: the
# client-compatibility cases (cases.mjs) with the openai, Vercel AI SDK,
# LangChain JS and Anthropic Node SDKs.
#
#   (no flags)          build kiln, serve ../shared/models/stories260K.gguf
#                       on a free loopback port and fail when a case fails
#                       (.ci/run runs it so)
#   --url BASE          drive that server instead (BASE is the URL before
#                       /v1), only counting: exit 0 whatever failed
#   --llama-server BIN  start llama.cpp's server on the same model and
#                       template (-c 2048 --jinja) and count its passes
#
# stories260K has no chat template: kiln and llama-server are both given
# chatml-tools.jinja (ChatML with Hermes / Qwen 2.5 tool calls). Skips with
# a message when node or the model is absent. npm ci needs the npm
# registry (CI has it).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
model=$root/../shared/models/stories260K.gguf
template=$here/chatml-tools.jinja
url="" name="" key=none llama=""
while [ $# -gt 0 ]; do
  case "$1" in
    --url) url=$2; shift 2 ;;
    --model) name=$2; shift 2 ;;
    --key) key=$2; shift 2 ;;
    --llama-server) llama=$2; shift 2 ;;
    *) echo "usage: run.sh [--url BASE --model NAME [--key KEY] | --llama-server BIN]" >&2; exit 2 ;;
  esac
done
command -v node >/dev/null && command -v npm >/dev/null || { echo "clients: skipped (node/npm not installed)"; exit 0; }
(cd "$here" && npm ci --silent --no-audit --no-fund)
if [ -n "$url" ]; then
  [ -n "$name" ] || { echo "--url needs --model" >&2; exit 2; }
  CASE_TIMEOUT_MS=120000 COUNT_ONLY=1 node "$here/cases.mjs" "$url" "$key" "$name"
  exit 0
fi
[ -f "$model" ] || { echo "clients: skipped ($model absent)"; exit 0; }
tmp=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && { kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; }; rm -rf "$tmp"' EXIT
if [ -n "$llama" ]; then
  port=$(node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })')
  "$llama" --version 2>&1 | grep -i version || true
  "$llama" -m "$model" --host 127.0.0.1 --port "$port" -c 2048 --jinja --chat-template-file "$template" -t 1 >"$tmp/log" 2>&1 &
  pid=$!
  for _ in $(seq 100); do
    curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break
    sleep 0.1
  done
  CASE_TIMEOUT_MS=120000 COUNT_ONLY=1 node "$here/cases.mjs" "http://127.0.0.1:$port" none stories
  exit 0
fi
(cd "$root" && go build -o "$tmp/kiln" ./cmd/kiln)
"$tmp/kiln" serve --model "stories=$model" --chat-template "$template" --port 0 --api-key ci-key --kv-cache-memory 64MiB 2>"$tmp/log" &
pid=$!
url=""
for _ in $(seq 100); do
  url=$(grep -o 'url=http://[0-9.:]*' "$tmp/log" | head -1 | cut -d= -f2 || true)
  [ -n "$url" ] && break
  sleep 0.1
done
[ -n "$url" ] || { echo "kiln serve did not start:"; cat "$tmp/log"; exit 1; }
node "$here/cases.mjs" "$url" ci-key stories
