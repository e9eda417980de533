import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Controller, Get, Module } from "@nestjs/common";
import { APP_GUARD } from "@nestjs/core";
import { ThrottlerGuard, ThrottlerModule } from "@nestjs/throttler";
import { SafeResponseModule } from "../../../safe_response/nest/mod.ts";
import { ADAPTERS, boot, getJson } from "./helpers.ts";

@Controller("rl")
class LimitedController {
  @Get()
  get() {
    return "counted";
  }
}

@Module({
  imports: [
    ThrottlerModule.forRoot([{ ttl: 60_000, limit: 2 }]),
    SafeResponseModule.register({ rateLimit: true }),
  ],
  controllers: [LimitedController],
  providers: [{ provide: APP_GUARD, useClass: ThrottlerGuard }],
})
class LimitedModule {}

@Module({
  imports: [ThrottlerModule.forRoot([{ ttl: 60_000, limit: 5 }]), SafeResponseModule.register()],
  controllers: [LimitedController],
  providers: [{ provide: APP_GUARD, useClass: ThrottlerGuard }],
})
class UnmirroredModule {}

for (const adapter of ADAPTERS) {
  describe(`rate-limit mirroring with @nestjs/throttler (${adapter})`, () => {
    it("mirrors X-RateLimit-* into meta.rateLimit, and Retry-After on the 429", async () => {
      const { url, close } = await boot(LimitedModule, adapter);
      try {
        const first = await getJson(url, "/rl");
        assert.equal(first.headers.get("x-ratelimit-limit"), "2");
        const reset = Number(first.headers.get("x-ratelimit-reset"));
        assert.ok(reset > 0 && reset <= 60);
        assert.deepEqual((first.body.meta as Record<string, unknown>).rateLimit, {
          limit: 2,
          remaining: 1,
          reset,
        });
        const second = await getJson(url, "/rl");
        assert.equal(
          (second.body.meta as { rateLimit: { remaining: number } }).rateLimit.remaining,
          0,
        );
        const limited = await getJson(url, "/rl");
        assert.equal(limited.status, 429);
        assert.equal((limited.body.error as { code: string }).code, "TOO_MANY_REQUESTS");
        const retryAfter = Number(limited.headers.get("retry-after"));
        assert.ok(retryAfter > 0 && retryAfter <= 60);
        assert.deepEqual((limited.body.meta as Record<string, unknown>).rateLimit, {
          limit: 0,
          remaining: 0,
          reset: retryAfter,
          retryAfter,
        });
      } finally {
        await close();
      }
    });

    it("adds no rateLimit meta when the option is off", async () => {
      const { url, close } = await boot(UnmirroredModule, adapter);
      try {
        const { headers, body } = await getJson(url, "/rl");
        assert.equal(headers.get("x-ratelimit-limit"), "5");
        assert.equal(body.meta, undefined);
      } finally {
        await close();
      }
    });
  });
}
