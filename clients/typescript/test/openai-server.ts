// A real HTTP server speaking the OpenAI Chat Completions protocol, for the AI
// SDK test: it records each request body and answers with a fixed completion.
import { createServer, type Server } from "node:http";

export interface ChatRequest {
  model: string;
  messages: { role: string; content?: unknown; tool_calls?: { id: string; function: { name: string } }[]; tool_call_id?: string }[];
}

export interface FakeOpenAI {
  baseURL: string;
  requests: ChatRequest[];
  close(): Promise<void>;
}

export async function startFakeOpenAI(answer: string): Promise<FakeOpenAI> {
  const requests: ChatRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (req.method !== "POST" || req.url !== "/v1/chat/completions") {
        res.writeHead(404).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as ChatRequest;
      requests.push(body);
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          id: `chatcmpl-${requests.length}`,
          object: "chat.completion",
          created: 1_700_000_000,
          model: body.model,
          choices: [{ index: 0, message: { role: "assistant", content: answer }, finish_reason: "stop" }],
          usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
