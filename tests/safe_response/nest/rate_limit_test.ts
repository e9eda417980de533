import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Controller, Get, HttpException, Module, Res } from "@nestjs/common";
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

/** Sets `headers` on either adapter's response (Express `res`, Fastify `reply`). */
function setAll(response: { header(name: string, value: string): unknown }, headers: object) {
  for (const [name, value] of Object.entries(headers)) response.header(name, value);
}

@Controller("std")
class StandardController {
  @Get("item-list")
  itemList(@Res({ passthrough: true }) response: never) {
    setAll(response, {
      "RateLimit": '"day";r=900;t=80000, "burst";r=50;t=30',
      "RateLimit-Policy": '"burst";q=100;w=60, "day";q=1000;w=86400',
    });
    return "ok";
  }

  @Get("dictionary")
  dictionary(@Res({ passthrough: true }) response: never) {
    setAll(response, {
      "RateLimit": "limit=100, remaining=50, reset=30",
      "RateLimit-Policy": "100;w=60",
    });
    return "ok";
  }

  @Get("both")
  both(@Res({ passthrough: true }) response: never) {
    setAll(response, {
      "X-RateLimit-Limit": "10",
      "X-RateLimit-Remaining": "9",
      "X-RateLimit-Reset": "60",
      "RateLimit": '"burst";r=1;t=2',
    });
    return "ok";
  }

  @Get("broken")
  broken(@Res({ passthrough: true }) response: never) {
    setAll(response, { "RateLimit": '"burst";r=5;t=', "RateLimit-Policy": "((" });
    return "ok";
  }

  @Get("limited")
  limited(@Res({ passthrough: true }) response: never) {
    setAll(response, {
      "RateLimit": '"burst";r=0;t=12',
      "RateLimit-Policy": '"burst";q=100;w=60',
      "Retry-After": "12",
    });
    throw new HttpException("Slow down", 429);
  }
}

@Module({
  imports: [SafeResponseModule.register({ rateLimit: { standard: true } })],
  controllers: [StandardController],
})
class StandardModule {}

@Module({
  imports: [SafeResponseModule.register({ rateLimit: true })],
  controllers: [StandardController],
})
class PrefixOnlyModule {}

for (const adapter of ADAPTERS) {
  describe(`IETF RateLimit fields, rateLimit: { standard: true } (${adapter})`, () => {
    it("mirrors the item-list and dictionary syntaxes; X-RateLimit-* wins; a broken field is ignored", async () => {
      const { url, close } = await boot(StandardModule, adapter);
      try {
        const rateLimit = async (path: string) =>
          ((await getJson(url, path)).body.meta as Record<string, unknown> | undefined)?.rateLimit;
        assert.deepEqual(await rateLimit("/std/item-list"), {
          limit: 100,
          remaining: 50,
          reset: 30,
        });
        assert.deepEqual(await rateLimit("/std/dictionary"), {
          limit: 100,
          remaining: 50,
          reset: 30,
        });
        assert.deepEqual(await rateLimit("/std/both"), { limit: 10, remaining: 9, reset: 60 });
        assert.equal(await rateLimit("/std/broken"), undefined);
        const limited = await getJson(url, "/std/limited");
        assert.equal(limited.status, 429);
        assert.deepEqual((limited.body.meta as Record<string, unknown>).rateLimit, {
          limit: 100,
          remaining: 0,
          reset: 12,
          retryAfter: 12,
        });
      } finally {
        await close();
      }
    });

    it("ignores the standard fields without standard: true", async () => {
      const { url, close } = await boot(PrefixOnlyModule, adapter);
      try {
        const { body } = await getJson(url, "/std/item-list");
        assert.equal(body.meta, undefined);
      } finally {
        await close();
      }
    });
  });
}
