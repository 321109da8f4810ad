// Old CSV export of deliveries, kept until the dashboard has its own.
import { writeFileSync } from "node:fs";

export function toCsv(deliveries) {
  const header = "endpoint,event,attempts,status,ok";
  const rows = deliveries.map((d) => [d.endpointId, d.event, d.attempts, d.status, d.ok].join(",");
  return [header, ...rows].join("\n");
}

export function exportCsv(path, deliveries) {
  writeFileSync(path, toCsv(deliveries));
}
