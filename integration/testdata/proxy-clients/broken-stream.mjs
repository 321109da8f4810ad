// Streams through ctxc's proxy from an upstream that breaks every stream off
// after three chunks, with the official OpenAI and Anthropic SDKs (only the
// base URLs point elsewhere), each both ways its users stream: iterating the
// raw stream and through the SDK's stream helper. Prints, for each, whether
// the SDK raised, what, and the text it had received by then, as one JSON
// object; integration/proxy_broken_test.go checks that every one raised.
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";

const out = {};

async function attempt(name, run) {
  const seen = [];
  try {
    await run(seen);
    out[name] = { raised: false, seen: seen.join("") };
  } catch (err) {
    out[name] = { raised: true, error: err.constructor.name, message: String(err.message), seen: seen.join("") };
  }
}

const openai = new OpenAI({ maxRetries: 0 });
const chat = { model: "gpt-4o-mini", messages: [{ role: "user", content: "What is the weather in Oslo?" }] };

await attempt("openaiIterate", async (seen) => {
  const stream = await openai.chat.completions.create({ ...chat, stream: true });
  for await (const chunk of stream) seen.push(chunk.choices[0]?.delta?.content ?? "");
});
await attempt("openaiHelper", async (seen) => {
  const stream = openai.chat.completions.stream(chat);
  stream.on("content", (delta) => seen.push(delta));
  await stream.finalChatCompletion();
});

const anthropic = new Anthropic({ maxRetries: 0 });
const messages = { model: "claude-sonnet-4-5", max_tokens: 256, messages: [{ role: "user", content: "What is the weather in Oslo?" }] };

await attempt("anthropicIterate", async (seen) => {
  const stream = await anthropic.messages.create({ ...messages, stream: true });
  for await (const event of stream) {
    if (event.type === "content_block_delta") seen.push(event.delta.text ?? "");
  }
});
await attempt("anthropicHelper", async (seen) => {
  const stream = anthropic.messages.stream(messages);
  stream.on("text", (delta) => seen.push(delta));
  await stream.finalMessage();
});

console.log(JSON.stringify(out));
