/**
 * `@nestjs/throttler` 6 for real: two Nest 12 instances (Express and Fastify)
 * in this process, each with its own `ThrottlerModule` whose `storage` is
 * `createThrottlerStorage` over one real store (PostgreSQL, Redis) and whose
 * `getTracker` is `apiKeyThrottlerTracker`, over loopback HTTP. Together they
 * accept exactly the limit (with the throttler's own storage they accept it
 * twice), tracked by key id across client IPs, by client IP without a key.
 */
import "reflect-metadata";
import http from "node:http";
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { Controller, Get, type INestApplication, Module, UseGuards } from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
import { ExpressAdapter } from "@nestjs/platform-express";
import { FastifyAdapter } from "@nestjs/platform-fastify";
import { ThrottlerGuard, ThrottlerModule, type ThrottlerStorage } from "@nestjs/throttler";
import { ApiKeysService, InMemoryApiKeyStorage } from "../../api_keys/mod.ts";
import { ApiKeysGuard, ApiKeysModule, RequireScope } from "../../api_keys/nest/mod.ts";
import { apiKeyThrottlerTracker, createThrottlerStorage } from "../../rate_limits/throttler.ts";
import { openStore, readyStores, type RealStore } from "./_services.ts";

const LIMIT = 20;
/** Two loopback client addresses (Linux routes all of 127/8 to the loopback). */
const CLIENT_IPS = ["127.0.0.1", "127.0.0.2"];

@Controller()
class RoutesController {
  /** Counted by key id: the API-key guard runs first. */
  @Get("orders")
  @UseGuards(ApiKeysGuard, ThrottlerGuard)
  @RequireScope("orders", "read")
  orders() {
    return { ok: true };
  }

  /** No key: counted by client IP. */
  @Get("public")
  @UseGuards(ThrottlerGuard)
  open() {
    return { ok: true };
  }
}

/** An instance: a started app and its origin. */
interface Instance {
  app: INestApplication;
  port: number;
}

/**
 * Starts an app on `platform` throttled by `throttler` (a fresh name per run,
 * so no earlier run's counts are seen) over `storage` (the throttler's own
 * when undefined), verifying keys of `keys`.
 */
async function start(
  platform: "express" | "fastify",
  keys: InMemoryApiKeyStorage,
  throttler: string,
  storage?: ThrottlerStorage,
): Promise<Instance> {
  @Module({
    imports: [
      ApiKeysModule.forRoot({
        peppers: { 1: "throttler-test-pepper-0123456789abcdef" },
        storage: keys,
        ttlPolicy: { allowNeverExpires: true },
      }),
      ThrottlerModule.forRoot({
        throttlers: [{ name: throttler, ttl: 60_000, limit: LIMIT }],
        storage,
        getTracker: apiKeyThrottlerTracker,
      }),
    ],
    controllers: [RoutesController],
  })
  class AppModule {}
  const adapter = platform === "express" ? new ExpressAdapter() : new FastifyAdapter();
  const app = await NestFactory.create(AppModule, adapter, { logger: false });
  await app.listen(0, "127.0.0.1");
  return { app, port: app.getHttpServer().address().port };
}

/** A GET from `localAddress` (a fresh connection); the status and the headers. */
function get(
  instance: Instance,
  path: string,
  localAddress: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const options = { host: "127.0.0.1", port: instance.port, path, localAddress, headers };
    http.get({ ...options, agent: false }, (response) => {
      response.resume();
      response.on(
        "end",
        () => resolve({ status: response.statusCode!, headers: response.headers }),
      );
    }).on("error", reject);
  });
}

/** A fleet of two instances (Express, Fastify) sharing `storage` and one key storage. */
class Fleet {
  readonly throttler = `t${crypto.randomUUID().slice(0, 8)}`;
  readonly keys = new InMemoryApiKeyStorage();
  instances: Instance[] = [];

  async start(storage?: () => ThrottlerStorage): Promise<this> {
    for (const platform of ["express", "fastify"] as const) {
      this.instances.push(await start(platform, this.keys, this.throttler, storage?.()));
    }
    return this;
  }

  async stop(): Promise<void> {
    await Promise.all(this.instances.map(({ app }) => app.close()));
  }

  async newKey(): Promise<string> {
    const service = this.instances[0].app.get(ApiKeysService);
    const { key } = await service.create({
      tenantId: "t1",
      name: "throttled",
      scopes: [{ resource: "orders", level: "read" }],
      expiresAt: null,
    });
    return key;
  }

  /**
   * `count` concurrent GETs of `path`, spread over both instances and both
   * client IPs (or from `ip` only).
   */
  fire(count: number, path: string, headers: Record<string, string> = {}, ip?: string) {
    return Promise.all(
      Array.from(
        { length: count },
        (_, i) => get(this.instances[i % 2], path, ip ?? CLIENT_IPS[(i >> 1) % 2], headers),
      ),
    );
  }

  /** The throttler's `X-RateLimit-Remaining` header of this fleet's throttler. */
  remaining(headers: http.IncomingHttpHeaders): number {
    return Number(headers[`x-ratelimit-remaining-${this.throttler}`]);
  }
}

/** Counts the statuses of `replies`. */
function statuses(replies: { status: number }[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const { status } of replies) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}

describe("@nestjs/throttler with its own storage (the problem)", () => {
  it(`two instances accept twice the limit: ${2 * LIMIT} of ${3 * LIMIT}`, async () => {
    const fleet = await new Fleet().start();
    try {
      const key = await fleet.newKey();
      const replies = await fleet.fire(3 * LIMIT, "/orders", { "x-api-key": key });
      assert.deepEqual(statuses(replies), { 200: 2 * LIMIT, 429: LIMIT });
    } finally {
      await fleet.stop();
    }
  });
});

for (const kind of await readyStores("@nestjs/throttler over a real store")) {
  describe(`@nestjs/throttler 6 on two Nest 12 instances over the ${kind} store`, () => {
    let real: RealStore;
    let fleet: Fleet;
    before(async () => {
      real = await openStore(kind, undefined, 10);
      fleet = await new Fleet().start(() => createThrottlerStorage(real.store));
    });
    after(async () => {
      await fleet.stop();
      await real.close();
    });

    it(`accept exactly the limit together: ${LIMIT} of ${3 * LIMIT} concurrent, one key, two IPs`, async () => {
      const key = await fleet.newKey();
      const replies = await fleet.fire(3 * LIMIT, "/orders", { "x-api-key": key });
      assert.deepEqual(statuses(replies), { 200: LIMIT, 429: 2 * LIMIT });
      const remaining = replies.filter((r) => r.status === 200).map((r) =>
        fleet.remaining(r.headers)
      );
      assert.deepEqual(
        remaining.sort((a, b) => a - b),
        Array.from({ length: LIMIT }, (_, i) => i),
        "each accepted hit saw its own count",
      );
      for (const refused of replies.filter((r) => r.status === 429)) {
        const retryAfter = Number(refused.headers[`retry-after-${fleet.throttler}`]);
        // A 60 s window's oldest counted sub-bucket leaves within 66 s (docs/rate-limits.md).
        assert.ok(retryAfter > 0 && retryAfter <= 66, `Retry-After ${retryAfter}`);
      }
      const other = await fleet.fire(2, "/orders", { "x-api-key": await fleet.newKey() });
      assert.deepEqual(statuses(other), { 200: 2 }, "another key from the same IPs counts apart");
    });

    it("track by client IP without a key: each IP has its own count across both instances", async () => {
      const [first, second] = CLIENT_IPS;
      const replies = await fleet.fire(LIMIT + 4, "/public", {}, first);
      assert.deepEqual(statuses(replies), { 200: LIMIT, 429: 4 });
      const other = await fleet.fire(2, "/public", {}, second);
      assert.deepEqual(statuses(other), { 200: 2 });
      assert.deepEqual(other.map((r) => fleet.remaining(r.headers)).sort(), [LIMIT - 2, LIMIT - 1]);
    });
  });
}
