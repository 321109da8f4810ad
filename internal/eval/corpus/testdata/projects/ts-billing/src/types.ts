export type CurrencyCode = "EUR" | "GBP" | "USD";

export interface Address {
  line1: string;
  city: string;
  postcode: string;
  /** ISO 3166-1 alpha-2 */
  country: string;
}

export interface Customer {
  id: string;
  name: string;
  email: string;
  /** Missing for customers created through the quick-checkout flow. */
  address?: Address;
  taxId?: string;
}

export interface TaxRule {
  code: string;
  rate: number;
  reverseCharge: boolean;
}

export interface InvoiceLine {
  description: string;
  quantity: number;
  unitPrice: number;
  tax: TaxRule;
}

export interface Invoice {
  number: string;
  customer: Customer;
  currency: CurrencyCode;
  issued: Date;
  dueDate: Date;
  lines: InvoiceLine[];
}
