#!/usr/bin/env node
// Pulls the current price list from the pricing service and prints the changes.
// PRICES_URL defaults to the local development instance.
const PRICES_URL = process.env.PRICES_URL ?? "http://127.0.0.1:58081/api";

const response = await fetch(`${PRICES_URL}/prices?since=2024-05-13`);
if (!response.ok) {
  throw new Error(`pricing service answered ${response.status}`);
}
const { changes } = await response.json();
for (const c of changes) {
  console.log(`${c.sku}: ${c.old} -> ${c.new}`);
}
