import { createHmac, timingSafeEqual } from "node:crypto";

export const SIGNATURE_HEADER = "x-webhook-signature";
export const TIMESTAMP_HEADER = "x-webhook-timestamp";

/** Tolerated clock skew between sender and receiver. */
export const MAX_SKEW_SECONDS = 300;

export function sign(secret: string, timestamp: number, body: string): string {
  const mac = createHmac("sha256", secret);
  mac.update(`${timestamp}.${body}`);
  return `v1=${mac.digest("hex")}`;
}

export function verify(secret: string, header: string, timestamp: number, body: string, now = Date.now() / 1000): boolean {
  if (Math.abs(now - timestamp) > MAX_SKEW_SECONDS) {
    return false;
  }
  const expected = Buffer.from(sign(secret, timestamp, body));
  const given = Buffer.from(header);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
