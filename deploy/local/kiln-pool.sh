#!/usr/bin/env bash
# kiln-pool.sh start|stop|status: N `kiln serve` replicas behind llm-d's endpoint
# picker (EPP) and kiln-extproc-proxy (deploy/local/extproc-proxy: a streaming
# ext_proc proxy standing in for Envoy), all on 127.0.0.1,
# without Kubernetes. Every process it starts is written to $STATE/pids and
# `stop` ends exactly those, by PID.
#
#   deploy/local/kiln-pool.sh start     # 2 replicas of stories260K, prefix-aware profile
#   curl -s localhost:18080/v1/completions -d '{"model":"stories","prompt":"Once","max_tokens":8}' -i
#   deploy/local/kiln-pool.sh stop
#
# The proxy answers with x-gateway-destination-endpoint: the replica that served.
# A watcher process takes a replica out of the endpoints file while its
# /health does not answer, and puts it back when it does.
# Settings (environment):
#   N=2                      replicas; replica i listens on BASE_PORT+i-1
#   PORTS="p1 p2 ..."        the replicas' ports, one each (overrides N and BASE_PORT)
#   MODEL=PATH               a .gguf or HF folder (default ../shared/models/stories260K.gguf)
#   MODEL_NAME=stories       the name requests use (and the model_name metric label)
#   THREADS=$(nproc)         threads in all, split evenly (at least 1 per replica)
#   BASE_PORT=18001 PROXY_PORT=18080 EPP_GRPC=19002 EPP_HEALTH=19003 EPP_METRICS=19090
#   PROFILE=prefix           prefix: queue + KV + prefix-cache scorers; load: queue + KV only
#   RENDER_URL=http://127.0.0.1:BASE_PORT   where the picker tokenizes (kiln's /render)
#   LLMD_BIN=/tmp/llm-d-bin  where the epp binary is (build: ../shared/scale/build-epp.sh)
#   KILN_BIN=                a kiln binary (default: built from this checkout into $STATE)
#   PROXY_BIN=               a kiln-extproc-proxy binary (default: built from
#                            deploy/local/extproc-proxy, its own Go module, into $STATE)
#   PROXY_ARGS=              more kiln-extproc-proxy flags (-v logs every ext_proc frame)
#   STATE=/tmp/kiln-pool     pids, logs, the endpoints file and the EPP config
#   SERVE_ARGS=              more `kiln serve` flags for every replica
#   EPP_VERBOSITY=2          EPP log level (5 logs each endpoint's scraped metrics)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
N=${N:-2}
MODEL=${MODEL:-$root/../shared/models/stories260K.gguf}
MODEL_NAME=${MODEL_NAME:-stories}
THREADS=${THREADS:-$(nproc)}
BASE_PORT=${BASE_PORT:-18001}
PROXY_PORT=${PROXY_PORT:-18080}
EPP_GRPC=${EPP_GRPC:-19002}
EPP_HEALTH=${EPP_HEALTH:-19003}
EPP_METRICS=${EPP_METRICS:-19090}
PROFILE=${PROFILE:-prefix}
if [ -n "${PORTS:-}" ]; then
  read -r -a ports <<<"$PORTS"
  N=${#ports[@]}
else
  ports=()
  for ((i = 0; i < N; i++)); do ports+=($((BASE_PORT + i))); done
fi
# port I: replica I's (1-based) port.
port() { echo "${ports[$(($1 - 1))]}"; }
RENDER_URL=${RENDER_URL:-http://127.0.0.1:${ports[0]}}
LLMD_BIN=${LLMD_BIN:-/tmp/llm-d-bin}
STATE=${STATE:-/tmp/kiln-pool}
SERVE_ARGS=${SERVE_ARGS:-}
PROXY_ARGS=${PROXY_ARGS:-}
EPP_VERBOSITY=${EPP_VERBOSITY:-2}

die() { echo "kiln-pool: $*" >&2; exit 1; }

# wait_replica I SECONDS: until replica I answers /ready; fails at once when
# its process has exited (a port taken by someone else, a bad flag).
wait_replica() {
  local pid deadline=$((SECONDS + $2))
  pid=$(awk -v n="kiln-$1" '$2 == n {print $1}' "$STATE/pids")
  until curl -fsS -o /dev/null "http://127.0.0.1:$(port "$1")/ready" 2>/dev/null; do
    kill -0 "$pid" 2>/dev/null || { echo "kiln-pool: replica $1 exited:" >&2; tail -n 5 "$STATE/kiln-$1.log" >&2; return 1; }
    [ $SECONDS -lt $deadline ] || return 1
    sleep 0.2
  done
}

# launch NAME CMD...: start CMD in the background, logging to $STATE/NAME.log,
# and record "PID NAME" in $STATE/pids.
launch() {
  local name=$1; shift
  "$@" >"$STATE/$name.log" 2>&1 &
  echo "$! $name" >>"$STATE/pids"
}

# write_endpoints I...: the endpoints file listing replicas I... (1-based).
write_endpoints() {
  {
    if [ $# -eq 0 ]; then echo "endpoints: []"; else echo "endpoints:"; fi
    for i in "$@"; do
      echo "  - {name: kiln-$i, address: \"127.0.0.1\", port: \"$(port "$i")\"}"
    done
  } >"$STATE/endpoints.yaml.tmp"
  mv "$STATE/endpoints.yaml.tmp" "$STATE/endpoints.yaml" # the EPP watches it: replace, never half-write
}

# watch: every second, list in the endpoints file only the replicas whose
# /health answers within a second (what a readiness probe does in
# Kubernetes). The picker applies file edits live; failed metric scrapes
# alone do not take a dead replica out of its routing.
watch() {
  local prev live i
  prev=$(seq -s ' ' 1 "$N")
  while :; do
    live=()
    for i in $(seq 1 "$N"); do
      curl -fsS -m 1 -o /dev/null "http://127.0.0.1:$(port "$i")/health" 2>/dev/null && live+=("$i")
    done
    if [ "${live[*]}" != "$prev" ]; then
      write_endpoints "${live[@]}"
      echo "$(date -u +%FT%TZ) endpoints: ${live[*]:-none}"
      prev="${live[*]}"
    fi
    sleep 1
  done
}

write_config() {
  write_endpoints $(seq 1 "$N")
  local prefix_plugins="" prefix_refs=""
  if [ "$PROFILE" = prefix ]; then
    # token-producer (vllm backend) tokenizes with kiln's own /v1/*/render;
    # approx-prefix-cache-producer hashes those ids in blocks (block size
    # auto-tuned from vllm:cache_config_info) and remembers which replica
    # got each prefix; prefix-cache-scorer prefers the longest match.
    prefix_plugins="  - type: token-producer
    parameters:
      modelName: $MODEL_NAME
      vllm: {url: \"$RENDER_URL\"}
  - type: approx-prefix-cache-producer
  - type: prefix-cache-scorer"
    prefix_refs="      - pluginRef: prefix-cache-scorer
        weight: 3"
  elif [ "$PROFILE" != load ]; then
    die "PROFILE=$PROFILE: want prefix or load"
  fi
  cat >"$STATE/epp-config.yaml" <<EOF
# Written by deploy/local/kiln-pool.sh (PROFILE=$PROFILE).
apiVersion: inference.networking.x-k8s.io/v1alpha1
kind: EndpointPickerConfig
plugins:
  - name: file-disc
    type: file-discovery
    parameters:
      path: $STATE/endpoints.yaml
      watchFile: true
  - type: queue-scorer
  - type: kv-cache-utilization-scorer
  - type: max-score-picker
  - type: single-profile-handler
  - type: openai-parser
$prefix_plugins
schedulingProfiles:
  - name: default
    plugins:
      - pluginRef: queue-scorer
      - pluginRef: kv-cache-utilization-scorer
      - pluginRef: max-score-picker
$prefix_refs
requestHandler:
  parsers:
  - pluginRef: openai-parser
dataLayer:
  discovery:
    pluginRef: file-disc
EOF
}

start() {
  [ ! -s "$STATE/pids" ] || die "$STATE/pids exists: already started? ($0 stop first)"
  [ -x "$LLMD_BIN/epp" ] || die "no $LLMD_BIN/epp: run ../shared/scale/build-epp.sh $LLMD_BIN"
  [ -e "$MODEL" ] || die "no model at $MODEL (set MODEL)"
  [ "$N" -ge 1 ] 2>/dev/null || die "N=$N: want a positive count"
  mkdir -p "$STATE"
  : >"$STATE/pids"
  local kiln=${KILN_BIN:-}
  if [ -z "$kiln" ]; then
    kiln=$STATE/kiln
    (cd "$root" && go build -o "$kiln" ./cmd/kiln)
  fi
  local proxy=${PROXY_BIN:-}
  if [ -z "$proxy" ]; then
    proxy=$STATE/kiln-extproc-proxy
    (cd "$root/deploy/local/extproc-proxy" && go build -o "$proxy" .)
  fi
  local per=$((THREADS / N))
  [ "$per" -ge 1 ] || per=1
  for i in $(seq 1 "$N"); do
    # shellcheck disable=SC2086 # SERVE_ARGS is a list of flags
    launch "kiln-$i" "$kiln" serve --model "$MODEL_NAME=$MODEL" --host 127.0.0.1 --port "$(port "$i")" \
      --threads "$per" --keep-alive=-1s $SERVE_ARGS
  done
  for i in $(seq 1 "$N"); do
    wait_replica "$i" 60 || { stop; die "replica $i (port $(port "$i")) not ready in 60s (see $STATE/kiln-$i.log)"; }
  done
  write_config
  launch epp "$LLMD_BIN/epp" --pool-name local-pool --pool-namespace local --config-file "$STATE/epp-config.yaml" \
    --grpc-port "$EPP_GRPC" --grpc-health-port "$EPP_HEALTH" --metrics-port "$EPP_METRICS" \
    --secure-serving=false --tracing=false --metrics-endpoint-auth=false --enable-pprof=false -v="$EPP_VERBOSITY"
  # Ready once the picker has scraped every replica.
  local deadline=$((SECONDS + 60))
  until curl -fsS "http://127.0.0.1:$EPP_METRICS/metrics" 2>/dev/null | grep -q "^llm_d_epp_ready_endpoints{.*} $N\$"; do
    [ $SECONDS -lt $deadline ] || { stop; die "the EPP did not see $N ready endpoints in 60s (see $STATE/epp.log)"; }
    sleep 0.5
  done
  # shellcheck disable=SC2086 # PROXY_ARGS is a list of flags
  launch proxy "$proxy" -epp "127.0.0.1:$EPP_GRPC" -listen "127.0.0.1:$PROXY_PORT" $PROXY_ARGS
  local deadline=$((SECONDS + 20))
  # A bare TCP connect: an HTTP probe would go through the picker as a request.
  until (exec 3<>"/dev/tcp/127.0.0.1/$PROXY_PORT") 2>/dev/null; do
    [ $SECONDS -lt $deadline ] || { stop; die "the proxy did not listen in 20s (see $STATE/proxy.log)"; }
    sleep 0.2
  done
  launch watch env PORTS="${ports[*]}" STATE="$STATE" bash "$0" _watch
  echo "kiln-pool: $N replicas on 127.0.0.1 ports ${ports[*]} ($per threads each), EPP metrics :$EPP_METRICS, proxy http://127.0.0.1:$PROXY_PORT (PROFILE=$PROFILE)"
}

# stop: SIGTERM each recorded PID (proxy and picker first, replicas last),
# wait up to 15 s for it, then SIGKILL what is left.
stop() {
  [ -f "$STATE/pids" ] || { echo "kiln-pool: nothing started ($STATE/pids absent)"; return 0; }
  local pid name
  tac "$STATE/pids" | while read -r pid name; do
    kill -0 "$pid" 2>/dev/null || continue
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 75); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    if kill -0 "$pid" 2>/dev/null; then
      echo "kiln-pool: $name ($pid) ignored SIGTERM for 15s; SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done
  rm -f "$STATE/pids"
  echo "kiln-pool: stopped"
}

status() {
  [ -f "$STATE/pids" ] || { echo "kiln-pool: not started"; return 1; }
  local pid name rc=0
  while read -r pid name; do
    if kill -0 "$pid" 2>/dev/null; then echo "$name $pid running"; else echo "$name $pid gone"; rc=1; fi
  done <"$STATE/pids"
  return $rc
}

case ${1:-} in
start) start ;;
stop) stop ;;
status) status ;;
_watch) watch ;;
*) die "usage: $0 start|stop|status (settings in the environment; see the head of this file)" ;;
esac
