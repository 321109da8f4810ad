// Amounts are integer cents throughout; only formatting deals in decimals.

export function toCents(amount) {
  if (typeof amount === "string") {
    amount = Number(amount.replace(/[, ]/g, ""));
  }
  if (!Number.isFinite(amount)) {
    throw new TypeError(`not an amount: ${amount}`);
  }
  return Math.round(amount * 100);
}

export function formatCents(cents, currency = "EUR") {
  const sign = cents < 0 ? "-" : "";
  const abs = Math.abs(cents);
  const whole = Math.floor(abs / 100).toLocaleString("en-US");
  const frac = String(abs % 100).padStart(2, "0");
  return `${sign}${currency} ${whole}.${frac}`;
}

export function allocate(cents, parts) {
  const base = Math.floor(cents / parts);
  const rest = cents - base * parts;
  return Array.from({ length: parts }, (_, i) => base + (i < rest ? 1 : 0));
}
