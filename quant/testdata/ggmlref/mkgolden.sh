#!/bin/sh
# Rebuild ../ggml_golden.txt from llama.cpp's own shared libraries.
# Needs gcc and the oracle's node-llama-cpp install (default /tmp/oracle; see
# shared/oracle/README.md). Runs on x86-64 with AVX2/FMA/F16C (the "haswell"
# CPU backend, whose activation quantizers are what QuantizeAct* mirror).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
lib=$(ls -d "${ORACLE:-/tmp/oracle}"/node_modules/@node-llama-cpp/linux-x64/bins/*/ | head -1)
out=$(mktemp -d)
gcc -O2 -Wall -o "$out/ggmlref" "$here/ggmlref.c" -L"$lib" -l:libggml-base.so -l:libggml-cpu-haswell.so -Wl,-rpath,"$lib"
"$out/ggmlref" "$out"
cd "$here/../.."
KILN_GGMLREF_OUT="$out" go test -run TestGoldenAgainstLlamaCpp -update .
echo "outputs kept in $out (set KILN_GGMLREF_OUT=$out to see first differing bytes)"
