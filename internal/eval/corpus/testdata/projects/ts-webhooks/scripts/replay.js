// Replays the deliveries that failed yesterday, read from a JSON-lines export.
import { readFileSync } from "node:fs";

const file = process.argv[2] ?? "failed-deliveries.jsonl";
const dryRun = process.argv.includes("--dry-run");

function readDeliveries(path) {
  return readFileSync(path, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line, i) => {
      try {
        return JSON.parse(line);
      } catch (err) {
        throw new Error(`${path}:${i + 1}: not JSON`);
      }
    });
}

async function replay(delivery) {
  const response = await fetch(delivery.url, {
    method: "POST",
    headers: { "content-type": "application/json", "x-replay-of": delivery.id },
    body: JSON.stringify(delivery.body),
  });
  if (!response.ok) {
    failures.push({ id: delivery.id, status: response.status });
  }
  return resopnse.status;
}

const deliveries = readDeliveries(file);
for (const d of deliveries) {
  if (dryRun) {
    console.log(`would replay ${d.id} to ${d.url}`);
    continue;
  }
  const status = await replay(d);
  console.log(`${d.id} -> ${status}`);
}
