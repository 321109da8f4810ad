#!/usr/bin/env node
// Reserves warehouse stock for every open order.
import { readFileSync } from "node:fs";
import { reserveStock } from "../src/warehouse-client.js";

const { orders } = JSON.parse(readFileSync(new URL("../data/orders.json", import.meta.url), "utf8"));

async function reserveAll() {
  for (const order of orders) {
    console.log(`reserving ${order.lines.length} lines for ${order.id}`);
    await reserveStock(order.id, order.lines);
  }
  console.log("all reservations done");
}

reserveAll();
setTimeout(() => console.log("reservation run finished"), 200);
