import { type Clock, systemClock } from "./clock.js";

export interface WindowOptions {
  limit: number;
  windowMs: number;
}

/** Sliding log: remembers the timestamps of accepted hits inside the window. */
export class SlidingWindow {
  private hits: number[] = [];

  constructor(
    private readonly opts: WindowOptions,
    private readonly clock: Clock = systemClock,
  ) {}

  private evict(now: number): void {
    const cutoff = now - this.opts.windowMs;
    while (this.hits.length > 0 && (this.hits[0] ?? 0) <= cutoff) {
      this.hits.shift();
    }
  }

  hit(): boolean {
    const now = this.clock.now();
    this.evict(now);
    if (this.hits.length >= this.opts.limit) return false;
    this.hits.push(now);
    return true;
  }

  remaining(): number {
    this.evict(this.clock.now());
    return this.opts.limit - this.hits.length;
  }

  resetAt(): number | undefined {
    const first = this.hits[0];
    return first === undefined ? undefined : first + this.opts.windowMs;
  }
}
