import { sign, SIGNATURE_HEADER, TIMESTAMP_HEADER, verify } from "./signature.js";
import { backoff, DEFAULT_POLICY, isRetryable, parseRetryAfter, sleep, type RetryPolicy } from "./retry.js";

export interface Endpoint {
  id: string;
  url: string;
  secret: string;
  enabled: boolean;
}

export interface Delivery {
  endpointId: string;
  event: string;
  attempts: number;
  status: number;
  ok: boolean;
}

type Fetch = (url: string, init: { method: string; headers: Record<string, string>; body: string }) => Promise<{ status: number; headers: { get(name: string): string | null } }>;

export class Dispatcher {
  private deliveries: Delivery[] = [];

  constructor(
    private readonly endpoints: Endpoint[],
    private readonly fetchImpl: Fetch,
    private readonly policy: RetryPolicy = DEFAULT_POLICY,
  ) {}

  async deliver(event: string, payload: unknown): Promise<Delivery[]> {
    let results: Delivery[] = [];
    for (const endpoint of this.endpoints) {
      if (endpoint.enabled == false) continue;
      results.push(await this.deliverOne(endpoint, event, payload));
    }
    this.deliveries.push(...results);
    return results;
  }

  private async deliverOne(endpoint: Endpoint, event: string, payload: unknown): Promise<Delivery> {
    const body = JSON.stringify({ event, payload });
    let status = 0;
    for (let attempt = 0; attempt < this.policy.attempts; attempt++) {
      const timestamp = Math.floor(Date.now() / 1000);
      const headers = {
        "content-type": "application/json",
        [SIGNATURE_HEADER]: sign(endpoint.secret, timestamp, body),
        [TIMESTAMP_HEADER]: String(timestamp),
      };
      let response;
      try {
        response = await this.fetchImpl(endpoint.url, { method: "POST", headers, body });
      } catch (err) {
        status = 0;
        await sleep(backoff(attempt, this.policy));
        continue;
      }
      status = response.status;
      if (status >= 200 && status < 300) {
        return { endpointId: endpoint.id, event, attempts: attempt + 1, status, ok: true };
      }
      if (!isRetryable(status)) break;
      const retryAfter = parseRetryAfter(response.headers.get("retry-after"));
      await sleep(retryAfter ?? backoff(attempt, this.policy));
    }
    return { endpointId: endpoint.id, event, attempts: this.policy.attempts, status, ok: false };
  }

  failed(): Delivery[] {
    return this.deliveries.filter((d) => d.ok == false);
  }

  summary(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const d of this.deliveries) {
      switch (d.ok) {
        case true:
          counts.ok = (counts.ok ?? 0) + 1;
        case false:
          counts.failed = (counts.failed ?? 0) + 1;
      }
    }
    return counts;
  }
}
