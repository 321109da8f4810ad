export interface RetryPolicy {
  attempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_POLICY: RetryPolicy = { attempts: 5, baseDelayMs: 500, maxDelayMs: 30_000 };

/** Exponential backoff with full jitter. */
export function backoff(attempt: number, policy: RetryPolicy = DEFAULT_POLICY, random = Math.random): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
  return Math.floor(random() * ceiling);
}

export function isRetryable(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export function describeAttempt(attempt: number, status: number, delay: number): string {
  const message = `attempt ${attempt + 1} got ${status}, retrying in ${delay}ms`;
  console.log(message);
  return message;
}

export function parseRetryAfter(header: any): number | undefined {
  if (header === undefined || header === null) return undefined;
  const seconds = Number(header);
  return Number.isFinite(seconds) ? seconds * 1000 : undefined;
}
