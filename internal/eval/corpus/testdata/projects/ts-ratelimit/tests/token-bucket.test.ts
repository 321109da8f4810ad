import { describe, expect, it } from "vitest";
import { ManualClock } from "../src/clock.js";
import { TokenBucket } from "../src/token-bucket.js";

describe("TokenBucket", () => {
  it("starts full", () => {
    const bucket = new TokenBucket({ capacity: 10, refillPerSecond: 10 }, new ManualClock());
    expect(bucket.available()).toBe(10);
  });

  it("takes tokens until empty", () => {
    const bucket = new TokenBucket({ capacity: 3, refillPerSecond: 1 }, new ManualClock());
    expect([bucket.tryTake(), bucket.tryTake(), bucket.tryTake(), bucket.tryTake()]).toEqual([true, true, true, false]);
  });

  it("refills at the configured rate", () => {
    const clock = new ManualClock();
    const bucket = new TokenBucket({ capacity: 10, refillPerSecond: 10 }, clock);
    expect(bucket.tryTake(10)).toBe(true);
    clock.advance(500);
    expect(bucket.available()).toBe(5);
  });

  it("never refills above capacity", () => {
    const clock = new ManualClock();
    const bucket = new TokenBucket({ capacity: 4, refillPerSecond: 2 }, clock);
    clock.advance(60_000);
    expect(bucket.available()).toBe(4);
  });

  it("reports the wait time for a token", () => {
    const clock = new ManualClock();
    const bucket = new TokenBucket({ capacity: 2, refillPerSecond: 4 }, clock);
    bucket.tryTake(2);
    clock.advance(100);
    expect(bucket.waitTime()).toBe(150);
  });

  it("rejects a non-positive capacity", () => {
    expect(() => new TokenBucket({ capacity: 0, refillPerSecond: 1 })).toThrow(RangeError);
  });
});
