import { readFile } from "node:fs/promises";
import { validate } from "./orders.js";

export class ImportError extends Error {
  constructor(message, options) {
    super(message, options);
    this.name = "ImportError";
  }
}

export async function readOrders(path) {
  let text;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    throw new ImportError(`cannot read orders file ${path}`, { cause: err });
  }
  let doc;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new ImportError(`orders file ${path} is not valid JSON`, { cause: err });
  }
  return doc.orders;
}

export async function importOrders(path, store) {
  const orders = await readOrders(path);
  let imported = 0;
  for (const order of orders) {
    try {
      store.save(validate(order));
      imported++;
    } catch (err) {
      throw new ImportError(`import of ${path} stopped at order #${imported + 1}`, { cause: err });
    }
  }
  return imported;
}
