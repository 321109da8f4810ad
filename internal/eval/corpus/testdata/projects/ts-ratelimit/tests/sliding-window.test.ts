import { describe, expect, it } from "vitest";
import { ManualClock } from "../src/clock.js";
import { SlidingWindow } from "../src/sliding-window.js";

describe("SlidingWindow", () => {
  it("accepts hits up to the limit", () => {
    const w = new SlidingWindow({ limit: 3, windowMs: 1000 }, new ManualClock());
    expect([w.hit(), w.hit(), w.hit(), w.hit()]).toEqual([true, true, true, false]);
  });

  it("forgets hits older than the window", () => {
    const clock = new ManualClock();
    const w = new SlidingWindow({ limit: 2, windowMs: 1000 }, clock);
    w.hit();
    clock.advance(600);
    w.hit();
    clock.advance(401);
    expect(w.remaining()).toBe(1);
    expect(w.hit()).toBe(true);
  });

  it("reports when the oldest hit leaves the window", () => {
    const clock = new ManualClock(5_000);
    const w = new SlidingWindow({ limit: 2, windowMs: 1000 }, clock);
    expect(w.resetAt()).toBeUndefined();
    w.hit();
    expect(w.resetAt()).toBe(6_000);
  });
});
