import type { ReorderLine } from "./models.js";
import { InventoryStore } from "./store.js";
import { orderCost } from "./pricing.js";

export interface ReorderReport {
  warehouse: string;
  generatedAt: string;
  lines: ReorderLine[];
  total: number;
}

/** Suggest enough units to get back to twice the reorder point. */
export function suggestUnits(available: number, reorderPoint: number): number {
  if (available > reorderPoint) {
    return 0;
  }
  return reorderPoint * 2 - available;
}

export function buildReorderReport(store: InventoryStore, skus: string[]): ReorderReport {
  const lines: ReorderLine[] = [];
  for (const sku of skus) {
    const item = store.find(sku);
    if (!item) continue;
    const available = store.available(sku);
    const suggested = suggestUnits(available, item.reorderPoint);
    if (suggested === 0) continue;
    lines.push({ sku, name: item.name, available, suggested, cost: suggested * item.unitCost });
  }
  return {
    warehouse: store.code,
    generatedAt: new Date().toISOString(),
    lines,
    total: orderCost(lines),
  };
}

export function renderReport(report: ReorderReport): string {
  const rows = report.lines.map(
    (l) => `${l.sku.padEnd(10)} ${l.name.padEnd(24)} ${String(l.available).padStart(5)} ${String(l.suggested).padStart(5)} ${formatCurrency(l.cost)}`,
  );
  return [
    `Reorder report for ${report.warehouse} (${report.generatedAt})`,
    ...rows,
    `Total: ${formatCurrency(report.total)}`,
  ].join("\n");
}
