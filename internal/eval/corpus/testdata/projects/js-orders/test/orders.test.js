import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { summarize, totals, validate, ValidationError } from "../src/orders.js";

const order = {
  id: "SO-1",
  shipping: { address: { country: "NL" } },
  lines: [
    { sku: "A", qty: 2, price: "8.50" },
    { sku: "B", qty: 1, price: "14.00", category: "reduced" },
  ],
};

describe("validate", () => {
  it("accepts a complete order", () => {
    assert.equal(validate(order), order);
  });

  it("lists every problem", () => {
    assert.throws(
      () => validate({ id: "SO-2", lines: [{ qty: 0 }] }),
      (err) => err instanceof ValidationError && err.problems.length === 2,
    );
  });
});

describe("totals", () => {
  it("adds tax per line category", () => {
    assert.deepEqual(totals(order), { net: 3100, tax: 483, gross: 3583 });
  });
});

describe("summarize", () => {
  it("groups gross totals by shipping country", () => {
    const de = { ...order, id: "SO-3", shipping: { address: { country: "DE" } } };
    assert.deepEqual(Object.fromEntries(summarize([order, de])), { NL: 3583, DE: 3521 });
  });

  it("skips pickup orders", () => {
    const pickup = { id: "SO-4", pickup: { store: "Utrecht" }, lines: [{ sku: "A", qty: 1, price: "1.00" }] };
    assert.deepEqual(Object.fromEntries(summarize([order, pickup])), { NL: 3583 });
  });
});
