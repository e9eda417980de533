/** HTTP: credits spent through ApiKeysGuard and RateLimit's cost on real Nest apps (Express and Fastify). */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { Controller, Get, Module, UseGuards } from "@nestjs/common";
import type { ApiKeyEvent } from "../../../api_keys/events.ts";
import { ApiKeysModule } from "../../../api_keys/nest/api_keys.module.ts";
import { ApiKeysGuard } from "../../../api_keys/nest/api_keys.guard.ts";
import { RateLimit } from "../../../api_keys/nest/api_keys.decorators.ts";
import { SafeResponseModule } from "../../../safe_response/nest/mod.ts";
import { createRateLimiter } from "../../../rate_limits/mod.ts";
import {
  assertRefusedUntilNextHour,
  creditedKey,
  CreditedStorage,
  pooledKey,
} from "../credited_storage.ts";
import { boot, moduleOptions, PLATFORMS, type RunningApp } from "./test_app.ts";

@Controller("credits")
@UseGuards(ApiKeysGuard)
class CreditsController {
  @Get()
  index() {
    return { ok: true };
  }

  @Get("heavy")
  @RateLimit(undefined, { cost: 2 })
  heavy() {
    return { ok: "heavy" };
  }
}

const HOUR = 3_600_000;

for (const platform of PLATFORMS) {
  for (const mode of ["plain", "envelope", "problem"] as const) {
    describe(`credits over ${platform}, ${mode}`, () => {
      let running: RunningApp;
      let base: string;
      const storage = new CreditedStorage();
      const events: ApiKeyEvent[] = [];
      before(async () => {
        const apiKeys = ApiKeysModule.forRoot(moduleOptions({
          storage,
          limiter: createRateLimiter({ logger: () => {} }),
          creditThresholds: [4],
          onEvent: (event) => void events.push(event),
        }));
        const imports = mode === "plain" ? [apiKeys] : [
          apiKeys,
          SafeResponseModule.register({ problemDetails: mode === "problem" }),
        ];
        @Module({ imports, controllers: [CreditsController] })
        class AppModule {}
        running = await boot(AppModule, platform);
        const { port } = running.app.getHttpServer().address() as { port: number };
        base = `http://127.0.0.1:${port}`;
      });
      after(() => running.close());

      const get = async (key: string, path = "/credits") => {
        const response = await fetch(base + path, { headers: { "x-api-key": key } });
        return { response, body: await response.json() };
      };

      it("a key with 3 credits answers 200, 200, 200, then 429 api_key_usage_exceeded with Retry-After at the next refill", async () => {
        const { key } = await creditedKey(running.service, storage, {
          remaining: 3,
          updatedAt: new Date(),
          refill: { amount: 3, everyMs: HOUR },
        });
        for (let i = 0; i < 3; i++) assert.equal((await get(key)).response.status, 200);
        const denied = await get(key);
        assertRefusedUntilNextHour(denied.response);
        assert.equal(denied.response.headers.get("ratelimit"), null, "no policy, no RateLimit");
        if (mode === "plain") {
          assert.deepEqual(denied.body, {
            statusCode: 429,
            code: "api_key_usage_exceeded",
            message: "API key has too few credits left",
            details: { creditBalance: "key" },
          });
        } else if (mode === "envelope") {
          assert.equal(denied.body.success, false);
          assert.equal(denied.body.error.code, "api_key_usage_exceeded");
        } else {
          assert.match(
            denied.response.headers.get("content-type") ?? "",
            /^application\/problem\+json/,
          );
          assert.equal(denied.body.status, 429);
          assert.equal(denied.body.code, "api_key_usage_exceeded");
        }
      });

      it("a key on its tenant's pool: the pool's refusal names the tenant's balance in the body, Retry-After at the pool's refill", async () => {
        const key = await pooledKey(running.service, `pool-${platform}-${mode}`);
        assert.equal((await get(key)).response.status, 200);
        const denied = await get(key);
        assertRefusedUntilNextHour(denied.response);
        const details = mode === "envelope" ? denied.body.error.details : denied.body.details;
        assert.deepEqual(details, { creditBalance: "tenant" }, JSON.stringify(denied.body));
      });

      it("a balance without refill: 429 without Retry-After", async () => {
        const { key } = await creditedKey(running.service, storage, { remaining: 0 });
        const denied = await get(key);
        assert.equal(denied.response.status, 429);
        assert.equal(denied.response.headers.get("retry-after"), null);
      });

      it("the route's cost is spent; concurrent requests fire credits_low and credits_exhausted once each", async () => {
        const { key, id } = await creditedKey(running.service, storage, { remaining: 10 });
        const statuses = await Promise.all(
          Array.from(
            { length: 8 },
            () => get(key, "/credits/heavy").then((r) => r.response.status),
          ),
        );
        assert.deepEqual(statuses.sort(), [200, 200, 200, 200, 200, 429, 429, 429]);
        const mine = events.filter((e) => "keyId" in e && e.keyId === id)
          .map((e) => e.type).filter((type) => type.startsWith("api_key.credits_"));
        assert.deepEqual(mine.sort(), ["api_key.credits_exhausted", "api_key.credits_low"]);
      });
    });
  }
}
