import type { Row } from "./schema";

export interface NumericSummary {
  column: string;
  count: number;
  nulls: number;
  min: number;
  max: number;
  mean: number;
}

export function summarize(rows: Row[], column: string): NumericSummary {
  const values: number[] = [];
  let nulls = 0;
  for (const row of rows) {
    const v = row[column];
    if (v === null || v === undefined) {
      nulls++;
    } else if (typeof v === "number") {
      values.push(v);
    }
  }
  const sum = values.reduce((a, b) => a + b, 0);
  return {
    column,
    count: values.length,
    nulls,
    min: Math.min(...values),
    max: Math.max(...values),
    mean: values.length ? Math.round((sum / values.length) * 100) / 100 : 0,
  };
}

export function renderSummary(s: NumericSummary): string {
  return [
    `column ${s.column}`,
    `  count ${s.count} (${s.nulls} null)`,
    `  min   ${s.min}`,
    `  max   ${s.max}`,
    `  mean  ${s.mean}`,
  ].join("\n");
}
