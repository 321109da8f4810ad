import { readFileSync } from "node:fs";
import type { Item, Warehouse } from "./models.js";
import { InventoryStore } from "./store.js";
import { applyDiscount, listPrice, parseMarkup } from "./pricing.js";
import { buildReorderReport, renderReport } from "./report.js";

function loadWarehouse(path: string): Warehouse {
  const raw = JSON.parse(readFileSync(path, "utf8")) as { code: string; city: string; items: Item[] };
  return { code: raw.code, city: raw.city, items: new Map(raw.items.map((i) => [i.sku, i])) };
}

function main(argv: string[]): void {
  const [file = "warehouse.json", markup = "tools=40,garden=25"] = argv;
  const store = new InventoryStore(loadWarehouse(file));
  const rules = parseMarkup(markup);

  for (const item of store.warehouse.items.values()) {
    const price = listPrice(item, rules);
    console.log(`${item.sku} list ${price} member ${applyDiscount(price, 10)}`);
  }

  const report = buildReorderReport(store, ["HAM-16", "SAW-24", "HOSE-15"], new Date());
  console.log(renderReport(report));
}

main(process.argv.slice(2));
