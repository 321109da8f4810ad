// A small coding agent on the openai SDK's Chat Completions API, recorded by
// scripts/record-transcripts.sh against internal/scriptedmodel: for each
// prompt of PROMPTS (a JSON array), it calls the model, runs the tool calls it
// gets (run_command, read_file, edit_file, write_file) in WORKSPACE, sends the
// results back, and stops when the model answers without calling a tool.
// Every other call streams, so both wire forms are recorded.
import { execSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import OpenAI from "openai";

const client = new OpenAI({ baseURL: process.env.SCRIPTED_URL + "/v1", apiKey: "sk-recording", maxRetries: 0 });
const workspace = process.env.WORKSPACE;
const prompts = JSON.parse(readFileSync(process.env.PROMPTS, "utf8"));

const fn = (name, description, properties) => ({ type: "function", function: { name, description, parameters: { type: "object", properties, required: Object.keys(properties) } } });
const str = { type: "string" };
const tools = [
  fn("run_command", "Run a shell command in the workspace and return its output and exit status.", { command: str }),
  fn("read_file", "Read a file of the workspace.", { path: str }),
  fn("edit_file", "Replace the exact text old by new in a file of the workspace.", { path: str, old: str, new: str }),
  fn("write_file", "Create or overwrite a file of the workspace.", { path: str, content: str }),
];

function run(call) {
  const args = JSON.parse(call.function.arguments);
  const at = (p) => (p.startsWith("/") ? p : join(workspace, p));
  try {
    switch (call.function.name) {
      case "run_command":
        try {
          return execSync(args.command, { cwd: workspace, shell: "/bin/bash", encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }) || "(no output)";
        } catch (e) {
          return `${e.stdout ?? ""}${e.stderr ?? ""}[exit status ${e.status}]`;
        }
      case "read_file":
        return readFileSync(at(args.path), "utf8");
      case "edit_file": {
        const text = readFileSync(at(args.path), "utf8");
        if (!text.includes(args.old)) return `error: the text to replace is not in ${args.path}`;
        writeFileSync(at(args.path), text.replace(args.old, args.new));
        return `edited ${args.path}`;
      }
      case "write_file":
        writeFileSync(at(args.path), args.content);
        return `wrote ${args.path}`;
    }
  } catch (e) {
    return `error: ${e.message}`;
  }
  return `error: no tool named ${call.function.name}`;
}

const messages = [{ role: "system", content: "You are a coding agent working in a Go repository. Use the tools to inspect, change and test the code; answer briefly when done." }];
let calls = 0;
for (const prompt of prompts) {
  messages.push({ role: "user", content: prompt });
  for (;;) {
    const params = { model: "gpt-4o", messages, tools };
    const completion = calls++ % 2 === 1 ? await client.chat.completions.stream({ ...params, stream_options: { include_usage: true } }).finalChatCompletion() : await client.chat.completions.create(params);
    const msg = completion.choices[0].message;
    messages.push({ role: "assistant", content: msg.content, ...(msg.tool_calls?.length ? { tool_calls: msg.tool_calls } : {}) });
    if (!msg.tool_calls?.length) break;
    for (const call of msg.tool_calls) messages.push({ role: "tool", tool_call_id: call.id, content: run(call) });
  }
}
