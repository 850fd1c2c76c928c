#!/usr/bin/env bash
# Regenerates the golden files of TestOracleGolden with llama.cpp
# (shared/oracle installed at /tmp/oracle; see shared/oracle/README.md).
#   tokenizer/testdata/oracle/gen.sh        (run from the repository root)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
models=${KILN_SHARED:-$root/../shared}/models
oracle=${ORACLE:-/tmp/oracle}
cp "$here/batch.mjs" "$oracle/kiln-batch.mjs"
vec="$models/llamacpp-vocab/ggml-vocab-llama-spm.gguf.inp" # the same inputs for every vocab
run() { node "$oracle/kiln-batch.mjs" "$2" "$here/texts.json" "$vec" 2>/dev/null > "$here/$1.json"; echo "$1"; }
for m in llama-spm phi-3 baichuan gpt-2 gpt-neox starcoder deepseek-coder deepseek-llm falcon mpt refact; do
  run "$m" "$models/llamacpp-vocab/ggml-vocab-$m.gguf"
done
run stories260K "$models/stories260K.gguf"
run llama-2-tiny-random "$models/llama-2-tiny-random.gguf"
# Vocabs built from tokenizer files, written as GGUF by Vocab.Metadata.
tmp=$(mktemp -d)
(cd "$root" && KILN_TOKENIZER_WRITE_GGUF="$tmp" go test ./tokenizer -run TestWriteVocabGGUF -count=1 >/dev/null)
for m in llama-bpe qwen2 qwen2.5 llama2-model; do run "$m" "$tmp/$m.gguf"; done
rm -rf "$tmp"
