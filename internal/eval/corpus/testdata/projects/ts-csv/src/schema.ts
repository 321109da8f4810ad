import type { Table } from "./parser";

export type ColumnType = "string" | "integer" | "decimal" | "boolean" | "date";

export type Value = string | number | boolean | Date | null;

export interface Column {
  name: string;
  type: ColumnType;
  nullable?: boolean;
}

export type Row = Record<string, Value>;

const TRUE = new Set(["true", "yes", "y", "1"]);
const FALSE = new Set(["false", "no", "n", "0"]);

export function coerce(raw: string, column: Column, line: number): Value {
  const text = raw.trim();
  if (text === "") {
    if (column.nullable) return null;
    throw new RangeError(`line ${line}: column ${column.name} is empty`);
  }
  switch (column.type) {
    case "string":
      return text;
    case "integer": {
      const n = Number(text);
      if (!Number.isInteger(n)) throw new RangeError(`line ${line}: ${column.name}=${text} is not an integer`);
      return n;
    }
    case "decimal": {
      const n = Number(text.replace(/,/g, ""));
      if (Number.isNaN(n)) throw new RangeError(`line ${line}: ${column.name}=${text} is not a number`);
      return n;
    }
    case "boolean":
      if (TRUE.has(text.toLowerCase())) return true;
      if (FALSE.has(text.toLowerCase())) return false;
      throw new RangeError(`line ${line}: ${column.name}=${text} is not a boolean`);
    case "date": {
      const [y, m, d] = text.split("-").map(Number);
      const date = new Date(Date.UTC(y, m - 1, d));
      return date.toISOString().slice(0, 10) === text ? date : null;
    }
  }
}

export function typed(table: Table, columns: Column[]): Row[] {
  const index = new Map(table.header.map((h, i) => [h, i]));
  return table.rows.map((fields, r) => {
    const row: Row = {};
    for (const column of columns) {
      const i = index.get(column.name);
      if (i === undefined) throw new Error(`no column named ${column.name} in header ${table.header.join(",")}`);
      row[column.name] = coerce(fields[i] ?? "", column, r + 2);
    }
    return row;
  });
}
