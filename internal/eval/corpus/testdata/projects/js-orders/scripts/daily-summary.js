#!/usr/bin/env node
// Prints yesterday's order count, revenue and average basket.
import { readFileSync } from "node:fs";
import { totals } from "../src/orders.js";
import { formatCents } from "../src/money.js";

const { orders } = JSON.parse(readFileSync(new URL("../data/orders.json", import.meta.url), "utf8"));
const shipped = orders.filter((o) => o.shipping);

let revenue = 0;
for (const order of shipped) {
  const { gross } = totals(order);
  revenue += gross;
}

const average = shipped.length ? Math.round(revenue / shipped.length) : 0;
console.log(`orders:  ${shipped.length}`);
console.log(`revenue: ${formatCents(revenue)}`);
console.log(`average: ${formatCents(average)}`);
console.log(`largest: ${formatCents(Math.max(...orderTotals.map((t) => t.gross)))}`);
