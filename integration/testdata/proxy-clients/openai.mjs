// Drives the official OpenAI SDK through ctxc's proxy: only OPENAI_BASE_URL
// points elsewhere. Chat Completions with a tool call, not streamed and
// streamed; the Responses API with a function call; a long conversation in a
// small window (X-Ctxc-Max-Context-Tokens), which ctxc rewrites; and a window
// too small for what must be kept, which ctxc refuses as OpenAI does. Prints
// what each call gave as one JSON object; integration/proxy_test.go checks it.
import OpenAI from "openai";

const client = new OpenAI({ maxRetries: 0 });
const model = "gpt-4o-mini";
const tools = [{
  type: "function",
  function: {
    name: "get_weather",
    description: "The weather in a city now.",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
}];
const out = {};

async function toolLoop(stream) {
  const messages = [
    { role: "system", content: "You answer weather questions with the get_weather tool." },
    { role: "user", content: "What is the weather in Oslo?" },
  ];
  const first = stream
    ? await client.chat.completions.stream({ model, messages, tools }).finalChatCompletion()
    : await client.chat.completions.create({ model, messages, tools });
  const call = first.choices[0].message.tool_calls[0];
  messages.push(first.choices[0].message);
  messages.push({ role: "tool", tool_call_id: call.id, content: JSON.stringify({ city: "Oslo", celsius: -3, sky: "snow" }) });
  const second = stream
    ? await client.chat.completions.stream({ model, messages, tools }).finalChatCompletion()
    : await client.chat.completions.create({ model, messages, tools });
  return { call: call.function.name, arguments: JSON.parse(call.function.arguments), answer: second.choices[0].message.content };
}

out.chat = await toolLoop(false);
out.chatStream = await toolLoop(true);

// The Responses API: a function call, its output, the answer.
{
  const rtools = [{ type: "function", name: "get_weather", description: "The weather in a city now.", strict: false,
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } }];
  const input = [{ role: "user", content: "What is the weather in Oslo?" }];
  const first = await client.responses.create({ model, instructions: "You answer weather questions with the get_weather tool.", input, tools: rtools });
  const call = first.output.find((o) => o.type === "function_call");
  input.push(...first.output);
  input.push({ type: "function_call_output", call_id: call.call_id, output: JSON.stringify({ city: "Oslo", celsius: -3 }) });
  const second = await client.responses.create({ model, instructions: "You answer weather questions with the get_weather tool.", input, tools: rtools });
  out.responses = { call: call.name, answer: second.output_text };
}

// A long conversation in a small window: ctxc rewrites it, the SDK does not notice.
{
  const messages = [{ role: "system", content: "You are a build assistant." }, { role: "user", content: "The nightly build fails; find out why." }];
  for (let i = 0; i < 12; i++) {
    messages.push({ role: "assistant", content: null, tool_calls: [{ id: `call_log_${i}`, type: "function", function: { name: "read_log", arguments: JSON.stringify({ part: i }) } }] });
    messages.push({ role: "tool", tool_call_id: `call_log_${i}`, content: `part ${i} of the build log:\n` + `step ${i}: compiling module m${i} ... ok\n`.repeat(40) });
    messages.push({ role: "assistant", content: `Part ${i} shows nothing wrong.` });
    messages.push({ role: "user", content: `Look at part ${i + 1} then.` });
  }
  messages.push({ role: "user", content: "What did you find? The error code is ERR_NIGHTLY_42." });
  const { data, response } = await client.chat.completions
    .create({ model, messages, tools: [{ type: "function", function: { name: "read_log", parameters: { type: "object", properties: { part: { type: "integer" } } } } }] },
      { headers: { "X-Ctxc-Max-Context-Tokens": "3000" } })
    .withResponse();
  out.compacted = {
    answer: data.choices[0].message.content,
    forwarded: response.headers.get("x-ctxc-forwarded"),
    compacted: response.headers.get("x-ctxc-compacted"),
    before: Number(response.headers.get("x-ctxc-tokens-before")),
    after: Number(response.headers.get("x-ctxc-tokens-after")),
  };
}

// A window smaller than what must be kept: OpenAI's context_length_exceeded.
try {
  await client.chat.completions.create({ model, messages: [{ role: "user", content: "Summarize the design document: " + "lorem ipsum ".repeat(400) }] },
    { headers: { "X-Ctxc-Max-Context-Tokens": "200" } });
  out.refused = { error: "none" };
} catch (err) {
  out.refused = { error: err.constructor.name, status: err.status, code: err.code, type: err.type, param: err.param };
}

console.log(JSON.stringify(out));
