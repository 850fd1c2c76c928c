// hf-tokenizer-goldens.js prints the token ids the Hugging Face tokenizers
// library (its Node binding, npm package `tokenizers`) gives for a list of
// test strings, as JSON, for kiln's tokenizer.json tests
// (tokenizer/testdata/hf/*.json). CI does not need it; the goldens are
// committed. Regenerate with:
//
//	mkdir -p /tmp/hftok && (cd /tmp/hftok && npm init -y >/dev/null && npm install tokenizers@0.23.2)
//	S=../shared/models; V=$S/llamacpp-vocab; T=$S/tokenizers; G=tokenizer/testdata/hf
//	export NODE_PATH=/tmp/hftok/node_modules
//	node scripts/hf-tokenizer-goldens.js $S/tinystories-656k/tokenizer.json $V/ggml-vocab-llama-spm.gguf.inp > $G/tinystories-656k.json
//	node scripts/hf-tokenizer-goldens.js --more --qwen2 $T/qwen2-vocab.json $T/qwen2-merges.txt $V/ggml-vocab-qwen2.gguf.inp > $G/qwen2.json
//	node scripts/hf-tokenizer-goldens.js --more --llama3 $T/llama3.2-encoder.json $T/llama3.2-vocab.bpe $V/ggml-vocab-llama-bpe.gguf.inp > $G/llama3.json
//	node scripts/hf-tokenizer-goldens.js --more --gpt2 $T/gpt2-encoder.json $T/gpt2-vocab.bpe $V/ggml-vocab-gpt-2.gguf.inp > $G/gpt2.json
//	for variant in legacy metaspace always-split nfc-never; do
//	  node scripts/hf-tokenizer-goldens.js --more --llama2 $variant $T/llama2-spm.model $V/ggml-vocab-llama-spm.gguf.inp > $G/llama2-$variant.json
//	done
//
// A plain FILE argument is a tokenizer.json used as it is. The other forms
// first write a tokenizer.json the way the model's own repository spells
// it, from the vocabulary files in shared/models (which hold no
// tokenizer.json), to a temporary file, and use that:
//
//	--qwen2  Qwen2: NFC normalizer, Split(Qwen2 regex) + ByteLevel, 3 added tokens
//	--llama3 Llama 3: Split(Llama 3 regex) + ByteLevel, ignore_merges, 256 added
//	         tokens, post-processor Sequence [ByteLevel, TemplateProcessing(BOS)]
//	--gpt2   GPT-2: ByteLevel (its regex), <|endoftext|> normalized
//	--llama2 VARIANT  Llama 2's SentencePiece model as transformers'
//	         LlamaConverter writes it: vocab = the pieces, merges = every split
//	         of a piece into two pieces, ordered by the piece's score
//	         (transformers' generate_merges), byte fallback, <unk> <s> </s>
//	         added; VARIANT picks the normalizer, pre-tokenizer and decoder:
//	    legacy        Prepend("▁") + Replace(" " → "▁"), decoder Replace,
//	                  ByteFallback, Fuse, Strip (Llama 2, Mistral v0.1)
//	    metaspace     Metaspace(prepend_scheme first, split false), same decoder
//	                  (legacy: false; Mistral v0.3)
//	    always-split  Metaspace(always, split true), decoder Metaspace,
//	                  ByteFallback, Fuse
//	    nfc-never     NFC normalizer, Metaspace(never, split false), decoder
//	                  Metaspace(never), ByteFallback, Fuse
//
// The file, less model.vocab and model.merges, is printed into the golden
// as "tokenizer_json", with "vocab_source" (which files, in which format)
// and "merges_sha256" (sha256 of the merges, one "left right" per line):
// the Go test rebuilds vocab and merges from the same files, checks the
// hash, and so reads what the library read.
//
// --more adds the strings of `more` (unicode needing NFC, Metaspace edge
// cases, code, emoji) to the list; tinystories-656k.json is made without it
// (testdata/convert's llama.cpp goldens tokenize its exact strings).
const crypto = require('crypto');
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

const more = [
  // Text NFC changes: combining marks, singletons, Hangul jamo.
  'Cafe\u0301 na\u0131\u0308ve re\u0301sume\u0301 A\u030angstro\u0308m',
  'n\u0303 o\u0308 u\u0308 a\u0300 c\u0327 e\u0302 i\u0308',
  'Vie\u0323\u0302t Nam: ha\u0300 no\u0323\u0302i, tie\u0302\u0301ng vie\u0323\u0302t',
  '\u212b \u2126 \u212a \uf900 \u0344 \u1e9b\u0323',
  '\u1100\u1161\u11a8 \u1112\u1161\u11ab\u1100\u1173\u11af',
  'a\u0301\u0301\u0301 e\u0323\u0307 q\u0307\u0323',
  '=\u0338 <\u0338 >\u0338',
  '<|im_end|>\u0338 <s>\u0338 <|begin_of_text|>\u0338',
  '\u0915\u093c \u0958 \u05e9\u05bc\u05c1',
  'Zoe\u0308 and Zo\u00eb and Zoë',
  // Spaces and the Metaspace prepend rules.
  ' Hello',
  '  Hello  world ',
  'Hello',
  '\u2581Hello \u2581 world\u2581',
  '\u2581',
  '\u2581\u2581 \u2581',
  'a  b   c    d',
  '\u3000ideographic\u3000space',
  'line\r\nbreak\rreturn',
  '<s>Hello',
  '<s> Hello',
  'Hello<s>world',
  'Hello </s> <s> world',
  '</s><s><unk>',
  '<|begin_of_text|>Hi<|eot_id|>',
  '<|start_header_id|>user<|end_header_id|>\n\nHello there!<|eot_id|>',
  '<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nHi<|im_end|>',
  '<|endoftext|>Once',
  // Digits and numbers.
  '1234567890 12 123 1234 12345',
  '3.14159 -42 +7 1,000,000 1e-9 0x1F 0b1010',
  '2024-01-15T10:30:00Z',
  // Code.
  'func main() {\n\tfmt.Println("hello, world")\n}\n',
  'if (a <= b && c != d) { return x->y[i++]; } // done',
  '    def f(self, *args, **kwargs):\n        return {"k": [1, 2, 3]}\n',
  '<div class="x">&amp; &lt;tag&gt;</div>',
  'SELECT * FROM t WHERE id = 42;',
  '#!/bin/sh\necho $HOME | grep -v \'^#\' > /dev/null 2>&1',
  // Emoji, scripts, symbols.
  '👩\u200d👩\u200d👧 🇺🇸 👍🏽 ❤️ 🫠',
  'Привет, мир! Ελληνικά. مرحبا بالعالم. שלום עולם.',
  'こんにちは世界。カタカナ、ひらがな。한국어 텍스트.',
  'ภาษาไทย हिन्दी বাংলা தமிழ்',
  'Ω≈ç√∫˜µ≤≥÷ ©®™ €£¥ §¶ •–— “quotes” ‘single’ …',
  '\ufeffBOM and \u00ad soft hyphen and \u2028 line sep',
  'I\'m you\'re it\'s we\'ve they\'ll I\'d DON\'T',
  'mixedCASE and snake_case and kebab-case and CamelCase',
  'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
  '\t\t\tindent\n\n\n   \n',
];

function readInp(file) {
  return fs.readFileSync(file, 'utf8').split('\n__ggml_vocab_test__\n').slice(0, -1);
}

function readMerges(file) {
  return fs.readFileSync(file, 'utf8').split('\n')
    .filter((l, i) => l !== '' && !(i === 0 && l.startsWith('#version')));
}

const noFlags = { single_word: false, lstrip: false, rstrip: false };

const qwen2Regex = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const llama3Regex = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

function template(bos, id) {
  return {
    type: 'TemplateProcessing',
    single: [{ SpecialToken: { id: bos, type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
    pair: [{ SpecialToken: { id: bos, type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } },
      { SpecialToken: { id: bos, type_id: 1 } }, { Sequence: { id: 'B', type_id: 1 } }],
    special_tokens: { [bos]: { id: bos, ids: [id], tokens: [bos] } },
  };
}

function qwen2JSON(vocabFile, mergesFile) {
  const vocab = JSON.parse(fs.readFileSync(vocabFile, 'utf8'));
  const n = Object.keys(vocab).length;
  const added = ['<|endoftext|>', '<|im_start|>', '<|im_end|>'].map((c, i) => ({
    id: n + i, content: c, ...noFlags, normalized: false, special: true,
  }));
  return {
    version: '1.0', truncation: null, padding: null, added_tokens: added,
    normalizer: { type: 'NFC' },
    pre_tokenizer: { type: 'Sequence', pretokenizers: [
      { type: 'Split', pattern: { Regex: qwen2Regex }, behavior: 'Isolated', invert: false },
      { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false },
    ] },
    post_processor: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false },
    decoder: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false },
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '',
      fuse_unk: false, byte_fallback: false, ignore_merges: false, vocab, merges: readMerges(mergesFile) },
  };
}

// llama3Specials is tokenizer.FamilyLlama3's list (families.go).
function llama3Specials() {
  const names = ['<|begin_of_text|>', '<|end_of_text|>', '<|reserved_special_token_0|>',
    '<|reserved_special_token_1|>', '<|finetune_right_pad_id|>', '<|reserved_special_token_2|>',
    '<|start_header_id|>', '<|end_header_id|>', '<|eom_id|>', '<|eot_id|>', '<|python_tag|>'];
  for (let i = 3; names.length < 256; i++) names.push(`<|reserved_special_token_${i}|>`);
  return names;
}

function llama3JSON(vocabFile, mergesFile) {
  const vocab = JSON.parse(fs.readFileSync(vocabFile, 'utf8'));
  const added = llama3Specials().map((c, i) => ({ id: 128000 + i, content: c, ...noFlags, normalized: false, special: true }));
  return {
    version: '1.0', truncation: null, padding: null, added_tokens: added,
    normalizer: null,
    pre_tokenizer: { type: 'Sequence', pretokenizers: [
      { type: 'Split', pattern: { Regex: llama3Regex }, behavior: 'Isolated', invert: false },
      { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false },
    ] },
    post_processor: { type: 'Sequence', processors: [
      { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
      template('<|begin_of_text|>', 128000),
    ] },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null, end_of_word_suffix: null,
      fuse_unk: false, byte_fallback: false, ignore_merges: true, vocab, merges: readMerges(mergesFile) },
  };
}

function gpt2JSON(vocabFile, mergesFile) {
  const vocab = JSON.parse(fs.readFileSync(vocabFile, 'utf8'));
  return {
    version: '1.0', truncation: null, padding: null,
    added_tokens: [{ id: 50256, content: '<|endoftext|>', ...noFlags, normalized: true, special: true }],
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '',
      fuse_unk: false, byte_fallback: false, vocab, merges: readMerges(mergesFile) },
  };
}

// readSentencePiece returns the pieces of a SentencePiece .model
// (ModelProto field 1; SentencePiece fields 1 piece, 2 score).
function readSentencePiece(file) {
  const buf = fs.readFileSync(file);
  function fields(lo, hi, fn) {
    let p = lo;
    const varint = () => {
      let x = 0, mul = 1, b;
      do { b = buf[p++]; x += (b & 0x7f) * mul; mul *= 128; } while (b & 0x80);
      return x;
    };
    while (p < hi) {
      const key = varint(), field = Math.floor(key / 8), wire = key % 8;
      if (wire === 0) { fn(field, wire, varint()); continue; }
      if (wire === 1) { p += 8; continue; }
      if (wire === 5) { fn(field, wire, buf.readFloatLE(p)); p += 4; continue; }
      if (wire !== 2) throw new Error(`${file}: wire type ${wire}`);
      const n = varint();
      fn(field, wire, [p, p + n]);
      p += n;
    }
  }
  const pieces = [];
  fields(0, buf.length, (field, wire, v) => {
    if (field !== 1 || wire !== 2) return;
    const sp = { piece: '', score: 0 };
    fields(v[0], v[1], (f, w, x) => {
      if (f === 1 && w === 2) sp.piece = buf.toString('utf8', x[0], x[1]);
      if (f === 2 && w === 5) sp.score = x;
    });
    pieces.push(sp);
  });
  return pieces;
}

// spmMerges is transformers' generate_merges (convert_slow_tokenizer.py)
// with vocab_scores given: for each piece, in id order, every split into two
// pieces (by code point), ordered by the ids of the two; then all of them
// by (score of the piece, length of left, length of right), highest first,
// a stable sort. tokenizer.MergesFromScores is the same in Go.
function spmMerges(pieces) {
  const ids = new Map(pieces.map((p, i) => [p.piece, i]));
  const merges = [];
  for (const p of pieces) {
    const cps = Array.from(p.piece);
    const local = [];
    for (let i = 1; i < cps.length; i++) {
      const l = cps.slice(0, i).join(''), r = cps.slice(i).join('');
      if (ids.has(l) && ids.has(r)) local.push({ l, r, score: p.score, nl: i, nr: cps.length - i });
    }
    local.sort((a, b) => ids.get(a.l) - ids.get(b.l) || ids.get(a.r) - ids.get(b.r));
    for (const m of local) merges.push(m);
  }
  merges.sort((a, b) => (b.score - a.score) || (b.nl - a.nl) || (b.nr - a.nr));
  return merges.map((m) => [m.l, m.r]);
}

function llama2JSON(variant, modelFile) {
  const pieces = readSentencePiece(modelFile);
  const vocab = {};
  pieces.forEach((p, i) => { vocab[p.piece] = i; });
  const added = [0, 1, 2].map((id) => ({ id, content: pieces[id].piece, ...noFlags, normalized: false, special: true }));
  const replace = { type: 'Replace', pattern: { String: '▁' }, content: ' ' };
  const legacyDecoder = { type: 'Sequence', decoders: [replace, { type: 'ByteFallback' }, { type: 'Fuse' },
    { type: 'Strip', content: ' ', start: 1, stop: 0 }] };
  const metaspace = (scheme, split) => ({ type: 'Metaspace', replacement: '▁', prepend_scheme: scheme, split });
  let normalizer = null, pre = null, decoder = legacyDecoder;
  switch (variant) {
    case 'legacy':
      normalizer = { type: 'Sequence', normalizers: [{ type: 'Prepend', prepend: '▁' },
        { type: 'Replace', pattern: { String: ' ' }, content: '▁' }] };
      break;
    case 'metaspace':
      pre = metaspace('first', false);
      break;
    case 'always-split':
      pre = metaspace('always', true);
      decoder = { type: 'Sequence', decoders: [metaspace('always', true), { type: 'ByteFallback' }, { type: 'Fuse' }] };
      break;
    case 'nfc-never':
      normalizer = { type: 'NFC' };
      pre = metaspace('never', false);
      decoder = { type: 'Sequence', decoders: [metaspace('never', false), { type: 'ByteFallback' }, { type: 'Fuse' }] };
      break;
    default:
      throw new Error(`unknown --llama2 variant ${variant}`);
  }
  return {
    version: '1.0', truncation: null, padding: null, added_tokens: added,
    normalizer, pre_tokenizer: pre, post_processor: template('<s>', 1), decoder,
    model: { type: 'BPE', dropout: null, unk_token: '<unk>', continuing_subword_prefix: null, end_of_word_suffix: null,
      fuse_unk: true, byte_fallback: true, ignore_merges: false, vocab, merges: spmMerges(pieces) },
  };
}

async function main() {
  let args = process.argv.slice(2);
  let texts = [...extra];
  if (args[0] === '--more') {
    texts = texts.concat(more);
    args = args.slice(1);
  }
  let file, inp, tj = null, source = null;
  const rel = (f) => path.relative(path.resolve(path.dirname(path.dirname(f))), path.resolve(f));
  switch (args[0]) {
    case '--qwen2':
    case '--llama3':
    case '--gpt2':
      tj = { '--qwen2': qwen2JSON, '--llama3': llama3JSON, '--gpt2': gpt2JSON }[args[0]](args[1], args[2]);
      source = { format: 'vocab.json+merges.txt', files: [rel(args[1]), rel(args[2])] };
      inp = args[3];
      break;
    case '--llama2':
      tj = llama2JSON(args[1], args[2]);
      source = { format: 'sentencepiece', files: [rel(args[2])] };
      inp = args[3];
      break;
    default:
      [file, inp] = args;
  }
  if (tj) {
    file = path.join(os.tmpdir(), `kiln-${process.pid}-tokenizer.json`);
    fs.writeFileSync(file, JSON.stringify(tj));
  }
  const tok = Tokenizer.fromFile(file);
  if (tj) fs.unlinkSync(file);
  texts = (inp ? readInp(inp) : []).concat(texts);
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
    const merges = tj.model.merges.map((m) => (Array.isArray(m) ? m.join(' ') : m)).join('\n');
    s += '"vocab_source": ' + JSON.stringify(source) + ',\n';
    s += '"merges_sha256": ' + JSON.stringify(crypto.createHash('sha256').update(merges).digest('hex')) + ',\n';
    tj.model.vocab = null;
    tj.model.merges = null;
    s += '"tokenizer_json": ' + JSON.stringify(JSON.stringify(tj)) + ',\n';
  }
  s += '"cases": [\n' + cases.map((c) => JSON.stringify(c)).join(',\n') + '\n]}\n';
  process.stdout.write(s);
}
main().catch((e) => { console.error(e); process.exit(1); });
