// check.mjs URL KEY MODEL: drives a running `kiln serve` with the official
// OpenAI Node SDK and fails (exit 1) on any mismatch with OpenAI's shapes.
// run.sh starts the server and calls it; .ci/run runs run.sh when node is
// installed.
import OpenAI from "openai";
import assert from "node:assert/strict";

const [url, apiKey, model] = process.argv.slice(2);
const client = new OpenAI({ baseURL: url + "/v1", apiKey, maxRetries: 0 });
const greedy = { model, temperature: 0, max_tokens: 24 };
let checks = 0;
const check = async (name, fn) => {
  try {
    await fn();
    checks++;
    console.log("ok   " + name);
  } catch (e) {
    console.error("FAIL " + name + ": " + (e.stack || e));
    process.exitCode = 1;
  }
};

await check("completion, whole and streamed agree", async () => {
  const whole = await client.completions.create({ ...greedy, prompt: "Once upon a time" });
  assert.equal(whole.object, "text_completion");
  assert.equal(whole.choices.length, 1);
  assert.ok(whole.choices[0].text.length > 0);
  assert.equal(whole.usage.total_tokens, whole.usage.prompt_tokens + whole.usage.completion_tokens);
  const stream = await client.completions.create({ ...greedy, prompt: "Once upon a time", stream: true, stream_options: { include_usage: true } });
  let text = "", usage = null, finish = null;
  for await (const chunk of stream) {
    for (const c of chunk.choices) {
      text += c.text;
      if (c.finish_reason) finish = c.finish_reason;
    }
    if (chunk.usage) usage = chunk.usage;
  }
  assert.equal(text, whole.choices[0].text);
  assert.equal(finish, whole.choices[0].finish_reason);
  assert.deepEqual(usage.completion_tokens, whole.usage.completion_tokens);
});

await check("chat, whole and streamed agree", async () => {
  const messages = [{ role: "user", content: "Tell me a story." }];
  const whole = await client.chat.completions.create({ ...greedy, messages });
  assert.equal(whole.object, "chat.completion");
  assert.equal(whole.choices[0].message.role, "assistant");
  const stream = await client.chat.completions.create({ ...greedy, messages, stream: true, stream_options: { include_usage: true } });
  let text = "", role = null, usage = null;
  for await (const chunk of stream) {
    for (const c of chunk.choices) {
      if (c.delta.role) role = c.delta.role;
      if (c.delta.content) text += c.delta.content;
    }
    if (chunk.usage) usage = chunk.usage;
  }
  assert.equal(role, "assistant");
  assert.equal(text, whole.choices[0].message.content);
  assert.equal(usage.prompt_tokens, whole.usage.prompt_tokens);
});

await check("n = 2 and seed reproducibility", async () => {
  const req = { model, prompt: "The dog", max_tokens: 16, temperature: 1, seed: 7, n: 2 };
  const a = await client.completions.create(req);
  const b = await client.completions.create(req);
  assert.equal(a.choices.length, 2);
  assert.deepEqual(a.choices.map((c) => c.index).sort(), [0, 1]);
  assert.deepEqual(a.choices.map((c) => c.text), b.choices.map((c) => c.text));
});

await check("logprobs in both shapes", async () => {
  const c = await client.completions.create({ ...greedy, max_tokens: 5, prompt: "Lily", logprobs: 2 });
  const lp = c.choices[0].logprobs;
  assert.equal(lp.tokens.length, c.usage.completion_tokens);
  assert.equal(lp.tokens.join(""), c.choices[0].text);
  assert.ok(lp.token_logprobs.every((x) => x <= 0));
  const chat = await client.chat.completions.create({ ...greedy, max_tokens: 5, messages: [{ role: "user", content: "hi" }], logprobs: true, top_logprobs: 2 });
  const content = chat.choices[0].logprobs.content;
  assert.equal(content.length, chat.usage.completion_tokens);
  assert.ok(content.every((e) => e.top_logprobs.length === 2 && e.logprob <= 0));
});

await check("stop string", async () => {
  const full = (await client.completions.create({ ...greedy, prompt: "Once upon a time" })).choices[0].text;
  const stop = full.slice(10, 13);
  const r = await client.completions.create({ ...greedy, prompt: "Once upon a time", stop: [stop] });
  assert.equal(r.choices[0].text, full.slice(0, full.indexOf(stop)));
  assert.equal(r.choices[0].finish_reason, "stop");
});

await check("cached tokens on a repeated prefix", async () => {
  const prefix = "Once upon a time, there was a little girl named Lily. She loved to play outside in the park with her friends. ";
  await client.completions.create({ ...greedy, max_tokens: 2, prompt: prefix + "One day" });
  const r = await client.completions.create({ ...greedy, max_tokens: 2, prompt: prefix + "Then" });
  assert.ok(r.usage.prompt_tokens_details.cached_tokens >= 16, JSON.stringify(r.usage));
});

await check("error statuses", async () => {
  const expect = async (status, fn) => {
    try {
      await fn();
    } catch (e) {
      assert.ok(e instanceof OpenAI.APIError, String(e));
      assert.equal(e.status, status, e.message);
      assert.ok(e.error && e.error.message, JSON.stringify(e.error));
      return;
    }
    assert.fail("no error; want " + status);
  };
  const wrongKey = new OpenAI({ baseURL: url + "/v1", apiKey: "wrong", maxRetries: 0 });
  await expect(401, () => wrongKey.completions.create({ ...greedy, prompt: "a" }));
  await expect(404, () => client.completions.create({ ...greedy, model: "no-such-model", prompt: "a" }));
  await expect(400, () => client.completions.create({ ...greedy, prompt: "a", temperature: -1 }));
  await expect(400, () => client.completions.create({ ...greedy, prompt: "a", max_tokens: 10000000 }));
  await expect(413, () => client.completions.create({ ...greedy, prompt: "a".repeat(9 << 20) }));
});

await check("structured output: the SDK's parse helper and tool calls", async () => {
  const schema = {
    type: "object",
    properties: { name: { type: "string", maxLength: 20 }, happy: { type: "boolean" } },
    required: ["name", "happy"],
    additionalProperties: false,
  };
  let parsed = 0;
  for (let seed = 0; seed < 4; seed++) {
    let r;
    try {
      r = await client.chat.completions.parse({
        model, seed, temperature: 0.8, max_tokens: 200,
        messages: [{ role: "user", content: "Who is in the story?" }],
        response_format: { type: "json_schema", json_schema: { name: "character", schema, strict: true } },
      });
    } catch (e) {
      if (/length limit/.test(String(e && e.message))) continue; // ran out of tokens inside the object
      throw e;
    }
    const c = r.choices[0];
    assert.equal(typeof c.message.parsed.name, "string");
    assert.equal(typeof c.message.parsed.happy, "boolean");
    parsed++;
  }
  assert.ok(parsed > 0, "no reply finished within 200 tokens");
  const tools = [{ type: "function", function: { name: "set_mood", parameters: { type: "object", properties: { mood: { enum: ["happy", "sad"] } }, required: ["mood"], additionalProperties: false } } }];
  const t = await client.chat.completions.create({
    model, temperature: 0, max_tokens: 200, tools, tool_choice: { type: "function", function: { name: "set_mood" } },
    messages: [{ role: "user", content: "How does Lily feel?" }],
  });
  assert.equal(t.choices[0].finish_reason, "tool_calls");
  const call = t.choices[0].message.tool_calls[0];
  assert.equal(call.function.name, "set_mood");
  assert.ok(["happy", "sad"].includes(JSON.parse(call.function.arguments).mood));
});

await check("models list", async () => {
  const list = await client.models.list();
  const ids = [];
  for await (const m of list) ids.push(m.id);
  assert.ok(ids.includes(model), ids.join(","));
});

console.log(`${checks} checks passed` + (process.exitCode ? ", some failed" : ""));
