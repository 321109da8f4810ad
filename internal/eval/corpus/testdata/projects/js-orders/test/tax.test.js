import { test } from "node:test";
import assert from "node:assert/strict";
import { rateFor, taxCents } from "../src/tax.js";

test("standard rate for the Netherlands", () => {
  assert.equal(rateFor("NL"), 0.21);
});

test("reduced rate for Germany", () => {
  assert.equal(rateFor("DE", "reduced"), 0.07);
});

test("tax on a net amount is rounded to the cent", () => {
  assert.equal(taxCents(1999, "IE"), 460);
});

test("unknown country names the country", () => {
  assert.throws(() => rateFor("CH"), /no standard VAT rate for country CH/);
});
