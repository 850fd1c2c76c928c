// Prints llama.cpp's tokenize/detokenize answers for a list of texts as JSON.
// Usage (from an installed shared/oracle copy):
//   node batch.mjs MODEL.gguf texts.json [VECTORS.inp]
// Texts of the optional llama.cpp vector file are recorded by index ("inp")
// and their detokenized forms by SHA-256, rather than copied.
import {getLlama} from "node-llama-cpp";
import fs from "fs";
import crypto from "crypto";
const [modelPath, inPath, vecPath] = process.argv.slice(2);
const inp = JSON.parse(fs.readFileSync(inPath, "utf8"));
const llama = await getLlama({gpu: false, logLevel: "error"});
const model = await llama.loadModel({modelPath, vocabOnly: true});
const out = {texts: []};
const sha = (s) => crypto.createHash("sha256").update(Buffer.from(s, "utf8")).digest("hex");
const record = (text, key, hash) => {
  const sp = Array.from(model.tokenize(text, true)).map(Number);
  const ns = Array.from(model.tokenize(text, false)).map(Number);
  const d = model.detokenize(sp, true), dp = model.detokenize(ns, true);
  out.texts.push(hash ? {...key, special: sp, plain: ns, detokSHA: sha(d), detokPlainSHA: sha(dp)}
                      : {...key, special: sp, plain: ns, detok: d, detokPlain: dp});
};
for (const text of inp.texts) record(text, {text}, false);
if (vecPath) {
  const parts = fs.readFileSync(vecPath, "utf8").split("\n__ggml_vocab_test__\n");
  parts.pop(); // the file ends with the separator
  parts.forEach((text, i) => record(text, {inp: i}, true));
}
out.eog = [];
for (let i = 0; i < (inp.nVocab || 0); i++) if (model._model.isEogToken(i)) out.eog.push(i);
out.bos = model.tokens.bos; out.eos = model.tokens.eos; out.eot = model.tokens.eot;
out.addBos = model.tokens.shouldPrependBosToken;
process.stdout.write(JSON.stringify(out) + "\n");
process.exit(0);
