#!/usr/bin/env bash
# bench-longctx.sh: prefill and decode at long contexts, per KV cache type,
# kiln against llama.cpp's native llama-bench with flash attention (issue
# 23's curve): for each depth D and type T, kiln bench --prompt D --gen GEN
# --kv-cache-dtype T (prefill of D tokens, then GEN decode steps after
# them) and llama-bench -fa 1 -ctk T -ctv T, once with -p D (prefill) and
# once with -p 0 -n GEN -d D (decode after D tokens of context). Engines
# alternate within each round; the table gives medians and ratios.
#
# The model is `kiln synth --shape $SHAPE [--layers $LAYERS] --type $WTYPE
# --ctx CTX` (random weights, CTX the largest depth plus room): at long
# contexts attention, not the weights, sets the speed, so a shape cut to a
# few layers measures the same kernels in a fraction of the time (say so
# when quoting it).
#
# Usage: scripts/bench-longctx.sh
#        DEPTHS="32768" LAYERS=3 RUNS=1 scripts/bench-longctx.sh
# Environment: DEPTHS (2048 8192), KVTYPES (f16 q8_0), SHAPE (smollm2-135m),
#   LAYERS (the shape's), WTYPE (Q8_0), RUNS (3), THREADS (2), GEN (32),
#   MODELS (/tmp/perf), LLAMA_BENCH (/tmp/llama-bin/llama-bench), KILN (a
#   kiln binary; default built from this checkout), KILN_KERNELS, SHARED.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
DEPTHS=${DEPTHS:-"2048 8192"}
KVTYPES=${KVTYPES:-"f16 q8_0"}
SHAPE=${SHAPE:-smollm2-135m}
LAYERS=${LAYERS:-}
WTYPE=${WTYPE:-Q8_0}
RUNS=${RUNS:-3}
THREADS=${THREADS:-2}
GEN=${GEN:-32}
MODELS=${MODELS:-/tmp/perf}
LLAMA_BENCH=${LLAMA_BENCH:-/tmp/llama-bin/llama-bench}
SHARED=${SHARED:-$root/../shared/models}

for tool in go jq; do
	command -v "$tool" >/dev/null || { echo "bench-longctx.sh: $tool not found" >&2; exit 1; }
done
mkdir -p "$MODELS"
if [[ -z ${KILN:-} ]]; then
	KILN=$MODELS/kiln-bench-longctx
	(cd "$root" && go build -o "$KILN" ./cmd/kiln)
fi
engines=(kiln)
[[ -x $LLAMA_BENCH ]] && engines+=(llama) || echo "bench-longctx.sh: no $LLAMA_BENCH: llama.cpp left out" >&2

maxd=0
for d in $DEPTHS; do ((d > maxd)) && maxd=$d; done
ctx=$(((maxd + GEN + 1023) / 1024 * 1024))
model=$MODELS/$SHAPE${LAYERS:+-L$LAYERS}-$WTYPE-ctx$ctx.gguf
if [[ ! -f $model ]]; then
	args=()
	[[ -n $LAYERS ]] && args+=(--layers "$LAYERS")
	"$KILN" synth "$model.tmp" --shape "$SHAPE" "${args[@]}" --type "$WTYPE" --ctx "$ctx" --seed 1 \
		--vocab "$SHARED/llama-2-tiny-random.gguf" >&2
	mv "$model.tmp" "$model"
fi

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
median() {
	sort -g | awk '{v[NR]=$1} END {if (NR==0) {print "nan"; exit} if (NR%2) m=v[(NR+1)/2]; else m=(v[NR/2]+v[NR/2+1])/2; printf "%.2f\n", m}'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b+0 == 0 || a == "nan" || b == "nan") print "-"; else printf "%.2fx", a/b}'; }

run() { # run ENGINE DEPTH TYPE: appends "prefill decode" tok/s to $out/ENGINE-DEPTH-TYPE
	local e=$1 d=$2 t=$3 json p dd
	case $e in
	kiln)
		json=$("$KILN" bench "$model" --threads "$THREADS" --prompt "$d" --gen "$GEN" --kv-cache-dtype "$t" --json | tail -1)
		p=$(jq -r .prefill_tok_s <<<"$json") dd=$(jq -r .decode_tok_s <<<"$json")
		jq -r .kernels <<<"$json" >"$out/kernels"
		;;
	llama)
		json=$("$LLAMA_BENCH" -m "$model" -t "$THREADS" -fa 1 -ctk "$t" -ctv "$t" -p "$d" -n 0 -r 1 -o json 2>/dev/null)
		p=$(jq -r '.[0].avg_ts' <<<"$json")
		json=$("$LLAMA_BENCH" -m "$model" -t "$THREADS" -fa 1 -ctk "$t" -ctv "$t" -p 0 -n "$GEN" -d "$d" -r 1 -o json 2>/dev/null)
		dd=$(jq -r '.[0].avg_ts' <<<"$json")
		;;
	esac
	echo "$p $dd" >>"$out/$e-$d-$t"
	echo "  $e depth $d $t: prefill $p decode $dd" >&2
}

load_before=$(uptime)
for d in $DEPTHS; do
	for t in $KVTYPES; do
		for i in $(seq "$RUNS"); do
			echo "depth $d kv $t round $i/$RUNS" >&2
			for e in "${engines[@]}"; do run "$e" "$d" "$t"; done
		done
	done
done
load_after=$(uptime)

flags=$(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|avx512f|avx512bw|avx512_vnni|avx_vnni|avx512_bf16)$' | tr '\n' ' ')
echo
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs, flags: $flags; threads $THREADS"
echo "model: $(basename "$model") (kiln synth --shape $SHAPE${LAYERS:+ --layers $LAYERS} --type $WTYPE, random weights); kiln kernels: $(cat "$out/kernels" 2>/dev/null)"
echo "load before: $load_before"
echo "load after:  $load_after"
echo "medians of $RUNS alternated rounds; prefill of D tokens, decode of $GEN tokens after D; tokens/s"
echo
if [[ " ${engines[*]} " == *" llama "* ]]; then
	echo "| depth | KV | kiln prefill | llama.cpp prefill | kiln / llama.cpp | kiln decode | llama.cpp decode | kiln / llama.cpp | kiln ms/token |"
	echo "|---|---|---|---|---|---|---|---|---|"
else
	echo "| depth | KV | kiln prefill | kiln decode | kiln ms/token |"
	echo "|---|---|---|---|---|"
fi
for d in $DEPTHS; do
	for t in $KVTYPES; do
		kp=$(awk '{print $1}' "$out/kiln-$d-$t" | median) kd=$(awk '{print $2}' "$out/kiln-$d-$t" | median)
		ms=$(awk -v v="$kd" 'BEGIN {if (v+0 > 0) printf "%.2f", 1000/v; else print "-"}')
		if [[ -f $out/llama-$d-$t ]]; then
			lp=$(awk '{print $1}' "$out/llama-$d-$t" | grep -v null | median) ld=$(awk '{print $2}' "$out/llama-$d-$t" | grep -v null | median)
			echo "| $d | $t | $kp | $lp | $(ratio "$kp" "$lp") | $kd | $ld | $(ratio "$kd" "$ld") | $ms |"
		else
			echo "| $d | $t | $kp | $kd | $ms |"
		fi
	done
done
