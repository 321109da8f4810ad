import { parse } from "../src/parser";
import { type Column, coerce, typed } from "../src/schema";

const columns: Column[] = [
  { name: "order_id", type: "integer" },
  { name: "amount", type: "decimal", nullable: true },
  { name: "paid", type: "boolean" },
  { name: "placed_on", type: "date" },
];

describe("coerce", () => {
  it("reads integers", () => {
    expect(coerce(" 42 ", { name: "n", type: "integer" }, 2)).toBe(42);
  });

  it("reads decimals with thousands separators", () => {
    expect(coerce("2,400.50", { name: "amount", type: "decimal" }, 3)).toBe(2400.5);
  });

  it("reads booleans", () => {
    expect(["yes", "N", "1", "false"].map((t) => coerce(t, { name: "paid", type: "boolean" }, 2))).toEqual([true, false, true, false]);
  });

  it("returns null for an empty nullable column", () => {
    expect(coerce("  ", { name: "amount", type: "decimal", nullable: true }, 5)).toBeNull();
  });

  it("rejects an empty required column", () => {
    expect(() => coerce("", { name: "order_id", type: "integer" }, 9)).toThrow("line 9: column order_id is empty");
  });

  it("rejects dates that are not ISO", () => {
    expect(() => coerce("03/01/2024", { name: "placed_on", type: "date" }, 4)).toThrow(/not an ISO date/);
  });
});

describe("typed", () => {
  it("types every row", () => {
    const table = parse("order_id,amount,paid,placed_on\n1001,1250.00,yes,2024-03-01\n1004,,no,2024-03-04\n");
    expect(typed(table, columns)).toEqual([
      { order_id: 1001, amount: 1250, paid: true, placed_on: new Date("2024-03-01T00:00:00Z") },
      { order_id: 1004, amount: null, paid: false, placed_on: new Date("2024-03-04T00:00:00Z") },
    ]);
  });

  it("names a missing column", () => {
    const table = parse("order_id,amount\n1,2\n");
    expect(() => typed(table, columns)).toThrow("no column named paid in header order_id,amount");
  });
});
