/** HTTP: credits spent through the Fetch authorizer (Deno.serve on Deno, @hono/node-server on Node). */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { ApiKeyEvent } from "../../../api_keys/events.ts";
import { ApiKeysService } from "../../../api_keys/service.ts";
import { createApiKeyAuthorizer } from "../../../api_keys/fetch/api_keys.authorizer.ts";
import { createSafeFetch } from "../../../safe_response/fetch/mod.ts";
import { createRateLimiter } from "../../../rate_limits/mod.ts";
import { PEPPER_1 } from "../helpers.ts";
import {
  assertRefusedUntilNextHour,
  creditedKey,
  CreditedStorage,
  pooledKey,
} from "../credited_storage.ts";
import { serve, type Served } from "../../scenarios/_serve.ts";

const HOUR = 3_600_000;

for (const mode of ["plain", "envelope", "problem"] as const) {
  describe(`Fetch authorizer credits, ${mode}`, () => {
    let server: Served;
    let service: ApiKeysService;
    const storage = new CreditedStorage();
    const events: ApiKeyEvent[] = [];
    before(async () => {
      service = new ApiKeysService({
        peppers: { 1: PEPPER_1 },
        storage,
        limiter: createRateLimiter({ logger: () => {} }),
        creditThresholds: [4],
        onEvent: (event) => void events.push(event),
      });
      const safe = createSafeFetch({ problemDetails: mode === "problem" });
      const authorize = createApiKeyAuthorizer(service, {
        onError: mode === "plain" ? undefined : safe.errorResponse,
      });
      const plainRoute = authorize.protect(() => Response.json({ ok: true }));
      const heavy = authorize.require({ cost: 2 }).protect(() => new Response("heavy"));
      server = await serve((request) =>
        new URL(request.url).pathname === "/heavy" ? heavy(request) : plainRoute(request)
      );
    });
    after(() => server.close());

    const get = async (key: string, path = "/") => {
      const response = await fetch(server.url + path, { headers: { "x-api-key": key } });
      return { response, text: await response.text() };
    };

    it("a key with 3 credits answers 200, 200, 200, then 429 api_key_usage_exceeded with Retry-After at the next refill", async () => {
      const { key } = await creditedKey(service, storage, {
        remaining: 3,
        updatedAt: new Date(),
        refill: { amount: 3, everyMs: HOUR },
      });
      for (let i = 0; i < 3; i++) assert.equal((await get(key)).response.status, 200);
      const denied = await get(key);
      assertRefusedUntilNextHour(denied.response);
      const body = JSON.parse(denied.text);
      if (mode === "plain") {
        assert.deepEqual(body, {
          statusCode: 429,
          code: "api_key_usage_exceeded",
          message: "API key has too few credits left",
          details: { creditBalance: "key" },
        });
      } else if (mode === "envelope") {
        assert.equal(body.success, false);
        assert.equal(body.error.code, "api_key_usage_exceeded");
      } else {
        assert.match(denied.response.headers.get("content-type") ?? "", /problem\+json/);
        assert.equal(body.code, "api_key_usage_exceeded");
        assert.equal(body.status, 429);
      }
    });

    it("a key on its tenant's pool: the pool's refusal names the tenant's balance in the body, Retry-After at the pool's refill", async () => {
      const key = await pooledKey(service, `pool-${mode}`);
      assert.equal((await get(key)).response.status, 200);
      const denied = await get(key);
      assertRefusedUntilNextHour(denied.response);
      const body = JSON.parse(denied.text);
      const details = mode === "envelope" ? body.error.details : body.details;
      assert.deepEqual(details, { creditBalance: "tenant" }, denied.text);
    });

    it("a balance without refill: 429 without Retry-After", async () => {
      const { key } = await creditedKey(service, storage, { remaining: 0 });
      const denied = await get(key);
      assert.equal(denied.response.status, 429);
      assert.equal(denied.response.headers.get("retry-after"), null);
    });

    it("the route's cost is spent; concurrent requests fire credits_low and credits_exhausted once each", async () => {
      const { key, id } = await creditedKey(service, storage, { remaining: 10 });
      const statuses = await Promise.all(
        Array.from({ length: 8 }, () => get(key, "/heavy").then((r) => r.response.status)),
      );
      assert.deepEqual(statuses.sort(), [200, 200, 200, 200, 200, 429, 429, 429]);
      const mine = events.filter((e) => "keyId" in e && e.keyId === id)
        .map((e) => e.type).filter((type) => type.startsWith("api_key.credits_"));
      assert.deepEqual(mine.sort(), ["api_key.credits_exhausted", "api_key.credits_low"]);
    });
  });
}
