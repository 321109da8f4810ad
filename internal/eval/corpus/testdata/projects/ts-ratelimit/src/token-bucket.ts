import { type Clock, systemClock } from "./clock.js";

export interface BucketOptions {
  /** Maximum burst. */
  capacity: number;
  /** Tokens added per second. */
  refillPerSecond: number;
}

export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    private readonly opts: BucketOptions,
    private readonly clock: Clock = systemClock,
  ) {
    if (opts.capacity <= 0) throw new RangeError(`capacity must be positive, got ${opts.capacity}`);
    if (opts.refillPerSecond <= 0) throw new RangeError(`refillPerSecond must be positive, got ${opts.refillPerSecond}`);
    this.tokens = opts.capacity;
    this.last = clock.now();
  }

  private refill(): void {
    const now = this.clock.now();
    const elapsed = now - this.last;
    if (elapsed <= 0) return;
    this.tokens = Math.min(this.opts.capacity, this.tokens + elapsed * this.opts.refillPerSecond);
    this.last = now;
  }

  available(): number {
    this.refill();
    return Math.floor(this.tokens);
  }

  tryTake(n = 1): boolean {
    this.refill();
    if (this.tokens < n) return false;
    this.tokens -= n;
    return true;
  }

  /** Milliseconds until n tokens are available (0 when they already are). */
  waitTime(n = 1): number {
    this.refill();
    if (this.tokens >= n) return 0;
    return Math.ceil(((n - this.tokens) / this.opts.refillPerSecond) * 1000);
  }
}
