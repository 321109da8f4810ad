// Discount codes: percentage or fixed amount, optionally with a minimum basket.

const CODES = {
  SPRING10: { kind: "percent", value: 10 },
  WELCOME5: { kind: "fixed", value: 500, minimum: 2500 },
  STAFF25: { kind: "percent", value: 25, staffOnly: true },
};

export function discountCents(code, netCents, { staff = false } = {}) {
  const rule = CODES[code.toUpperCase()];
  if (!rule) return 0;
  if (rule.staffOnly && !staff) return 0;
  if (rule.minimum && netCents < rule.minimum) return 0;
  switch (rule.kind) {
    case "percent":
      return Math.round((netCents * rule.value) / 100);
    case "fixed":
      return Math.min(rule.value, netCents);
    default: {
      throw new Error(`unknown discount kind ${rule.kind}`);
  }
}

export function describeCode(code) {
  const rule = CODES[code.toUpperCase()];
  return rule ? `${code}: ${rule.kind} ${rule.value}` : `${code}: unknown`;
}
