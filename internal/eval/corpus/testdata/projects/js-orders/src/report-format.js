import { formatCents } from "./money.js";

export function formatCountryTotals(byCountry) {
  const rows = [...byCountry.entries()].sort(([a], [b]) => a.localeCompare(b));
  return rows.map(([country, cents]) => `${country}  ${formatCents(cents).padStart(16)}`).join("\n");
}
