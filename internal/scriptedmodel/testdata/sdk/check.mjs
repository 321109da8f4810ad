// Drives internal/scriptedmodel with the providers' own SDKs (its Go test runs
// this with node and compares what it prints). Each call asks about the
// weather in Paris with a get_weather tool, then sends the model's turn back
// as the SDK gave it (thinking and its signature, reasoning, thought
// signatures) with the tool's result; every protocol is called as JSON and
// as a stream, and the SDKs' own accumulators (finalMessage,
// finalChatCompletion, finalResponse) read the streams.
// Usage: SCRIPTED_URL=http://127.0.0.1:port node check.mjs
import Anthropic from "@anthropic-ai/sdk";
import { GoogleGenAI } from "@google/genai";
import OpenAI from "openai";

const baseURL = process.env.SCRIPTED_URL;
const anthropic = new Anthropic({ baseURL, apiKey: "sk-ant-test", maxRetries: 0 });
const openai = new OpenAI({ baseURL: baseURL + "/v1", apiKey: "sk-test", maxRetries: 0 });
const gemini = new GoogleGenAI({ apiKey: "test-key", httpOptions: { baseUrl: baseURL } });
const out = {};

const weather = { name: "get_weather", description: "Current weather of a city", input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } };
const question = "What is the weather in Paris?";

async function anthropicRound(stream) {
  const params = { model: "claude-sonnet-4-5", max_tokens: 2048, thinking: { type: "enabled", budget_tokens: 1024 }, system: "You answer briefly.", tools: [weather], messages: [{ role: "user", content: question }] };
  const first = stream ? await anthropic.messages.stream(params).finalMessage() : await anthropic.messages.create(params);
  const call = first.content.find((b) => b.type === "tool_use");
  params.messages.push({ role: "assistant", content: first.content });
  params.messages.push({ role: "user", content: [{ type: "tool_result", tool_use_id: call.id, content: "18C and sunny" }] });
  const second = stream ? await anthropic.messages.stream(params).finalMessage() : await anthropic.messages.create(params);
  return { first: { stop: first.stop_reason, blocks: first.content.map((b) => b.type), text: first.content.find((b) => b.type === "text")?.text, call: { name: call.name, input: call.input } }, second: { stop: second.stop_reason, text: second.content[0].text, output_tokens: second.usage.output_tokens } };
}

async function chatRound(stream) {
  const tools = [{ type: "function", function: { name: weather.name, description: weather.description, parameters: weather.input_schema } }];
  const messages = [{ role: "system", content: "You answer briefly." }, { role: "user", content: question }];
  const create = (p) => stream ? openai.chat.completions.stream({ ...p, stream_options: { include_usage: true } }).finalChatCompletion() : openai.chat.completions.create(p);
  const first = await create({ model: "gpt-4o", tools, messages });
  const msg = first.choices[0].message;
  const call = msg.tool_calls[0];
  messages.push(msg);
  messages.push({ role: "tool", tool_call_id: call.id, content: "18C and sunny" });
  const second = await create({ model: "gpt-4o", tools, messages });
  return { first: { finish: first.choices[0].finish_reason, text: msg.content, call: { name: call.function.name, input: JSON.parse(call.function.arguments) } }, second: { finish: second.choices[0].finish_reason, text: second.choices[0].message.content, completion_tokens: second.usage?.completion_tokens } };
}

// finalResponse() leaves output_text unset (the SDK adds it only to parsed
// responses), so the text is read from the output items.
const outputText = (r) => r.output.filter((i) => i.type === "message").flatMap((i) => i.content).map((c) => c.text).join("");

async function responsesRound(stream) {
  const tools = [{ type: "function", name: weather.name, description: weather.description, parameters: weather.input_schema, strict: false }];
  const input = [{ role: "user", content: question }];
  const create = (p) => stream ? openai.responses.stream(p).finalResponse() : openai.responses.create(p);
  const first = await create({ model: "gpt-5", instructions: "You answer briefly.", tools, input });
  const call = first.output.find((i) => i.type === "function_call");
  input.push(...first.output);
  input.push({ type: "function_call_output", call_id: call.call_id, output: "18C and sunny" });
  const second = await create({ model: "gpt-5", instructions: "You answer briefly.", tools, input });
  return { first: { items: first.output.map((i) => i.type), text: outputText(first), call: { name: call.name, input: JSON.parse(call.arguments) } }, second: { status: second.status, text: outputText(second), output_tokens: second.usage.output_tokens } };
}

async function geminiRound(stream) {
  const config = { systemInstruction: "You answer briefly.", tools: [{ functionDeclarations: [{ name: weather.name, description: weather.description, parametersJsonSchema: weather.input_schema }] }] };
  const contents = [{ role: "user", parts: [{ text: question }] }];
  const call = async () => {
    if (!stream) {
      const r = await gemini.models.generateContent({ model: "gemini-2.5-pro", contents, config });
      return { content: r.candidates[0].content, finish: r.candidates[0].finishReason, usage: r.usageMetadata };
    }
    const parts = [];
    let finish, usage;
    for await (const chunk of await gemini.models.generateContentStream({ model: "gemini-2.5-pro", contents, config })) {
      parts.push(...(chunk.candidates?.[0]?.content?.parts ?? []).filter((p) => p.text !== ""));
      finish = chunk.candidates?.[0]?.finishReason ?? finish;
      usage = chunk.usageMetadata ?? usage;
    }
    return { content: { role: "model", parts }, finish, usage };
  };
  const first = await call();
  const fc = first.content.parts.find((p) => p.functionCall);
  contents.push(first.content);
  contents.push({ role: "user", parts: [{ functionResponse: { name: fc.functionCall.name, response: { output: "18C and sunny" } } }] });
  const second = await call();
  const text = (c) => c.parts.filter((p) => p.text && !p.thought).map((p) => p.text).join("");
  return { first: { finish: first.finish, thought: first.content.parts.some((p) => p.thought), text: text(first.content), call: { name: fc.functionCall.name, input: fc.functionCall.args }, signed: typeof fc.thoughtSignature === "string" }, second: { finish: second.finish, text: text(second.content), output_tokens: second.usage.candidatesTokenCount } };
}

out.anthropic = await anthropicRound(false);
out.anthropic_stream = await anthropicRound(true);
out.count_tokens = (await anthropic.messages.countTokens({ model: "claude-sonnet-4-5", messages: [{ role: "user", content: question }] })).input_tokens > 0;
out.chat = await chatRound(false);
out.chat_stream = await chatRound(true);
out.responses = await responsesRound(false);
out.responses_stream = await responsesRound(true);
out.gemini = await geminiRound(false);
out.gemini_stream = await geminiRound(true);
try {
  await anthropic.messages.create({ model: "claude-sonnet-4-5", max_tokens: 10, messages: [{ role: "user", content: "fail" }] });
  out.error = "no error";
} catch (e) {
  out.error = { status: e.status, type: e.error?.error?.type };
}
console.log(JSON.stringify(out, null, 1));
