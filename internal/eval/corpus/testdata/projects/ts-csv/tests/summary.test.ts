import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "../src/parser";
import { typed } from "../src/schema";
import { renderSummary, summarize } from "../src/summary";

const rows = [
  { amount: 1250 },
  { amount: 2400.5 },
  { amount: 310.25 },
  { amount: null },
  { amount: 99.99 },
];

describe("summarize", () => {
  it("counts values and nulls", () => {
    const s = summarize(rows, "amount");
    expect([s.count, s.nulls]).toEqual([4, 1]);
  });

  it("finds the extremes", () => {
    const s = summarize(rows, "amount");
    expect({ min: s.min, max: s.max }).toEqual({ min: 99.99, max: 2400.5 });
  });

  it("rounds the mean to cents", () => {
    expect(summarize(rows, "amount").mean).toBe(1015.19);
  });

  it("renders a report", () => {
    expect(renderSummary(summarize(rows, "amount"))).toMatchSnapshot();
  });

  it("summarizes the sample orders file", () => {
    const text = readFileSync(join(__dirname, "..", "data", "orders.csv"), "utf8");
    const table = parse(text);
    const typedRows = typed(table, [
      { name: "amount", type: "decimal", nullable: true },
      { name: "paid", type: "boolean" },
    ]);
    expect(summarize(typedRows, "amount").count).toBe(3);
  });
});
