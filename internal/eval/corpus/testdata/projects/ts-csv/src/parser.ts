export interface ParseOptions {
  delimiter?: string;
  /** Drop rows whose fields are all empty. */
  skipBlank?: boolean;
  /** Called for rows whose field count differs from the header's. */
  onRaggedRow?: (row: number, got: number, want: number) => void;
}

export class CsvSyntaxError extends Error {
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(`line ${line}: ${message}`);
    this.name = "CsvSyntaxError";
  }
}

/** Split one record into fields, honouring double quotes. */
export function splitRecord(record: string, delimiter = ",", line = 1): string[] {
  const fields: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < record.length; i++) {
    const ch = record[i];
    if (quoted) {
      if (ch === '"') {
        quoted = false;
      } else {
        field += ch;
      }
      continue;
    }
    if (ch === '"') {
      if (field.length > 0) {
        throw new CsvSyntaxError(`unexpected quote in unquoted field at column ${i + 1}`, line);
      }
      quoted = true;
    } else if (ch === delimiter) {
      fields.push(field);
      field = "";
    } else {
      field += ch;
    }
  }
  if (quoted) {
    throw new CsvSyntaxError("unterminated quoted field", line);
  }
  fields.push(field);
  return fields;
}

export interface Table {
  header: string[];
  rows: string[][];
}

export function parse(text: string, opts: ParseOptions = {}): Table {
  const delimiter = opts.delimiter ?? ",";
  const lines = text.replace(/\r\n/g, "\n").split("\n");
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  if (lines.length === 0) {
    return { header: [], rows: [] };
  }
  const header = splitRecord(lines[0], delimiter, 1).map((h) => h.trim());
  const rows: string[][] = [];
  for (let i = 1; i < lines.length; i++) {
    const fields = splitRecord(lines[i], delimiter, i + 1);
    if (opts.skipBlank && fields.every((f) => f.trim() === "")) continue;
    if (fields.length !== header.length) {
      if (opts.onRaggedRow) {
        opts.onRaggedRow(i + 1, fields.length, header.length);
      } else {
        console.warn(`csv: row ${i + 1} has ${fields.length} fields, header has ${header.length}; missing fields read as empty`);
      }
    }
    rows.push(fields);
  }
  return { header, rows };
}
