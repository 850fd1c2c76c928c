#!/usr/bin/env bash
# soak.sh [DURATION] [OUT.csv]: the server soak (server.TestSoak) for
# DURATION (default 10m): 256 concurrent clients, a third disconnecting at
# random moments; writes the RSS/goroutine curve as CSV (default
# /tmp/kiln-soak.csv). CI runs the same test for 30s.
set -euo pipefail
cd "$(dirname "$0")/.."
dur=${1:-10m}
out=${2:-/tmp/kiln-soak.csv}
KILN_SOAK=$dur KILN_SOAK_OUT=$out go test -count=1 -run '^TestSoak$' -v -timeout 0 ./server/ | grep -v '^=== RUN'
echo "RSS curve: $out"
