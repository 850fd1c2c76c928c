#!/usr/bin/env bash
# bench.sh: kiln against llama.cpp (the shared/oracle), side by side on the
# same machine in the same minutes, for BENCHMARKS.md.
#
# Models: TinyLlama-1.1B-shaped random weights made by `kiln synth` (made
# once into $MODELS, ~1-3 min each) in Q8_0, Q4_0 and Q4_K.
# For each model, kiln's `bench` and the oracle's `bench` run ALTERNATELY,
# $RUNS times each (prompt 128, decode 64, 2 threads), so slow spells of a
# shared machine hit both about equally; then batched decode of Q8_0 at
# parallel 1, 4, 8, 16 (aggregate tok/s), alternately too. It prints the
# medians, kiln/llama.cpp ratios, and decode as a fraction of the memory
# roofline (bandwidth $BW_GBS / model bytes), plus `uptime` before and after.
#
# Needs: go, jq, node and the oracle (default /tmp/oracle/llamacpp.mjs:
# cp -r ../shared/oracle /tmp/oracle && (cd /tmp/oracle && npm ci)),
# ../shared/models/llama-2-tiny-random.gguf (the vocabulary).
#
# Usage: scripts/bench.sh                         (everything, ~25 minutes)
#        RUNS=5 TYPES="Q4_0" PARALLEL="" scripts/bench.sh
# Environment: RUNS (3), TYPES ("Q8_0 Q4_0 Q4_K"), PARALLEL ("1 4 8 16"),
#   PTYPES (Q8_0: the types whose batched decode PARALLEL measures),
#   KERNELS (kiln's kernel sets to run, each alternated with llama.cpp, e.g.
#   "avx2 avx512vnni"; default: the CPU's best, as KILN_KERNELS leaves it),
#   THREADS (2), PROMPT (128), GEN (64), MODELS (/tmp/perf), ORACLE,
#   SHARED (../shared/models from the repo root), BW_GBS (34: the read
#   bandwidth the roofline assumes), KILN (a kiln binary; default: built
#   from this checkout into $MODELS/kiln-bench).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${RUNS:-3}
TYPES=${TYPES:-"Q8_0 Q4_0 Q4_K"}
PARALLEL=${PARALLEL-"1 4 8 16"}
PTYPES=${PTYPES:-Q8_0} # the types whose batched decode PARALLEL measures
THREADS=${THREADS:-2}
PROMPT=${PROMPT:-128}
GEN=${GEN:-64}
MODELS=${MODELS:-/tmp/perf}
ORACLE=${ORACLE:-/tmp/oracle/llamacpp.mjs}
SHARED=${SHARED:-$root/../shared/models}
BW_GBS=${BW_GBS:-34}

for tool in go jq node; do
	command -v "$tool" >/dev/null || { echo "bench.sh: $tool not found" >&2; exit 1; }
done
[[ -f $ORACLE ]] || { echo "bench.sh: oracle $ORACLE not found (see the header)" >&2; exit 1; }
mkdir -p "$MODELS"
if [[ -z ${KILN:-} ]]; then
	KILN=$MODELS/kiln-bench
	(cd "$root" && go build -o "$KILN" ./cmd/kiln)
fi

model() { # model TYPE -> path, made on first use
	local t=$1 path="$MODELS/tinyllama-$1.gguf"
	if [[ ! -f $path ]]; then
		echo "making $path ..." >&2
		"$KILN" synth "$path.tmp" --shape tinyllama-1.1b --type "$t" --seed 1 \
			--vocab "$SHARED/llama-2-tiny-random.gguf" >&2
		mv "$path.tmp" "$path"
	fi
	echo "$path"
}

median() { # median of the numbers on stdin
	sort -g | awk '{v[NR]=$1} END {if (NR==0) {print "nan"; exit} if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b+0 == 0) print "nan"; else printf "%.2f", a/b}'; }

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

KERNELS=${KERNELS:-best}
kilns=()
for k in $KERNELS; do kilns+=("kiln-$k"); done

# run ENGINE TYPE PARALLEL I: one bench, JSON line appended to
# $out/ENGINE-TYPE-PARALLEL. ENGINE is llama or kiln-SET (SET a kernel set
# for KILN_KERNELS, or best).
run() {
	local engine=$1 t=$2 par=$3 path json set
	path=$(model "$t")
	if [[ $engine == kiln-* ]]; then
		set=${engine#kiln-}
		[[ $set == best ]] && set=
		json=$(KILN_KERNELS=$set "$KILN" bench "$path" --threads "$THREADS" --prompt "$PROMPT" --gen "$GEN" --parallel "$par" --json | tail -1)
	else
		json=$(node "$ORACLE" bench "$path" --threads "$THREADS" --prompt "$PROMPT" --gen "$GEN" --parallel "$par" | tail -1)
	fi
	echo "$json" >>"$out/$engine-$t-$par"
	echo "  $engine $t parallel=$par: $(jq -c '{prefill_tok_s, decode_tok_s, kernels}' <<<"$json")" >&2
}

col() { # col ENGINE TYPE PARALLEL FIELD -> median
	jq -r ".$4" "$out/$1-$2-$3" | median
}

load_before=$(uptime)
echo "load before: $load_before" >&2
for t in $TYPES; do model "$t" >/dev/null; done
if [[ -n $PARALLEL ]]; then for t in $PTYPES; do model "$t" >/dev/null; done; fi

for t in $TYPES; do
	for i in $(seq "$RUNS"); do
		echo "$t run $i/$RUNS" >&2
		for k in "${kilns[@]}"; do
			run "$k" "$t" 1
			run llama "$t" 1
		done
	done
done
for pt in $PTYPES; do
	for p in $PARALLEL; do
		[[ $p == 1 && " $TYPES " == *" $pt "* ]] && continue # measured above
		for i in $(seq "$RUNS"); do
			echo "$pt parallel $p run $i/$RUNS" >&2
			for k in "${kilns[@]}"; do
				run "$k" "$pt" "$p"
				run llama "$pt" "$p"
			done
		done
	done
done
load_after=$(uptime)

echo
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs; threads $THREADS"
echo "load before: $load_before"
echo "load after:  $load_after"
echo "runs per figure: $RUNS (medians; kiln and llama.cpp alternated); prompt $PROMPT, decode $GEN"
echo
echo "| model | figure | kiln kernels | kiln tok/s | llama.cpp tok/s | kiln / llama.cpp | kiln decode GB/s | % of ${BW_GBS} GB/s roofline |"
echo "|---|---|---|---|---|---|---|---|"
for t in $TYPES; do
	for f in prefill decode; do
		for e in "${kilns[@]}"; do
			bytes=$(jq -r '.step_bytes // .model_bytes' "$out/$e-$t-1" | head -1) # active bytes per token (MoE: the chosen experts only)
			kset=$(jq -r .kernels "$out/$e-$t-1" | head -1)
			k=$(col "$e" "$t" 1 "${f}_tok_s")
			l=$(col llama "$t" 1 "${f}_tok_s")
			if [[ $f == decode ]]; then
				gbs=$(awk -v k="$k" -v b="$bytes" 'BEGIN {printf "%.1f", k*b/1e9}')
				roof=$(awk -v g="$gbs" -v bw="$BW_GBS" 'BEGIN {printf "%.0f%%", 100*g/bw}')
			else
				gbs="" roof=""
			fi
			echo "| $t | $f | $kset | $k | $l | $(ratio "$k" "$l") | $gbs | $roof |"
		done
	done
done
for pt in $PTYPES; do
	for p in $PARALLEL; do
		for e in "${kilns[@]}"; do
			kset=$(jq -r .kernels "$out/$e-$pt-$p" | head -1)
			k=$(col "$e" "$pt" "$p" decode_tok_s)
			l=$(col llama "$pt" "$p" decode_tok_s)
			echo "| $pt | decode, $p sequences (aggregate) | $kset | $k | $l | $(ratio "$k" "$l") | | |"
		done
	done
done
