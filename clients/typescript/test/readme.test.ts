// The README's quick start, run as written against a real server (only the
// package imports point at this build and the address at the test server).
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { after, before, it } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

import { startServer, type RunningServer } from "./server.js";

const packageDir = fileURLToPath(new URL("../../", import.meta.url));

let server: RunningServer;
before(async () => {
  server = await startServer();
});
after(() => server.stop());

it("runs the README's quick start", async () => {
  const readme = readFileSync(`${packageDir}README.md`, "utf8");
  const block = /## Quick start\n\n```ts\n([\s\S]*?)```/.exec(readme);
  assert.ok(block, "no ```ts block under ## Quick start");
  const script = block[1]
    .replace('"@ctxc/client/langchain"', JSON.stringify(`${packageDir}build/src/langchain.js`))
    .replace('"@ctxc/client"', JSON.stringify(`${packageDir}build/src/index.js`))
    .replace("127.0.0.1:50051", server.addr);
  // Inside the package, so its imports resolve from node_modules; outside build/test, so it is no test file.
  mkdirSync(`${packageDir}build/readme`, { recursive: true });
  const file = `${packageDir}build/readme/quick-start.mjs`;
  writeFileSync(file, script);
  const { stdout } = await promisify(execFile)(process.execPath, [file], { cwd: packageDir });
  assert.match(stdout, /^2 \d+\n$/);
});
