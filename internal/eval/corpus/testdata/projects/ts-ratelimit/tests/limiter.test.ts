import { describe, expect, it } from "vitest";
import { ManualClock } from "../src/clock.js";
import { KeyedLimiter } from "../src/limiter.js";

const rules = [
  { route: "POST /v1/orders", kind: "bucket" as const, limit: 2, perSeconds: 1 },
  { route: "POST /v1/login", kind: "window" as const, limit: 1, perSeconds: 60 },
];

describe("KeyedLimiter", () => {
  it("lets unknown routes through", () => {
    const limiter = new KeyedLimiter(rules, new ManualClock());
    expect(limiter.allow("alice", "GET /v1/health")).toBe(true);
    expect(limiter.size()).toBe(0);
  });

  it("limits each client separately", () => {
    const limiter = new KeyedLimiter(rules, new ManualClock());
    const alice = [1, 2, 3].map(() => limiter.allow("alice", "POST /v1/orders"));
    const bob = limiter.allow("bob", "POST /v1/orders");
    expect({ alice, bob }).toEqual({ alice: [true, true, false], bob: true });
  });

  it("lets a client back in after the bucket refills", () => {
    const clock = new ManualClock();
    const limiter = new KeyedLimiter(rules, clock);
    limiter.allow("carol", "POST /v1/orders");
    limiter.allow("carol", "POST /v1/orders");
    clock.advance(250);
    const early = limiter.allow("carol", "POST /v1/orders");
    clock.advance(250);
    const late = limiter.allow("carol", "POST /v1/orders");
    expect({ early, late }).toEqual({ early: false, late: true });
  });

  it("uses a window for login", () => {
    const clock = new ManualClock();
    const limiter = new KeyedLimiter(rules, clock);
    expect(limiter.allow("dave", "POST /v1/login")).toBe(true);
    expect(limiter.allow("dave", "POST /v1/login")).toBe(false);
    clock.advance(60_001);
    expect(limiter.allow("dave", "POST /v1/login")).toBe(true);
  });
});
