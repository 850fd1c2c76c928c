// hf-tokenizer-goldens.js prints the token ids the Hugging Face tokenizers
// library (its Node binding, npm package `tokenizers`) gives for a list of
// test strings, as JSON, for kiln's tokenizer.json tests
// (tokenizer/testdata/hf/*.json). CI does not need it; the goldens are
// committed. Regenerate with:
//
//	mkdir -p /tmp/hftok && (cd /tmp/hftok && npm init -y >/dev/null && npm install tokenizers)
//	NODE_PATH=/tmp/hftok/node_modules node scripts/hf-tokenizer-goldens.js \
//	    ../shared/models/tinystories-656k/tokenizer.json \
//	    ../shared/models/llamacpp-vocab/ggml-vocab-llama-spm.gguf.inp \
//	    > tokenizer/testdata/hf/tinystories-656k.json
//
//	NODE_PATH=/tmp/hftok/node_modules node scripts/hf-tokenizer-goldens.js \
//	    --qwen2 ../shared/models/tokenizers/qwen2-vocab.json ../shared/models/tokenizers/qwen2-merges.txt \
//	    ../shared/models/llamacpp-vocab/ggml-vocab-qwen2.gguf.inp \
//	    > tokenizer/testdata/hf/qwen2.json
//
// With --qwen2 the script first writes a tokenizer.json the way Qwen2's own
// repository spells it (Split regex + ByteLevel, BPE, three added tokens)
// from vocab.json + merges.txt, to a temporary file, and uses that. Qwen2's
// NFC normalizer is left out: kiln refuses it (it has no NFC tables), and on
// NFC text it changes nothing. The file, less model.vocab and model.merges
// (the Go test fills those in from the same two files), is printed into the
// golden as "tokenizer_json", so that the test reads what the library read.
const fs = require('fs');
const os = require('os');
const path = require('path');
const { Tokenizer } = require('tokenizers');

const extra = [
  'Once upon a time, there was a little girl named Lily.',
  'She liked to play outside in the park with her dog.',
  'One day, she saw a big red ball under a tree.',
  '"Can I have it?" she asked her mom.',
  'Tom and Sam were best friends. They played every day!',
  'The cat sat on the mat and purred happily.',
  'They went home and ate cake. The end.',
  '<|start_story|>Once upon a time',
  'Once upon a time<|end_story|>',
  'a <|start_story|> b <|end_story|>c',
  '<|end_story|><|start_story|>',
  '<unk> and <|im_start|>user\nHi<|im_end|>\n',
  'emoji 🦙🔥 and CJK 你好世界 and ß é ñ',
  '   leading spaces',
  'trailing spaces   ',
  'new\nlines\n\nand\ttabs',
  '\u00a0nbsp and \u200bzero width',
  'e\u0301 (combining) vs \u00e9',
  '',
  ' ',
  'ZZZZZZ qqq xxxxx 12345 67.89',
];

function readInp(file) {
  return fs.readFileSync(file, 'utf8').split('\n__ggml_vocab_test__\n').slice(0, -1);
}

function qwen2JSON(vocabFile, mergesFile) {
  const vocab = JSON.parse(fs.readFileSync(vocabFile, 'utf8'));
  const merges = fs.readFileSync(mergesFile, 'utf8').split('\n')
    .filter((l, i) => l !== '' && !(i === 0 && l.startsWith('#version')));
  const n = Object.keys(vocab).length;
  const added = ['<|endoftext|>', '<|im_start|>', '<|im_end|>'].map((c, i) => ({
    id: n + i, content: c, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true,
  }));
  return {
    version: '1.0', truncation: null, padding: null, added_tokens: added,
    normalizer: null,
    pre_tokenizer: { type: 'Sequence', pretokenizers: [
      { type: 'Split', pattern: { Regex: "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+" },
        behavior: 'Isolated', invert: false },
      { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false },
    ] },
    post_processor: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false },
    decoder: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false },
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '',
      fuse_unk: false, byte_fallback: false, ignore_merges: false, vocab, merges },
  };
}

async function main() {
  const args = process.argv.slice(2);
  let file, inp, tj = null;
  if (args[0] === '--qwen2') {
    tj = qwen2JSON(args[1], args[2]);
    inp = args[3];
    file = path.join(os.tmpdir(), 'kiln-qwen2-tokenizer.json');
    fs.writeFileSync(file, JSON.stringify(tj));
  } else {
    [file, inp] = args;
  }
  const tok = Tokenizer.fromFile(file);
  const texts = (inp ? readInp(inp) : []).concat(extra);
  const cases = [];
  for (const text of texts) {
    const plain = await tok.encode(text, null, { addSpecialTokens: false });
    const special = await tok.encode(text, null, { addSpecialTokens: true });
    const ids = plain.getIds();
    cases.push({
      text,
      ids,
      ids_add_special: special.getIds(),
      decoded: await tok.decode(ids, false),
    });
  }
  // One case per line keeps the goldens diffable.
  let s = '{"library": ' + JSON.stringify('tokenizers (npm) ' + require('tokenizers/package.json').version) + ',\n';
  if (tj) {
    tj.model.vocab = null;
    tj.model.merges = null;
    s += '"tokenizer_json": ' + JSON.stringify(JSON.stringify(tj)) + ',\n';
  }
  s += '"cases": [\n' + cases.map((c) => JSON.stringify(c)).join(',\n') + '\n]}\n';
  process.stdout.write(s);
}
main().catch((e) => { console.error(e); process.exit(1); });
