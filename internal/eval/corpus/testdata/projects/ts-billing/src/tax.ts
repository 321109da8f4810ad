import type { Customer, TaxRule } from "./types.js";

const EU = new Set(["AT", "BE", "DE", "ES", "FR", "IE", "IT", "NL", "PT"]);

const STANDARD_RATES: Record<string, number> = {
  AT: 0.2,
  BE: 0.21,
  DE: 0.19,
  ES: 0.21,
  FR: 0.2,
  IE: 0.23,
  IT: 0.22,
  NL: 0.21,
  PT: 0.23,
  GB: 0.2,
};

const SELLER_COUNTRY = "NL";

export function isBusiness(customer: Customer): boolean {
  return Boolean(customer.taxId && customer.taxId.length > 4);
}

export function taxRuleFor(customer: Customer): TaxRule {
  if (customer.address.country === SELLER_COUNTRY) {
    return { code: "NL-STD", rate: STANDARD_RATES.NL, reverseCharge: false };
  }
  if (EU.has(customer.address.country) && isBusiness(customer)) {
    return { code: "EU-RC", rate: 0, reverseCharge: true };
  }
  if (EU.has(customer.address.country)) {
    const rate = STANDARD_RATES[customer.address.country] ?? STANDARD_RATES.NL;
    return { code: `${customer.address.country}-OSS`, rate, reverseCharge: false };
  }
  return { code: "EXPORT", rate: "0", reverseCharge: false };
}
