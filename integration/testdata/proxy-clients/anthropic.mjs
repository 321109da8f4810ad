// Drives the official Anthropic SDK through ctxc's proxy: only
// ANTHROPIC_BASE_URL points elsewhere. Messages with a tool call, not
// streamed and streamed; count_tokens; a long conversation in a small window
// (X-Ctxc-Max-Context-Tokens), which ctxc rewrites; and a window too small
// for what must be kept, which ctxc refuses as Anthropic does. Prints what
// each call gave as one JSON object; integration/proxy_test.go checks it.
import Anthropic from "@anthropic-ai/sdk";

const client = new Anthropic({ maxRetries: 0 });
const model = "claude-sonnet-4-5";
const tools = [{
  name: "get_weather",
  description: "The weather in a city now.",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
}];
const system = "You answer weather questions with the get_weather tool.";
const out = {};

async function toolLoop(stream) {
  const messages = [{ role: "user", content: "What is the weather in Oslo?" }];
  const send = (extra) => stream
    ? client.messages.stream({ model, max_tokens: 1024, system, messages, tools, ...extra }).finalMessage()
    : client.messages.create({ model, max_tokens: 1024, system, messages, tools, ...extra });
  const first = await send({ metadata: { user_id: "sdk-test" } });
  const call = first.content.find((b) => b.type === "tool_use");
  messages.push({ role: "assistant", content: first.content });
  messages.push({ role: "user", content: [{ type: "tool_result", tool_use_id: call.id, content: JSON.stringify({ city: "Oslo", celsius: -3 }) }] });
  const second = await send({});
  return { call: call.name, input: call.input, answer: second.content.filter((b) => b.type === "text").map((b) => b.text).join(""), stop: second.stop_reason };
}

out.messages = await toolLoop(false);
out.messagesStream = await toolLoop(true);
out.countTokens = await client.messages.countTokens({ model, system, messages: [{ role: "user", content: "How many tokens is this?" }] });

// A long conversation in a small window: ctxc rewrites it, the SDK does not notice.
{
  const messages = [{ role: "user", content: "The nightly build fails; find out why." }];
  for (let i = 0; i < 12; i++) {
    messages.push({ role: "assistant", content: [{ type: "tool_use", id: `toolu_log_${i}`, name: "read_log", input: { part: i } }] });
    messages.push({ role: "user", content: [{ type: "tool_result", tool_use_id: `toolu_log_${i}`, content: `part ${i} of the build log:\n` + `step ${i}: compiling module m${i} ... ok\n`.repeat(40) }] });
    messages.push({ role: "assistant", content: `Part ${i} shows nothing wrong.` });
    messages.push({ role: "user", content: `Look at part ${i + 1} then.` });
  }
  messages.push({ role: "assistant", content: "Noted." });
  messages.push({ role: "user", content: [{ type: "text", text: "What did you find? The error code is ERR_NIGHTLY_42.", cache_control: { type: "ephemeral" } }] });
  const { data, response } = await client.messages
    .create({ model, max_tokens: 512, system: [{ type: "text", text: "You are a build assistant.", cache_control: { type: "ephemeral" } }], messages,
      tools: [{ name: "read_log", input_schema: { type: "object", properties: { part: { type: "integer" } } } }], thinking: { type: "enabled", budget_tokens: 256 } },
      { headers: { "X-Ctxc-Max-Context-Tokens": "3000" } })
    .withResponse();
  out.compacted = {
    answer: data.content.filter((b) => b.type === "text").map((b) => b.text).join(""),
    forwarded: response.headers.get("x-ctxc-forwarded"),
    compacted: response.headers.get("x-ctxc-compacted"),
    before: Number(response.headers.get("x-ctxc-tokens-before")),
    after: Number(response.headers.get("x-ctxc-tokens-after")),
  };
}

// A window smaller than what must be kept: Anthropic's invalid_request_error.
try {
  await client.messages.create({ model, max_tokens: 100, messages: [{ role: "user", content: "Summarize the design document: " + "lorem ipsum ".repeat(400) }] },
    { headers: { "X-Ctxc-Max-Context-Tokens": "200" } });
  out.refused = { error: "none" };
} catch (err) {
  out.refused = { error: err.constructor.name, status: err.status, type: err.error?.error?.type, message: err.error?.error?.message };
}

console.log(JSON.stringify(out));
