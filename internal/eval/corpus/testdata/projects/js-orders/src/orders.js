import { toCents } from "./money.js";
import { taxCents } from "./tax.js";

export class ValidationError extends Error {
  constructor(orderId, problems) {
    super(`order ${orderId} is invalid: ${problems.join("; ")}`);
    this.name = "ValidationError";
    this.orderId = orderId;
    this.problems = problems;
  }
}

export function validate(order) {
  const problems = [];
  if (!order.id) problems.push("missing id");
  if (!Array.isArray(order.lines) || order.lines.length === 0) problems.push("no lines");
  for (const [i, line] of (order.lines ?? []).entries()) {
    if (!line.sku) problems.push(`line ${i + 1}: missing sku`);
    if (!(line.qty > 0)) problems.push(`line ${i + 1}: qty must be positive`);
  }
  if (problems.length > 0) throw new ValidationError(order.id ?? "?", problems);
  return order;
}

export function lineNet(line) {
  return toCents(line.price) * line.qty;
}

export function shippingCountry(order) {
  return order.shipping.address.country;
}

export function totals(order) {
  const net = order.lines.reduce((sum, line) => sum + lineNet(line), 0);
  const country = shippingCountry(order);
  const tax = order.lines.reduce((sum, line) => sum + taxCents(lineNet(line), country, line.category), 0);
  return { net, tax, gross: net + tax };
}

export function summarize(orders) {
  const byCountry = new Map();
  for (const order of orders) {
    const { gross } = totals(order);
    const country = shippingCountry(order);
    byCountry.set(country, (byCountry.get(country) ?? 0) + gross);
  }
  return byCountry;
}
