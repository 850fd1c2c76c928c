// cases.mjs URL KEY MODEL: client-compatibility cases. Drives a running
// OpenAI-compatible server (kiln serve, llama-server, vLLM, ...) with the
// client libraries people build on, each used as its documentation shows:
//
//	openai      the official OpenAI Node SDK: chat (whole, streamed, the
//	            parse helper with a zod schema, a tool round trip through
//	            the SDK's stream helper), Responses (create and stream, with
//	            a function tool round trip), embeddings
//	ai-sdk      the Vercel AI SDK (ai + @ai-sdk/openai-compatible):
//	            generateText, streamText, generateObject with a zod schema,
//	            a tool call round trip run by the SDK's own step loop, a
//	            streamed tool call
//	langchain   LangChain JS (@langchain/openai ChatOpenAI): invoke, stream,
//	            withStructuredOutput (json schema and function calling),
//	            bindTools with a ToolMessage round trip, a streamed tool call
//	anthropic   @anthropic-ai/sdk on /v1/messages: create, stream, a
//	            tool_use / tool_result round trip whole and streamed,
//	            countTokens
//
// Each case prints "ok   NAME" or "FAIL NAME: why"; the last line is
// "clients: N passed, N failed". Exit status 1 when a case failed, unless
// COUNT_ONLY=1 (counting another server's passes). CASES=REGEX runs the
// cases whose name matches; CASE_TIMEOUT_MS bounds each (default 20000).
//
// run.sh serves stories260K (260K parameters, no chat template of its
// own) with chatml-tools.jinja, ChatML with Hermes tool calls. The model
// may be that tiny: a
// case checks the shapes the library parsed, never what the text says.
// Tool calls are asked for by name (tool_choice), which constrains the
// reply: a model too small to decide to call a tool still makes the call,
// and the round trip's second turn is free text. Replies are short
// (max_tokens 16-64) to keep the run in seconds.
import OpenAI from "openai";
import { zodResponseFormat, zodTextFormat } from "openai/helpers/zod";
import Anthropic from "@anthropic-ai/sdk";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, streamText, generateObject, Output, tool, stepCountIs } from "ai";
import { ChatOpenAI } from "@langchain/openai";
import { HumanMessage, ToolMessage } from "@langchain/core/messages";
import { z } from "zod";
import assert from "node:assert/strict";

const [url, apiKey, model] = process.argv.slice(2);
if (!model) {
  console.error("usage: node cases.mjs URL KEY MODEL");
  process.exit(2);
}
globalThis.AI_SDK_LOG_WARNINGS = false; // generateObject's deprecation notice, on every call
const only = process.env.CASES ? new RegExp(process.env.CASES) : null;
const timeoutMs = Number(process.env.CASE_TIMEOUT_MS || 20000); // per case; one on stories260K takes 10-300 ms on kiln

let passed = 0, failed = 0;
const check = async (name, fn) => {
  if (only && !only.test(name)) return;
  let timer;
  try {
    await Promise.race([
      fn(),
      new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`no answer in ${timeoutMs} ms`)), timeoutMs); }),
    ]);
    passed++;
    console.log("ok   " + name);
  } catch (e) {
    failed++;
    const msg = String((e && e.message) || e).split("\n").slice(0, 4).join(" | ");
    console.log("FAIL " + name + ": " + msg.slice(0, 400));
    if (process.env.VERBOSE) console.error(e);
  } finally {
    clearTimeout(timer);
  }
};

// A tool whose arguments are short under any model: an enum.
const weatherParams = {
  type: "object",
  properties: { city: { type: "string", enum: ["Paris", "Tokyo", "Lima"] } },
  required: ["city"],
  additionalProperties: false,
};
const weatherZod = z.object({ city: z.enum(["Paris", "Tokyo", "Lima"]) });
const weatherOf = (city) => JSON.stringify({ city, sky: "sunny", celsius: 21 });
const cities = ["Paris", "Tokyo", "Lima"];
// A structured reply that finishes in a few tokens.
const characterZod = z.object({ name: z.string().max(12), happy: z.boolean() });
const ask = "What is the weather in Paris?";

// ---------------------------------------------------------------- openai
const openai = new OpenAI({ baseURL: url + "/v1", apiKey, maxRetries: 0 });
const greedy = { model, temperature: 0 };
const chatTools = [{ type: "function", function: { name: "get_weather", description: "The weather in a city", parameters: weatherParams } }];

await check("openai: chat.completions.create", async () => {
  const r = await openai.chat.completions.create({ ...greedy, max_tokens: 16, messages: [{ role: "user", content: "Tell me a story." }] });
  assert.equal(r.object, "chat.completion");
  assert.equal(r.choices[0].message.role, "assistant");
  assert.equal(typeof r.choices[0].message.content, "string");
  assert.ok(["stop", "length"].includes(r.choices[0].finish_reason), r.choices[0].finish_reason);
  assert.equal(r.usage.total_tokens, r.usage.prompt_tokens + r.usage.completion_tokens);
});

await check("openai: chat stream with usage", async () => {
  const stream = await openai.chat.completions.create({ ...greedy, max_tokens: 16, stream: true, stream_options: { include_usage: true },
    messages: [{ role: "user", content: "Tell me a story." }] });
  let text = "", finish = null, usage = null;
  for await (const chunk of stream) {
    for (const c of chunk.choices) {
      text += c.delta.content ?? "";
      finish = c.finish_reason ?? finish;
    }
    if (chunk.usage) usage = chunk.usage;
  }
  assert.ok(text.length > 0);
  assert.ok(finish);
  assert.ok(usage && usage.completion_tokens > 0, JSON.stringify(usage));
});

await check("openai: chat.completions.parse with zodResponseFormat", async () => {
  const r = await openai.chat.completions.parse({ ...greedy, max_tokens: 64, messages: [{ role: "user", content: "Who is in the story?" }],
    response_format: zodResponseFormat(characterZod, "character") });
  const p = r.choices[0].message.parsed;
  assert.equal(typeof p.name, "string");
  assert.equal(typeof p.happy, "boolean");
});

await check("openai: tool round trip (named tool_choice)", async () => {
  const messages = [{ role: "user", content: ask }];
  const r = await openai.chat.completions.create({ ...greedy, max_tokens: 64, messages, tools: chatTools,
    tool_choice: { type: "function", function: { name: "get_weather" } } });
  const m = r.choices[0].message;
  assert.equal(r.choices[0].finish_reason, "tool_calls");
  assert.equal(m.tool_calls.length, 1);
  const call = m.tool_calls[0];
  assert.equal(call.function.name, "get_weather");
  const { city } = JSON.parse(call.function.arguments);
  assert.ok(cities.includes(city), city);
  messages.push(m, { role: "tool", tool_call_id: call.id, content: weatherOf(city) });
  const r2 = await openai.chat.completions.create({ ...greedy, max_tokens: 16, messages, tools: chatTools, tool_choice: "none" });
  assert.equal(typeof r2.choices[0].message.content, "string");
  assert.ok(!r2.choices[0].message.tool_calls?.length);
});

await check("openai: chat.completions.stream helper with a tool call", async () => {
  const stream = openai.chat.completions.stream({ ...greedy, max_tokens: 64, messages: [{ role: "user", content: ask }],
    tools: [{ type: "function", function: { name: "get_weather", parameters: weatherParams, strict: true } }],
    tool_choice: { type: "function", function: { name: "get_weather" } } });
  let deltas = "";
  stream.on("tool_calls.function.arguments.delta", (e) => { deltas += e.arguments_delta; });
  const final = await stream.finalChatCompletion();
  const call = final.choices[0].message.tool_calls[0];
  assert.equal(call.function.name, "get_weather");
  assert.equal(deltas, call.function.arguments);
  assert.ok(cities.includes(call.function.parsed_arguments.city), JSON.stringify(call.function.parsed_arguments));
});

await check("openai: tool arguments stream in pieces", async () => {
  const stream = await openai.chat.completions.create({ ...greedy, max_tokens: 64, stream: true, messages: [{ role: "user", content: ask }],
    tools: chatTools, tool_choice: { type: "function", function: { name: "get_weather" } } });
  const pieces = [];
  let finish = null;
  for await (const chunk of stream) {
    for (const c of chunk.choices) {
      for (const d of c.delta.tool_calls ?? []) if (d.function?.arguments) pieces.push(d.function.arguments);
      finish = c.finish_reason ?? finish;
    }
  }
  assert.equal(finish, "tool_calls");
  assert.ok(pieces.length > 1, "arguments came in " + pieces.length + " delta(s)");
  assert.ok(cities.includes(JSON.parse(pieces.join("")).city));
});

await check("openai: required tool_choice with parallel_tool_calls false", async () => {
  // 65 tokens on stories260K: [{"name": "get_weather", "parameters": {...}}]
  const r = await openai.chat.completions.create({ ...greedy, max_tokens: 160, messages: [{ role: "user", content: ask }],
    tools: chatTools, tool_choice: "required", parallel_tool_calls: false });
  assert.equal(r.choices[0].finish_reason, "tool_calls");
  assert.equal(r.choices[0].message.tool_calls.length, 1);
  assert.equal(r.choices[0].message.content, null);
});

await check("openai: text content parts", async () => {
  const parts = [{ type: "text", text: "Tell me" }, { type: "text", text: "a story." }];
  const a = await openai.chat.completions.create({ ...greedy, max_tokens: 8, messages: [{ role: "user", content: parts }] });
  const b = await openai.chat.completions.create({ ...greedy, max_tokens: 8, messages: [{ role: "user", content: "Tell me\na story." }] });
  assert.equal(a.usage.prompt_tokens, b.usage.prompt_tokens); // joined with "\n", as vLLM joins them
  assert.equal(a.choices[0].message.content, b.choices[0].message.content);
});

await check("openai: completions echo + logprobs, max_tokens 0 (lm-eval scoring)", async () => {
  const r = await openai.completions.create({ model, prompt: "Once upon a time", echo: true, logprobs: 1, max_tokens: 0, temperature: 0 });
  const lp = r.choices[0].logprobs;
  assert.equal(r.choices[0].text, "Once upon a time");
  assert.equal(lp.tokens.length, r.usage.prompt_tokens); // a BOS token included, as vLLM echoes it
  assert.equal(lp.token_logprobs[0], null);
  assert.ok(lp.token_logprobs.slice(1).every((x) => typeof x === "number" && x <= 0), JSON.stringify(lp.token_logprobs));
});

await check("openai: unknown model is a 404 APIError", async () => {
  await assert.rejects(openai.chat.completions.create({ model: "no-such-model", max_tokens: 4, messages: [{ role: "user", content: "hi" }] }),
    (e) => e instanceof OpenAI.NotFoundError && typeof e.error?.message === "string");
});

const respTools = [{ type: "function", name: "get_weather", description: "The weather in a city", parameters: weatherParams, strict: true }];

await check("openai: responses.create", async () => {
  const r = await openai.responses.create({ ...greedy, max_output_tokens: 16, instructions: "You tell stories.", input: "Tell me a story." });
  assert.equal(r.object, "response");
  assert.ok(["completed", "incomplete"].includes(r.status), r.status);
  assert.equal(typeof r.output_text, "string");
  assert.ok(r.output_text.length > 0);
  assert.ok(r.usage.output_tokens > 0);
});

await check("openai: responses.create function tool round trip", async () => {
  const input = [{ role: "user", content: ask }];
  const r = await openai.responses.create({ ...greedy, max_output_tokens: 64, input, tools: respTools,
    tool_choice: { type: "function", name: "get_weather" } });
  const call = r.output.find((o) => o.type === "function_call");
  assert.ok(call, JSON.stringify(r.output));
  assert.equal(call.name, "get_weather");
  const { city } = JSON.parse(call.arguments);
  assert.ok(cities.includes(city), city);
  input.push(...r.output, { type: "function_call_output", call_id: call.call_id, output: weatherOf(city) });
  const r2 = await openai.responses.create({ ...greedy, max_output_tokens: 16, input, tools: respTools, tool_choice: "none" });
  assert.equal(typeof r2.output_text, "string");
  assert.ok(r2.output.every((o) => o.type !== "function_call"));
});

await check("openai: responses.stream text", async () => {
  const stream = openai.responses.stream({ ...greedy, max_output_tokens: 16, input: "Tell me a story." });
  let text = "";
  stream.on("response.output_text.delta", (e) => { text += e.delta; });
  const final = await stream.finalResponse();
  assert.ok(text.length > 0);
  assert.equal(final.output_text, text);
});

await check("openai: responses.stream function tool round trip", async () => {
  const input = [{ role: "user", content: ask }];
  const stream = openai.responses.stream({ ...greedy, max_output_tokens: 64, input, tools: respTools,
    tool_choice: { type: "function", name: "get_weather" } });
  let deltas = "", n = 0;
  stream.on("response.function_call_arguments.delta", (e) => { deltas += e.delta; n++; });
  const final = await stream.finalResponse();
  const call = final.output.find((o) => o.type === "function_call");
  assert.ok(call, JSON.stringify(final.output));
  assert.equal(deltas, call.arguments);
  assert.ok(n > 1, "arguments came in " + n + " delta(s)");
  const { city } = call.parsed_arguments ?? JSON.parse(call.arguments);
  assert.ok(cities.includes(city), city);
  input.push(...final.output, { type: "function_call_output", call_id: call.call_id, output: weatherOf(city) });
  const s2 = openai.responses.stream({ ...greedy, max_output_tokens: 16, input });
  const f2 = await s2.finalResponse();
  assert.equal(typeof f2.output_text, "string");
});

await check("openai: responses.parse with zodTextFormat", async () => {
  const r = await openai.responses.parse({ ...greedy, max_output_tokens: 64, input: "Who is in the story?",
    text: { format: zodTextFormat(characterZod, "character") } });
  assert.equal(typeof r.output_parsed.name, "string");
  assert.equal(typeof r.output_parsed.happy, "boolean");
});

await check("openai: embeddings.create", async () => {
  const r = await openai.embeddings.create({ model, input: ["a cat", "a dog"] });
  assert.equal(r.data.length, 2);
  const v = r.data[0].embedding;
  assert.ok(v.length > 0);
  const norm = Math.hypot(...v);
  assert.ok(Math.abs(norm - 1) < 1e-3, "norm " + norm);
});

// ---------------------------------------------------------------- ai-sdk
const provider = createOpenAICompatible({ name: "target", baseURL: url + "/v1", apiKey, includeUsage: true, supportsStructuredOutputs: true });
const lm = provider.chatModel(model);
const aiTools = {
  get_weather: tool({ description: "The weather in a city", inputSchema: weatherZod, execute: async ({ city }) => JSON.parse(weatherOf(city)) }),
};
// The first step must call get_weather, the second answers in text.
const aiSteps = ({ stepNumber }) => (stepNumber === 0 ? { toolChoice: { type: "tool", toolName: "get_weather" } } : { toolChoice: "none" });

await check("ai-sdk: generateText", async () => {
  const r = await generateText({ model: lm, prompt: "Tell me a story.", maxOutputTokens: 16, temperature: 0, maxRetries: 0 });
  assert.ok(r.text.length > 0);
  assert.ok(["stop", "length"].includes(r.finishReason), r.finishReason);
  assert.ok(r.usage.outputTokens > 0, JSON.stringify(r.usage));
});

await check("ai-sdk: streamText", async () => {
  const r = streamText({ model: lm, prompt: "Tell me a story.", maxOutputTokens: 16, temperature: 0, maxRetries: 0, onError: () => {} });
  let text = "";
  for await (const part of r.textStream) text += part;
  assert.ok(text.length > 0);
  assert.equal(text, await r.text);
  assert.ok((await r.usage).outputTokens > 0);
});

await check("ai-sdk: generateObject with a zod schema", async () => {
  const r = await generateObject({ model: lm, schema: characterZod, prompt: "Who is in the story?", maxOutputTokens: 64, temperature: 0, maxRetries: 0 });
  assert.equal(typeof r.object.name, "string");
  assert.equal(typeof r.object.happy, "boolean");
});

await check("ai-sdk: generateText with Output.object", async () => {
  const r = await generateText({ model: lm, output: Output.object({ schema: characterZod }), prompt: "Who is in the story?",
    maxOutputTokens: 64, temperature: 0, maxRetries: 0 });
  assert.equal(typeof r.output.name, "string");
  assert.equal(typeof r.output.happy, "boolean");
});

await check("ai-sdk: tool call round trip (generateText steps)", async () => {
  const r = await generateText({ model: lm, prompt: ask, tools: aiTools, prepareStep: aiSteps, stopWhen: stepCountIs(2),
    maxOutputTokens: 48, temperature: 0, maxRetries: 0 });
  assert.equal(r.steps.length, 2);
  const call = r.steps[0].toolCalls[0];
  assert.equal(call.toolName, "get_weather");
  assert.ok(cities.includes(call.input.city), JSON.stringify(call.input));
  assert.equal(r.steps[0].toolResults[0].output.sky, "sunny");
  assert.equal(r.steps[1].toolCalls.length, 0);
  assert.equal(typeof r.text, "string");
});

await check("ai-sdk: streamText tool call round trip", async () => {
  const r = streamText({ model: lm, prompt: ask, tools: aiTools, prepareStep: aiSteps, stopWhen: stepCountIs(2),
    maxOutputTokens: 48, temperature: 0, maxRetries: 0, onError: () => {} });
  let deltas = "", inputs = 0, errors = [];
  for await (const part of r.fullStream) {
    if (part.type === "tool-input-delta") deltas += part.delta;
    if (part.type === "tool-call") inputs++;
    if (part.type === "error") errors.push(String(part.error));
  }
  assert.deepEqual(errors, []);
  const steps = await r.steps;
  assert.equal(steps.length, 2);
  const call = steps[0].toolCalls[0];
  assert.equal(call.toolName, "get_weather");
  assert.equal(inputs, 1);
  assert.deepEqual(JSON.parse(deltas), call.input);
});

// ------------------------------------------------------------- langchain
const chat = new ChatOpenAI({ model, apiKey, configuration: { baseURL: url + "/v1" }, temperature: 0, maxTokens: 48, maxRetries: 0 });
const lcTool = { type: "function", function: { name: "get_weather", description: "The weather in a city", parameters: weatherParams } };

await check("langchain: invoke", async () => {
  const m = await chat.invoke("Tell me a story.");
  assert.equal(typeof m.content, "string");
  assert.ok(m.content.length > 0);
  assert.ok(m.usage_metadata.output_tokens > 0, JSON.stringify(m.usage_metadata));
});

await check("langchain: stream", async () => {
  let text = "", n = 0;
  for await (const chunk of await chat.stream("Tell me a story.")) {
    text += chunk.content;
    n++;
  }
  assert.ok(n > 1, "chunks " + n);
  assert.ok(text.length > 0);
});

await check("langchain: withStructuredOutput (json schema)", async () => {
  const r = await chat.withStructuredOutput(characterZod, { name: "character" }).invoke("Who is in the story?");
  assert.equal(typeof r.name, "string");
  assert.equal(typeof r.happy, "boolean");
});

await check("langchain: withStructuredOutput (function calling)", async () => {
  const r = await chat.withStructuredOutput(characterZod, { name: "character", method: "functionCalling" }).invoke("Who is in the story?");
  assert.equal(typeof r.name, "string");
  assert.equal(typeof r.happy, "boolean");
});

await check("langchain: bindTools round trip", async () => {
  const messages = [new HumanMessage(ask)];
  const ai = await chat.bindTools([lcTool], { tool_choice: "get_weather" }).invoke(messages);
  assert.equal(ai.tool_calls.length, 1, JSON.stringify(ai.invalid_tool_calls));
  const call = ai.tool_calls[0];
  assert.equal(call.name, "get_weather");
  assert.ok(cities.includes(call.args.city), JSON.stringify(call.args));
  messages.push(ai, new ToolMessage({ tool_call_id: call.id, content: weatherOf(call.args.city) }));
  const reply = await chat.bindTools([lcTool], { tool_choice: "none" }).invoke(messages);
  assert.equal(typeof reply.content, "string");
  assert.equal(reply.tool_calls.length, 0);
});

await check("langchain: stream with bound tools", async () => {
  let whole;
  for await (const chunk of await chat.bindTools([lcTool], { tool_choice: "get_weather" }).stream(ask)) {
    whole = whole ? whole.concat(chunk) : chunk;
  }
  assert.equal(whole.tool_calls.length, 1, JSON.stringify(whole.tool_call_chunks));
  assert.equal(whole.tool_calls[0].name, "get_weather");
  assert.ok(cities.includes(whole.tool_calls[0].args.city), JSON.stringify(whole.tool_calls[0].args));
});

// ------------------------------------------------------------- anthropic
const anthropic = new Anthropic({ baseURL: url, apiKey, maxRetries: 0 });
const antTools = [{ name: "get_weather", description: "The weather in a city", input_schema: weatherParams }];

await check("anthropic: messages.create", async () => {
  const r = await anthropic.messages.create({ model, max_tokens: 16, temperature: 0, system: "You tell stories.",
    messages: [{ role: "user", content: "Tell me a story." }] });
  assert.equal(r.type, "message");
  assert.equal(r.role, "assistant");
  assert.equal(r.content[0].type, "text");
  assert.ok(["end_turn", "max_tokens"].includes(r.stop_reason), r.stop_reason);
  assert.ok(r.usage.output_tokens > 0);
});

await check("anthropic: messages.stream", async () => {
  const stream = anthropic.messages.stream({ model, max_tokens: 16, temperature: 0, messages: [{ role: "user", content: "Tell me a story." }] });
  let text = "";
  stream.on("text", (t) => { text += t; });
  const final = await stream.finalMessage();
  assert.ok(text.length > 0);
  assert.equal(final.content[0].text, text);
});

const antRoundTrip = async (streamed) => {
  const messages = [{ role: "user", content: ask }];
  const req = { model, max_tokens: 64, temperature: 0, messages, tools: antTools, tool_choice: { type: "tool", name: "get_weather" } };
  let r, deltas = "", n = 0;
  if (streamed) {
    const s = anthropic.messages.stream(req);
    s.on("inputJson", (partial) => { deltas += partial; n++; });
    r = await s.finalMessage();
  } else {
    r = await anthropic.messages.create(req);
  }
  assert.equal(r.stop_reason, "tool_use");
  const use = r.content.find((b) => b.type === "tool_use");
  assert.ok(use, JSON.stringify(r.content));
  assert.equal(use.name, "get_weather");
  assert.ok(cities.includes(use.input.city), JSON.stringify(use.input));
  if (streamed) {
    assert.deepEqual(JSON.parse(deltas), use.input);
    assert.ok(n > 1, "input came in " + n + " delta(s)");
  }
  messages.push({ role: "assistant", content: r.content },
    { role: "user", content: [{ type: "tool_result", tool_use_id: use.id, content: weatherOf(use.input.city) }] });
  const r2 = await anthropic.messages.create({ model, max_tokens: 16, temperature: 0, messages, tools: antTools, tool_choice: { type: "none" } });
  assert.ok(r2.content.every((b) => b.type === "text"), JSON.stringify(r2.content));
};

await check("anthropic: tool_use / tool_result round trip", () => antRoundTrip(false));
await check("anthropic: messages.stream tool_use round trip", () => antRoundTrip(true));

await check("anthropic: messages.countTokens", async () => {
  const r = await anthropic.messages.countTokens({ model, messages: [{ role: "user", content: "Tell me a story." }] });
  assert.ok(r.input_tokens > 0, JSON.stringify(r));
});

console.log(`clients: ${passed} passed, ${failed} failed`);
if (failed && process.env.COUNT_ONLY !== "1") process.exitCode = 1;
