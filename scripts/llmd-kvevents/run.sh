#!/usr/bin/env bash
# run.sh: kiln's KV-cache events through llm-d-kv-cache v0.9.0's own
# consumer (main.go says what it checks). A separate module: it pulls
# llm-d's Kubernetes dependencies, which kiln's go.mod does not carry, so
# the first run needs the module proxy (or a warm module cache) and a few
# minutes to compile. Not part of .ci/run for that reason.
set -euo pipefail
cd "$(dirname "$0")"
GOFLAGS=-mod=mod go run .
