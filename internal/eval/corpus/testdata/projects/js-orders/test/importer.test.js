import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { importOrders, ImportError } from "../src/importer.js";
import { MemoryStore } from "../src/store.js";

describe("importOrders", () => {
  it("imports the sample export", async () => {
    const store = new MemoryStore();
    assert.equal(await importOrders("data/orders.json", store), 4);
    assert.equal(store.get("SO-24052").customer.name, "Jonas Weber");
  });

  it("wraps a truncated file in an ImportError", async () => {
    await assert.rejects(importOrders("data/orders-truncated.json", new MemoryStore()), ImportError);
  });

  it("keeps the validation error as the cause", async () => {
    await assert.rejects(importOrders("data/orders-2024-05-15.json", new MemoryStore()), (err) => {
      assert.equal(err.cause.name, "ValidationError");
      assert.deepEqual(err.cause.problems, ["line 1: qty must be positive", "line 2: missing sku"]);
      return true;
    });
  });
});
