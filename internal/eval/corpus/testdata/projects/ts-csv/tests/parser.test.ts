import { CsvSyntaxError, parse, splitRecord } from "../src/parser";

describe("splitRecord", () => {
  it("splits on commas", () => {
    expect(splitRecord("a,b,c")).toEqual(["a", "b", "c"]);
  });

  it("keeps empty fields", () => {
    expect(splitRecord("a,,c,")).toEqual(["a", "", "c", ""]);
  });

  it("keeps delimiters inside quotes", () => {
    expect(splitRecord('1001,"Acme, Inc.",1250.00')).toEqual(["1001", "Acme, Inc.", "1250.00"]);
  });

  it("unescapes doubled quotes inside a quoted field", () => {
    expect(splitRecord('1003,"Initech ""West""",310.25')).toEqual(["1003", 'Initech "West"', "310.25"]);
  });

  it("supports another delimiter", () => {
    expect(splitRecord("a;b;c", ";")).toEqual(["a", "b", "c"]);
  });

  it("rejects an unterminated quote", () => {
    expect(() => splitRecord('a,"b,c', ",", 7)).toThrow(new CsvSyntaxError("unterminated quoted field", 7));
  });
});

describe("parse", () => {
  it("reads the header and rows", () => {
    const table = parse("id,name\n1,ada\n2,grace\n");
    expect(table.header).toEqual(["id", "name"]);
    expect(table.rows).toHaveLength(2);
  });

  it("handles CRLF line endings", () => {
    expect(parse("id,name\r\n1,ada\r\n").rows).toEqual([["1", "ada"]]);
  });

  it("skips blank rows when asked", () => {
    expect(parse("id,name\n1,ada\n,\n", { skipBlank: true }).rows).toEqual([["1", "ada"]]);
  });

  it("reports ragged rows", () => {
    const ragged: number[] = [];
    parse("id,name\n1,ada,extra\n2\n", { onRaggedRow: (row) => ragged.push(row) });
    expect(ragged).toEqual([2, 3]);
  });

  it("tolerates ragged rows by default", () => {
    const table = parse("id,name,email\n1,ada\n2,grace,grace@example.org\n3\n");
    expect(table.rows.map((r) => r.length)).toEqual([2, 3, 1]);
  });
});
