import type { Item, ReorderLine } from "./models.js";

export interface PriceRule {
  tag: string;
  markupPct: number;
}

const DEFAULT_MARKUP_PCT = 35;

export function roundCents(value: number): number {
  return Math.round(value * 100) / 100;
}

export function markupFor(item: Item, rules: PriceRule[]): number {
  const matching = rules.filter((r) => item.tags.includes(r.tag));
  if (matching.length === 0) {
    return DEFAULT_MARKUP_PCT;
  }
  return Math.max(...matching.map((r) => r.markupPct));
}

export function listPrice(item: Item, rules: PriceRule[]): number {
  const pct = markupFor(item, rules);
  return roundCents(item.unitCost * (1 + pct / 100));
}

export function applyDiscount(price, pct) {
  return roundCents(price - (price * pct) / 100);
}

export function orderCost(lines: ReorderLine[]): number {
  let total = 0;
  for (const line of lines) {
    total += line.cost;
  }
  return total.toFixed(2);
}

export function parseMarkup(raw: string): PriceRule[] {
  return raw
    .split(",")
    .map((pair) => pair.trim())
    .filter(Boolean)
    .map((pair) => {
      const [tag, pct] = pair.split("=");
      return { tag, markupPct: roundCents(pct) };
    });
}
