import { describe as group, expect, it } from "vitest";
import { ConfigError, describe, parseConfig, parseRule } from "../src/config.js";

group("parseRule", () => {
  it("reads a bucket rule with defaults", () => {
    expect(parseRule({ route: "POST /v1/orders", limit: 20 }, 0)).toEqual({
      route: "POST /v1/orders",
      kind: "bucket",
      limit: 20,
      perSeconds: 1,
    });
  });

  it("reads a window rule", () => {
    expect(parseRule({ route: "GET /v1/orders/{id}", kind: "window", limit: 300, per: 60 }, 1)).toEqual({
      route: "GET /v1/orders/{id}",
      kind: "window",
      limit: 300,
      perSeconds: 60,
    });
  });

  it("rejects an unknown method", () => {
    expect(() => parseRule({ route: "FETCH /v1/orders", limit: 1 }, 2)).toThrow('rule 2: invalid route "FETCH /v1/orders"');
  });

  it("rejects a fractional limit", () => {
    expect(() => parseRule({ route: "GET /v1/items", limit: 2.5 }, 0)).toThrow(ConfigError);
  });

  it("rejects a zero window", () => {
    expect(() => parseRule({ route: "GET /v1/items", limit: 10, per: 0 }, 3)).toThrow("rule 3: per must be a positive number");
  });
});

group("parseConfig", () => {
  it("wraps a JSON syntax error", () => {
    expect(() => parseConfig("{ rules: [] }")).toThrow(ConfigError);
  });

  it("describes every rule", () => {
    const rules = parseConfig(
      JSON.stringify({ rules: [{ route: "POST /v1/login", kind: "window", limit: 5, per: 300 }, { route: "GET /v1/health", limit: 50 }] }),
    );
    expect(rules.map(describe)).toEqual(["POST /v1/login: 5 per 300 seconds (window)", "GET /v1/health: 50 per second (bucket)"]);
  });
});
