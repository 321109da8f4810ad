// Calls ctxc's proxy, when ctxc has bearer tokens, with the official OpenAI
// and Anthropic SDKs: without ctxc's token (only the provider key), then
// with it in X-Ctxc-Token as the SDKs' default headers. Prints what each
// call gave as one JSON object; integration/proxy_broken_test.go checks it.
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";

const out = {};
const withToken = { "X-Ctxc-Token": process.env.CTXC_TOKEN };

async function attempt(name, run) {
  try {
    out[name] = { answer: await run() };
  } catch (err) {
    out[name] = { error: err.constructor.name, status: err.status, message: String(err.message) };
  }
}

const chat = { model: "gpt-4o-mini", messages: [{ role: "user", content: "Hello?" }] };
const openaiAnswer = async (client) => (await client.chat.completions.create(chat)).choices[0].message.content;
await attempt("openaiWithout", () => openaiAnswer(new OpenAI({ maxRetries: 0 })));
await attempt("openaiWith", () => openaiAnswer(new OpenAI({ maxRetries: 0, defaultHeaders: withToken })));

const messages = { model: "claude-sonnet-4-5", max_tokens: 64, messages: [{ role: "user", content: "Hello?" }] };
const anthropicAnswer = async (client) => (await client.messages.create(messages)).content.map((b) => b.text ?? "").join("");
await attempt("anthropicWithout", () => anthropicAnswer(new Anthropic({ maxRetries: 0 })));
await attempt("anthropicWith", () => anthropicAnswer(new Anthropic({ maxRetries: 0, defaultHeaders: withToken })));

console.log(JSON.stringify(out));
