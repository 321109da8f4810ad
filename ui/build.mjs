// Builds the inspector page into internal/service/inspector/assets, which the Go
// binary embeds: one script, one style sheet and index.html, no network at
// run time. Deterministic: the same sources and package-lock.json give the
// same bytes (make ui, then git diff --exit-code, as CI checks).
import { build } from "esbuild";
import { copyFileSync, mkdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..");
const out = join(root, "internal", "service", "inspector", "assets");

rmSync(out, { recursive: true, force: true });
mkdirSync(join(out, "examples"), { recursive: true });

await build({
  entryPoints: { inspector: join(here, "src", "main.jsx") },
  outdir: out,
  bundle: true,
  minify: true,
  format: "iife",
  target: ["es2020"],
  jsx: "automatic",
  jsxImportSource: "preact",
  legalComments: "eof",
  charset: "utf8",
  logLevel: "warning",
});

for (const name of ["index.html", "favicon.svg"]) copyFileSync(join(here, "src", name), join(out, name));
// The examples the page offers, so a new user sees something at once.
for (const name of ["coding-agent.json", "chat.json"]) {
  copyFileSync(join(root, "examples", name), join(out, "examples", name));
}
