#!/usr/bin/env node
// Prints the gross total per country for the sample orders.
import { readFileSync } from "node:fs";
import { summarize } from "../src/orders.js";
import { formatCountryTotals } from "../src/report-formatter.js";

const { orders } = JSON.parse(readFileSync(new URL("../data/orders.json", import.meta.url), "utf8"));
const shipped = orders.filter((o) => o.shipping);
console.log(formatCountryTotals(summarize(shipped)));
