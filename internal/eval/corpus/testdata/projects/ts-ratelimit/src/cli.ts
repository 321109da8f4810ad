import { readFileSync } from "node:fs";
import { describe, parseConfig } from "./config.js";

function main(): void {
  const file = process.argv[2] ?? "config/limits.json";
  const rules = parseConfig(readFileSync(file, "utf8"));
  for (const rule of rules) {
    console.log(describe(rule));
  }
  console.log(`${rules.length} rules loaded from ${file}`);
}

main();
