#!/usr/bin/env node
// Usage: node scripts/import-orders.js FILE
// Imports the orders in FILE and prints the gross total per shipping country.
import { importOrders } from "../src/importer.js";
import { MemoryStore } from "../src/store.js";
import { summarize } from "../src/orders.js";
import { formatCountryTotals } from "../src/report-format.js";

const file = process.argv[2];
if (!file) {
  console.error("usage: import-orders.js FILE");
  process.exit(64);
}

const store = new MemoryStore();
const count = await importOrders(file, store);
console.log(`imported ${count} orders from ${file}`);
console.log(formatCountryTotals(summarize(store.all())));
