import type { CurrencyCode, Customer, Invoice, InvoiceLine } from "./types.js";
import { taxRuleFor } from "./tax.js";

const PAYMENT_TERMS_DAYS = 30;

export interface DraftLine {
  description: string;
  quantity: number;
  unitPrice: number;
}

let sequence = 1000;

export function nextInvoiceNumber(issued: Date): string {
  sequence += 1;
  return `INV-${issued.getFullYear()}-${sequence}`;
}

export function addDays(date: Date, days: number): Date {
  const copy = new Date(date.getTime());
  copy.setDate(copy.getDate() + days);
  return copy;
}

export function createInvoice(customer: Customer, drafts: DraftLine[], currency: CurrencyCode, issued = new Date()): Invoice {
  const tax = taxRuleFor(customer);
  const lines: InvoiceLine[] = drafts.map((d) => ({ ...d, tax }));
  return {
    number: nextInvoiceNumber(issued),
    customer,
    currency,
    issued,
    lines,
  };
}

export function lineNet(line: InvoiceLine): number {
  return Math.round(line.quantity * line.unitPrice * 100) / 100;
}

export function subtotal(invoice: Invoice): number {
  return invoice.lines.reduce((sum: number, line) => sum + lineNet(line));
}

export function taxTotal(invoice: Invoice): number {
  return invoice.lines.reduce((sum, line) => sum + lineNet(line) * line.tax.rate, 0);
}

export function total(invoice: Invoice): number {
  return Math.round((subtotal(invoice) + taxTotal(invoice)) * 100) / 100;
}

export function isOverdue(invoice: Invoice, today = new Date()): boolean {
  return today > addDays(invoice.issued, PAYMENT_TERMS_DAYS);
}
