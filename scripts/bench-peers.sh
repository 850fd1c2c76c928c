#!/usr/bin/env bash
# bench-peers.sh: kiln against llama.cpp's native llama-bench and
# ik_llama.cpp's llama-bench (with and without run-time repacking, -rtr 1),
# side by side on the same machine in the same minutes: the table of
# issues 22 and 26 in BENCHMARKS.md.
#
# Models are made once by `kiln synth` (random weights, real shapes) into
# $MODELS. For each model every engine runs once per round, engines
# alternated, $RUNS rounds; each run measures prefill of $PROMPT tokens and
# decode of $GEN tokens after it (kiln bench), or pp$PROMPT and tg$GEN
# (llama-bench, -r 1). The table gives medians and kiln's ratio to each peer.
#
# Needs: go, jq; llama-bench from ../shared/oracle/build-llama-server.sh
# (default /tmp/llama-bin/llama-bench) and/or ik_llama.cpp's from
# build-ik-llama.sh (default /tmp/ik-bin/llama-bench); a missing peer is
# left out of the table. ../shared/models/llama-2-tiny-random.gguf gives
# the vocabulary.
#
# With PARALLEL=N (N > 1) every engine serves N sequences at once and the
# figures are aggregate tokens/s: kiln bench --parallel N; llama.cpp through
# the oracle's `bench --parallel N` (llama-bench has no parallel sequences);
# ik_llama.cpp's llama-batched-bench -npl N (S_PP and S_TG), with and
# without -rtr 1: issue 26's 16-stream comparison.
#
# Usage: scripts/bench-peers.sh
#        MODELSPECS="qwen3-30b-a3b:Q4_0:6 qwen3-30b-a3b:Q4_K:6" GEN=32 scripts/bench-peers.sh
#        PARALLEL=16 MODELSPECS="tinyllama-1.1b:Q8_0" scripts/bench-peers.sh
# Environment: MODELSPECS (SHAPE:TYPE[:LAYERS] ..., default the TinyLlama-1.1B
#   shape in Q8_0 Q4_0 Q4_K Q5_K Q6_K), RUNS (3), THREADS (2), PROMPT (128),
#   GEN (32), PARALLEL (1), MODELS (/tmp/perf), LLAMA_BENCH, IK_BENCH,
#   IK_BATCHED (ik's llama-batched-bench), ORACLE (the oracle's install,
#   /tmp/oracle), KILN (a kiln binary; default built from this checkout),
#   KILN_KERNELS (passed through), SHARED.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
MODELSPECS=${MODELSPECS:-"tinyllama-1.1b:Q8_0 tinyllama-1.1b:Q4_0 tinyllama-1.1b:Q4_K tinyllama-1.1b:Q5_K tinyllama-1.1b:Q6_K"}
RUNS=${RUNS:-3}
THREADS=${THREADS:-2}
PROMPT=${PROMPT:-128}
GEN=${GEN:-32}
MODELS=${MODELS:-/tmp/perf}
LLAMA_BENCH=${LLAMA_BENCH:-/tmp/llama-bin/llama-bench}
IK_BENCH=${IK_BENCH:-/tmp/ik-bin/llama-bench}
PARALLEL=${PARALLEL:-1}
IK_BATCHED=${IK_BATCHED:-$(dirname "$IK_BENCH")/llama-batched-bench}
ORACLE=${ORACLE:-/tmp/oracle}
SHARED=${SHARED:-$root/../shared/models}

for tool in go jq; do
	command -v "$tool" >/dev/null || { echo "bench-peers.sh: $tool not found" >&2; exit 1; }
done
mkdir -p "$MODELS"
if [[ -z ${KILN:-} ]]; then
	KILN=$MODELS/kiln-bench-peers
	(cd "$root" && go build -o "$KILN" ./cmd/kiln)
fi

engines=(kiln)
if ((PARALLEL > 1)); then
	[[ -f $ORACLE/llamacpp.mjs ]] && engines+=(llama) || echo "bench-peers.sh: no $ORACLE/llamacpp.mjs: llama.cpp left out" >&2
	[[ -x $IK_BATCHED ]] && engines+=(ik ik-rtr) || echo "bench-peers.sh: no $IK_BATCHED: ik_llama.cpp left out" >&2
else
	[[ -x $LLAMA_BENCH ]] && engines+=(llama) || echo "bench-peers.sh: no $LLAMA_BENCH: llama.cpp left out" >&2
	[[ -x $IK_BENCH ]] && engines+=(ik ik-rtr) || echo "bench-peers.sh: no $IK_BENCH: ik_llama.cpp left out" >&2
fi

model() { # model SHAPE TYPE LAYERS -> path, made on first use
	local shape=$1 t=$2 layers=$3 path args=()
	path="$MODELS/$shape${layers:+-L$layers}-$t.gguf"
	if [[ ! -f $path ]]; then
		echo "making $path ..." >&2
		[[ -n $layers ]] && args+=(--layers "$layers")
		"$KILN" synth "$path.tmp" --shape "$shape" "${args[@]}" --type "$t" --seed 1 \
			--vocab "$SHARED/llama-2-tiny-random.gguf" >&2
		mv "$path.tmp" "$path"
	fi
	echo "$path"
}

median() { # median of the numbers on stdin
	sort -g | awk '{v[NR]=$1} END {if (NR==0) {print "nan"; exit} if (NR%2) m=v[(NR+1)/2]; else m=(v[NR/2]+v[NR/2+1])/2; printf "%.1f\n", m}'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b+0 == 0 || a == "nan" || b == "nan") print "-"; else printf "%.2fx", a/b}'; }

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# run ENGINE PATH KEY: appends "prefill decode" tok/s to $out/ENGINE-KEY.
run() {
	local engine=$1 path=$2 key=$3 json p d
	case $engine in
	kiln)
		json=$("$KILN" bench "$path" --threads "$THREADS" --prompt "$PROMPT" --gen "$GEN" --parallel "$PARALLEL" --json | tail -1)
		p=$(jq -r .prefill_tok_s <<<"$json") d=$(jq -r .decode_tok_s <<<"$json")
		jq -r .kernels <<<"$json" >"$out/kernels"
		jq -r .decode_weight_gb_s <<<"$json" >>"$out/gbs-$key"
		;;
	llama) if ((PARALLEL > 1)); then
		json=$(node "$ORACLE/llamacpp.mjs" bench "$path" --threads "$THREADS" --prompt "$PROMPT" --gen "$GEN" \
			--parallel "$PARALLEL" --ctx $((PARALLEL * (PROMPT + GEN) + 256)) 2>/dev/null | tail -1) ||
			echo "bench-peers.sh: the oracle's bench failed on $path" >&2
		p=$(jq -r .prefill_tok_s <<<"$json") d=$(jq -r .decode_tok_s <<<"$json")
	else
		json=$("$LLAMA_BENCH" -m "$path" -t "$THREADS" -p "$PROMPT" -n "$GEN" -r 1 -o json 2>/dev/null)
		p=$(jq -r "[.[] | select(.n_prompt == $PROMPT and .n_gen == 0) | .avg_ts][0]" <<<"$json")
		d=$(jq -r "[.[] | select(.n_gen == $GEN and .n_prompt == 0) | .avg_ts][0]" <<<"$json")
	fi ;;
	ik | ik-rtr) if ((PARALLEL > 1)); then
		# The table row: | PP | TG | B | N_KV | T_PP s | S_PP t/s | T_TG s | S_TG t/s | T s | S t/s |
		# (run in $out: it writes llama.log into its working directory)
		local rtr=()
		[[ $engine == ik-rtr ]] && rtr+=(-rtr) # (a switch here, not -rtr 1)
		read -r p d < <(cd "$out" && "$IK_BATCHED" -m "$path" -t "$THREADS" -npp "$PROMPT" -ntg "$GEN" -npl "$PARALLEL" \
			-c $((PARALLEL * (PROMPT + GEN) + 256)) "${rtr[@]}" 2>&1 | # (its table is on stderr)
			awk -F'|' -v b="$PARALLEL" '$4+0 == b && $2+0 > 0 {gsub(/ /, ""); print $7, $9}')
	else
		local extra=()
		[[ $engine == ik-rtr ]] && extra+=(-rtr 1)
		json=$("$IK_BENCH" -m "$path" -t "$THREADS" -p "$PROMPT" -n "$GEN" -r 1 "${extra[@]}" -o json 2>/dev/null)
		p=$(jq -r "[.[] | select(.n_prompt == $PROMPT and .n_gen == 0) | .avg_ts][0]" <<<"$json")
		d=$(jq -r "[.[] | select(.n_gen == $GEN and .n_prompt == 0) | .avg_ts][0]" <<<"$json")
	fi ;;
	esac
	echo "$p $d" >>"$out/$engine-$key"
	echo "  $engine $key: prefill $p decode $d" >&2
}

load_before=$(uptime)
# The read-bandwidth roofline of decode, measured before the runs.
bw=$(cd "$root" && go run ./scripts/membw -threads "$THREADS" -json | jq -r .read_gb_s)
for spec in $MODELSPECS; do
	IFS=: read -r shape t layers <<<"$spec"
	model "$shape" "$t" "${layers:-}" >/dev/null
done
for spec in $MODELSPECS; do
	IFS=: read -r shape t layers <<<"$spec"
	path=$(model "$shape" "$t" "${layers:-}")
	key=${spec//:/-}
	for i in $(seq "$RUNS"); do
		echo "$spec round $i/$RUNS" >&2
		for e in "${engines[@]}"; do run "$e" "$path" "$key"; done
	done
done
load_after=$(uptime)

flags=$(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|avx512f|avx512bw|avx512_vnni|avx_vnni|avx512_bf16)$' | tr '\n' ' ')
echo
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs, flags: $flags; threads $THREADS"
echo "kiln kernels: $(cat "$out/kernels" 2>/dev/null)"
echo "load before: $load_before"
echo "load after:  $load_after"
echo "medians of $RUNS alternated rounds; prompt $PROMPT, decode $GEN; tokens/s$( ((PARALLEL > 1)) && echo ", aggregate over $PARALLEL sequences")"
echo
hdr="| model | figure | kiln |"
sep="|---|---|---|"
for e in "${engines[@]:1}"; do hdr+=" $e | kiln / $e |"; sep+="---|---|"; done
echo "$hdr"
echo "$sep"
for spec in $MODELSPECS; do
	key=${spec//:/-}
	for f in 1 2; do
		name=prefill
		[[ $f == 2 ]] && name=decode
		k=$(awk -v f=$f '{print $f}' "$out/kiln-$key" | median)
		row="| $spec | $name | $k |"
		for e in "${engines[@]:1}"; do
			v=$(awk -v f=$f '{print $f}' "$out/$e-$key" | grep -v null | median)
			row+=" $v | $(ratio "$k" "$v") |"
		done
		echo "$row"
	done
done
echo
echo "kiln's decode against the read bandwidth ($bw GB/s, scripts/membw, $THREADS threads): the weight bytes a step"
echo "reads (step_bytes: for a mixture of experts only the routed experts) times steps per second; a share near or"
echo "above 100% means the step's weights partly stay in the caches ($(lscpu 2>/dev/null | awk -F: '/^L3 cache/ {gsub(/^ +/, "", $2); print "L3 " $2}'))"
for spec in $MODELSPECS; do
	key=${spec//:/-}
	g=$(median <"$out/gbs-$key")
	echo "- $spec: $g GB/s, $(awk -v g="$g" -v b="$bw" 'BEGIN {printf "%.0f%%", 100*g/b}') of the roofline"
done
