import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { allocate, formatCents, toCents } from "../src/money.js";

describe("toCents", () => {
  it("reads numbers and strings", () => {
    assert.equal(toCents(12.5), 1250);
    assert.equal(toCents("1,299.99"), 129999);
  });

  it("rounds half-cents", () => {
    assert.equal(toCents(0.015), 2);
  });

  it("rejects what is not an amount", () => {
    assert.throws(() => toCents("twelve"), { name: "TypeError", message: "not an amount: NaN" });
  });
});

describe("formatCents", () => {
  it("formats with thousands separators", () => {
    assert.equal(formatCents(123456789), "EUR 1,234,567.89");
  });

  it("formats negative amounts", () => {
    assert.equal(formatCents(-5, "USD"), "USD -0.05");
  });
});

describe("allocate", () => {
  it("splits without losing a cent", () => {
    assert.deepEqual(allocate(1000, 3), [334, 333, 333]);
  });
});
