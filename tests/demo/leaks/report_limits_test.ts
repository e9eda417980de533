/**
 * The public leak-report route's limits on both demos: a client over its
 * limit gets a 429 with `Retry-After` while another client still passes, and
 * the global limit refuses everyone past it. Clients differ by the address the
 * loopback proxy forwards (Nest) or by the connection's peer (Fetch).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { InMemoryApiKeyStorage } from "../../../api_keys/mod.ts";
import { createFetchDemoApp } from "../../../demo/fetch/app.ts";
import { LEAK_ROUTES } from "../../../demo/leaks/handlers.ts";
import { createLeakReportLimiter } from "../../../demo/leaks/report_limits.ts";
import { startTestDemo } from "../_demo.ts";

const LIMITS = { perClient: 2, global: 5, windowMs: 60_000 };

/** Posts one public report from `client`; the status, `Retry-After`, error code and limit shown. */
type Report = (
  client: string,
) => Promise<{ status: number; retryAfter: string | null; code?: string; limit?: number }>;

const answer = async (response: Response) => {
  const body = await response.json();
  return {
    status: response.status,
    retryAfter: response.headers.get("Retry-After"),
    code: body.error?.code,
    limit: body.meta?.rateLimit?.limit,
  };
};

/** The limits' behaviour, whatever the demo. */
function limitCases(start: () => Promise<{ report: Report; close(): Promise<void> }>) {
  it("a client over its limit gets 429 with Retry-After; another client still passes", async () => {
    const demo = await start();
    try {
      assert.equal((await demo.report("203.0.113.1")).status, 202);
      assert.equal((await demo.report("203.0.113.1")).status, 202);
      const refused = await demo.report("203.0.113.1");
      assert.equal(refused.status, 429);
      assert.equal(refused.code, "TOO_MANY_REQUESTS");
      assert.equal(refused.limit, LIMITS.perClient);
      const seconds = Number(refused.retryAfter);
      assert.ok(
        Number.isInteger(seconds) && seconds >= 1 && seconds <= 66, // a window and one sub-bucket
        refused.retryAfter ?? "none",
      );
      assert.equal((await demo.report("203.0.113.2")).status, 202);
    } finally {
      await demo.close();
    }
  });

  it("the global limit refuses everyone past it", async () => {
    const demo = await start();
    try {
      for (
        const client of [
          "198.51.100.1",
          "198.51.100.2",
          "198.51.100.3",
          "198.51.100.4",
          "198.51.100.5",
        ]
      ) {
        assert.equal((await demo.report(client)).status, 202, client);
      }
      for (const client of ["198.51.100.6", "198.51.100.1", "2001:db8::1"]) {
        const refused = await demo.report(client);
        assert.equal(refused.status, 429, client);
        assert.ok(Number(refused.retryAfter) >= 1, client);
        assert.equal(refused.limit, LIMITS.global, client);
      }
    } finally {
      await demo.close();
    }
  });
}

for (const adapter of ["express", "fastify"] as const) {
  describe(`the Nest demo's public leak-report limits (${adapter})`, () => {
    limitCases(async () => {
      const server = await startTestDemo({ adapter, leakReportLimits: LIMITS });
      return {
        report: async (client) =>
          answer(
            await fetch(server.url + LEAK_ROUTES.report, {
              method: "POST",
              headers: { "Content-Type": "application/json", "X-Forwarded-For": client },
              body: JSON.stringify({ key: "hello" }),
            }),
          ),
        close: () => server.close(),
      };
    });
  });
}

describe("the Fetch demo's public leak-report limits", () => {
  limitCases(() => {
    const app = createFetchDemoApp({
      storage: new InMemoryApiKeyStorage(),
      peppers: { 1: "a-pepper-of-at-least-thirty-two-bytes" },
      problemDetails: false,
      pageAssets: { html: "", script: "", client: "", elements: "" },
      pageSession: { adminKey: undefined },
      leakReportLimits: LIMITS,
    });
    return Promise.resolve({
      report: async (client) => {
        const request = new Request(`http://127.0.0.1${LEAK_ROUTES.report}`, {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ key: "hello" }),
        });
        return answer(
          await app.handler(request, { remoteAddr: { hostname: client, port: 40_000 } }),
        );
      },
      close: () => Promise.resolve(),
    });
  });
});

describe("createLeakReportLimiter", () => {
  it("checks both policies all or nothing: a refused report consumes nothing", async () => {
    const limiter = createLeakReportLimiter({ perClient: 1, global: 2, windowMs: 60_000 });
    assert.equal(await limiter.admit("203.0.113.1"), undefined);
    assert.equal((await limiter.admit("203.0.113.1"))?.["X-RateLimit-Limit"], "1");
    // The refused report did not count globally: a second client still fits, a third does not.
    assert.equal(await limiter.admit("203.0.113.2"), undefined);
    assert.equal((await limiter.admit("203.0.113.3"))?.["X-RateLimit-Limit"], "2");
  });

  it("missing and unreadable addresses share one client", async () => {
    const limiter = createLeakReportLimiter({ perClient: 1, global: 100, windowMs: 60_000 });
    assert.equal(await limiter.admit(undefined), undefined);
    for (const address of ["garbage", "", "1".repeat(10_000), undefined]) {
      assert.ok(await limiter.admit(address), String(address).slice(0, 20));
    }
  });

  it("refuses bad limits at construction", () => {
    assert.throws(
      () => createLeakReportLimiter({ perClient: 0, global: 1, windowMs: 1 }),
      TypeError,
    );
  });
});
