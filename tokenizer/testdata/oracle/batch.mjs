// Prints llama.cpp's tokenize/detokenize answers for a list of texts as JSON.
// Usage (from an installed shared/oracle copy): node batch.mjs MODEL.gguf texts.json
import {getLlama} from "node-llama-cpp";
import fs from "fs";
const [modelPath, inPath] = process.argv.slice(2);
const inp = JSON.parse(fs.readFileSync(inPath, "utf8"));
const llama = await getLlama({gpu: false, logLevel: "error"});
const model = await llama.loadModel({modelPath, vocabOnly: true});
const out = {texts: [], decodes: []};
for (const text of inp.texts || []) {
  const sp = Array.from(model.tokenize(text, true)).map(Number);
  const ns = Array.from(model.tokenize(text, false)).map(Number);
  out.texts.push({text, special: sp, plain: ns, detok: model.detokenize(sp, true), detokPlain: model.detokenize(ns, true)});
}
for (const ids of inp.decodes || []) {
  out.decodes.push({ids, text: model.detokenize(ids, true)});
}
out.eog = [];
const nVocab = inp.nVocab || 0;
for (let i = 0; i < nVocab; i++) if (model._model.isEogToken(i)) out.eog.push(i);
out.bos = model.tokens.bos; out.eos = model.tokens.eos; out.eot = model.tokens.eot; out.addBos = model.tokens.shouldPrependBosToken;
process.stdout.write(JSON.stringify(out) + "\n");
process.exit(0);
