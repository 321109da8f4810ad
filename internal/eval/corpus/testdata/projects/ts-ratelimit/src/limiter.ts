import type { Clock } from "./clock.js";
import { systemClock } from "./clock.js";
import type { LimitRule } from "./config.js";
import { SlidingWindow } from "./sliding-window.js";
import { TokenBucket } from "./token-bucket.js";

type Limiter = { allow(): boolean; left(): number };

export class KeyedLimiter {
  private readonly limiters = new Map<string, Limiter>();

  constructor(
    private readonly rules: LimitRule[],
    private readonly clock: Clock = systemClock,
  ) {}

  private ruleFor(route: string): LimitRule | undefined {
    return this.rules.find((r) => r.route === route);
  }

  private create(rule: LimitRule): Limiter {
    if (rule.kind === "window") {
      const w = new SlidingWindow({ limit: rule.limit, windowMs: rule.perSeconds * 1000 }, this.clock);
      return { allow: () => w.hit(), left: () => w.remaining() };
    }
    const b = new TokenBucket({ capacity: rule.limit, refillPerSecond: rule.limit / rule.perSeconds }, this.clock);
    return { allow: () => b.tryTake(), left: () => b.available() };
  }

  allow(clientId: string, route: string): boolean {
    const rule = this.ruleFor(route);
    if (!rule) return true;
    const key = `${clientId} ${route}`;
    let limiter = this.limiters.get(key);
    if (!limiter) {
      limiter = this.create(rule);
      this.limiters.set(key, limiter);
    }
    return limiter.allow();
  }

  size(): number {
    return this.limiters.size;
  }
}
