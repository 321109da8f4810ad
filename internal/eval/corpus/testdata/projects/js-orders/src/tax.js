import { RATES, REDUCED } from "./rates.js";

export function rateFor(country, category = "standard") {
  const table = category === "reduced" ? REDUCED : RATES;
  const rate = table[country];
  if (rate === undefined) {
    throw new RangeError(`no ${category} VAT rate for country ${country}`);
  }
  return rate;
}

export function taxCents(netCents, country, category) {
  return Math.round(netCents * rateFor(country, category));
}
