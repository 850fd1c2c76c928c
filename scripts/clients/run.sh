#!/usr/bin/env bash
# run.sh [--url BASE --model NAME [--key KEY]]: the client-compatibility
# cases (cases.mjs) with the openai, Vercel AI SDK, LangChain JS and
# Anthropic SDKs. Without --url it builds kiln, serves
# ../shared/models/stories260K.gguf on a free loopback port and fails when
# a case fails (.ci/run runs it so); with --url it drives that server
# instead (llama-server, vLLM: BASE is the URL before /v1) and only counts,
# exiting 0 whatever failed. Skips with a message when node or the model is
# absent. npm ci needs the npm registry (CI has it).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
url="" name="" key=none
while [ $# -gt 0 ]; do
  case "$1" in
    --url) url=$2; shift 2 ;;
    --model) name=$2; shift 2 ;;
    --key) key=$2; shift 2 ;;
    *) echo "usage: run.sh [--url BASE --model NAME [--key KEY]]" >&2; exit 2 ;;
  esac
done
command -v node >/dev/null && command -v npm >/dev/null || { echo "clients: skipped (node/npm not installed)"; exit 0; }
(cd "$here" && npm ci --silent --no-audit --no-fund)
if [ -n "$url" ]; then
  [ -n "$name" ] || { echo "--url needs --model" >&2; exit 2; }
  COUNT_ONLY=1 node "$here/cases.mjs" "$url" "$key" "$name"
  exit 0
fi
model=$root/../shared/models/stories260K.gguf
[ -f "$model" ] || { echo "clients: skipped ($model absent)"; exit 0; }
tmp=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && { kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; }; rm -rf "$tmp"' EXIT
(cd "$root" && go build -o "$tmp/kiln" ./cmd/kiln)
"$tmp/kiln" serve --model "stories=$model" --port 0 --api-key ci-key --kv-cache-memory 64MiB 2>"$tmp/log" &
pid=$!
url=""
for _ in $(seq 100); do
  url=$(grep -o 'url=http://[0-9.:]*' "$tmp/log" | head -1 | cut -d= -f2 || true)
  [ -n "$url" ] && break
  sleep 0.1
done
[ -n "$url" ] || { echo "kiln serve did not start:"; cat "$tmp/log"; exit 1; }
node "$here/cases.mjs" "$url" ci-key stories
