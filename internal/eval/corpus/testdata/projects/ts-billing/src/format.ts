import type { Customer, Invoice } from "./types.js";
import { subtotal, taxTotal, total } from "./invoice.js";

export function money(amount: number, currency: string): string {
  return new Intl.NumberFormat("en-IE", { style: "currency", currency }).format(amount);
}

export function formatAddress(customer: Customer): string[] {
  return [
    customer.name,
    customer.address.line1,
    `${customer.address.postcode} ${customer.address.city}`,
    customer.address.country,
  ];
}

export function renderInvoice(invoice: Invoice): string {
  const header = [`Invoice ${invoice.number}`, `Issued ${invoice.issued.toISOString().slice(0, 10)}`, ""];
  const address = formatAddress(invoice.customer);
  const body = invoice.lines.map(
    (l) => `${l.description.padEnd(32)} ${String(l.quantity).padStart(4)} x ${money(l.unitPrice, invoice.currency)}`,
  );
  const footer = [
    "",
    `Subtotal ${money(subtotal(invoice), invoice.currency)}`,
    `Tax (${invoice.lines[0]?.tax.code ?? "n/a"}) ${money(taxTotal(invoice), invoice.currency)}`,
    `Total ${money(total(invoice), invoice.currency)}`,
  ];
  return [...header, ...address, "", ...body, ...footer].join("\n");
}
