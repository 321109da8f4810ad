// startServer runs a real `ctxc serve` for the tests: the binary named by
// CTXC_BIN, else the repository's bin/ctxc (`make build`). A missing binary
// fails the tests; nothing here skips.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import { after, before } from "node:test";
import { fileURLToPath } from "node:url";

import { CtxcClient } from "../src/index.js";

export interface RunningServer {
  /** The gRPC address, host:port. */
  addr: string;
  stop(): Promise<void>;
}

const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));

export async function startServer(...args: string[]): Promise<RunningServer> {
  const bin = resolve(process.env.CTXC_BIN || `${repoRoot}bin/ctxc`);
  if (!existsSync(bin)) {
    throw new Error(`ctxc binary not found at ${bin}: run \`make build\` in the repository root or set CTXC_BIN`);
  }
  const child = spawn(bin, ["serve", "--listen", "127.0.0.1:0", "--log-format", "json", ...args], {
    cwd: repoRoot,
    env: { ...process.env, OTEL_TRACES_EXPORTER: "", OTEL_EXPORTER_OTLP_ENDPOINT: "" },
    stdio: ["ignore", "ignore", "pipe"],
  });
  const logs: string[] = [];
  const addr = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`ctxc serve did not start in 60s:\n${logs.join("\n")}`)), 60_000);
    child.once("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`ctxc serve exited (${code}) before serving:\n${logs.join("\n")}`));
    });
    createInterface({ input: child.stderr! }).on("line", (line) => {
      logs.push(line);
      try {
        const entry = JSON.parse(line) as { msg?: string; addr?: string };
        if (entry.msg === "serving" && entry.addr) {
          clearTimeout(timer);
          resolve(entry.addr);
        }
      } catch {
        // not a JSON line; kept in logs
      }
    });
  });
  return { addr, stop: () => stop(child) };
}

/**
 * serverForSuite starts a server before the enclosing suite's tests and stops
 * it after them; inside the tests, fixture.client calls it.
 */
export function serverForSuite(...args: string[]): { server: RunningServer; client: CtxcClient } {
  const fixture = {} as { server: RunningServer; client: CtxcClient };
  before(async () => {
    fixture.server = await startServer(...args);
    fixture.client = new CtxcClient({ address: fixture.server.addr });
  });
  after(() => fixture.server.stop());
  return fixture;
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) {
    return Promise.resolve();
  }
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}
