#!/usr/bin/env node
// Usage: node scripts/price.js NET_EUROS [CODE]
import { toCents, formatCents } from "../src/money.js";
import { discountCents } from "../src/discounts.js";

const net = toCents(process.argv[2] ?? "0");
const code = process.argv[3] ?? "";
const discount = code ? discountCents(code, net) : 0;
console.log(`net ${formatCents(net)}, discount ${formatCents(discount)}, to pay ${formatCents(net - discount)}`);
