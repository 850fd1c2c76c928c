// oracle-embed.mjs MODEL IDS: llama.cpp's embedding (node-llama-cpp's
// createEmbeddingContext, getEmbeddingFor) of the token ids IDS (comma
// separated), printed as JSON {tokens, pooling, embedding}. tokens are
// the ids llama.cpp ran (node-llama-cpp prepends BOS where the vocabulary
// asks); embedding is llama.cpp's vector as returned (not normalised).
// Run from a folder whose node_modules holds node-llama-cpp
// (scripts/oracle-embed-goldens.sh copies it there).
import {getLlama} from "node-llama-cpp";

const [modelPath, idsArg] = process.argv.slice(2);
const llama = await getLlama({gpu: false, logLevel: "error"});
const model = await llama.loadModel({modelPath});
const ctx = await model.createEmbeddingContext({contextSize: 256});
const ids = idsArg.split(",").map(Number);
const ran = ids.slice();
ctx._prepareInput(ran); // what getEmbeddingFor runs: BOS prepended as the vocabulary asks
const e = await ctx.getEmbeddingFor(ids);
process.stdout.write(JSON.stringify({tokens: ran, pooling: ctx._llamaContext._ctx.getPoolingType?.() ?? null, embedding: Array.from(e.vector)}) + "\n");
await ctx.dispose();
await model.dispose();
