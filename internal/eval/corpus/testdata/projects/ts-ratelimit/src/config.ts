export interface LimitRule {
  route: string;
  kind: "bucket" | "window";
  limit: number;
  perSeconds: number;
}

export class ConfigError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ConfigError";
  }
}

const ROUTE = /^(GET|POST|PUT|PATCH|DELETE) \/[\w/:{}-]*$/;

export function parseRule(raw: unknown, index: number): LimitRule {
  if (typeof raw !== "object" || raw === null) {
    throw new ConfigError(`rule ${index}: expected an object`);
  }
  const r = raw as Record<string, unknown>;
  if (typeof r.route !== "string" || !ROUTE.test(r.route)) {
    throw new ConfigError(`rule ${index}: invalid route ${JSON.stringify(r.route)}`);
  }
  const kind = r.kind ?? "bucket";
  if (kind !== "bucket" && kind !== "window") {
    throw new ConfigError(`rule ${index}: unknown kind ${String(kind)}`);
  }
  const limit = Number(r.limit);
  const perSeconds = Number(r.per ?? 1);
  if (!Number.isInteger(limit) || limit <= 0) {
    throw new ConfigError(`rule ${index}: limit must be a positive integer, got ${String(r.limit)}`);
  }
  return { route: r.route, kind, limit, perSeconds };
}

export function parseConfig(text: string): LimitRule[] {
  let doc: { rules: unknown[] };
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new ConfigError("limits file is not valid JSON", { cause: err });
  }
  return doc.rules.map((r, i) => parseRule(r, i));
}

export function describe(rule: LimitRule): string {
  const unit = rule.perSeconds === 1 ? "second" : `${rule.perSeconds} seconds`;
  return `${rule.route}: ${rule.limit} per ${unit} (${rule.kind})`;
}
