// The installed @nestjs/throttler over the package's rate-limit store (./app.ts's throttler keeps
// its own storage): `createThrottlerStorage(createMemoryRateLimitStore(), { throttlerMajor })`
// (the installed major: 4 and 5 both call `increment(key, ttl)`, in seconds and in ms), tracked
// by `apiKeyThrottlerTracker` (5.1 and later take it as the `getTracker` option, 4.x and 5.0 as
// an override of the guard's `getTracker(req)`). Its own app, as a throttler module is global.
// Requests come from two loopback addresses (Linux routes all of 127/8 to the loopback).
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import {
  Controller,
  type DynamicModule,
  Get,
  type INestApplication,
  Injectable,
  Module,
  type Type,
  UseGuards,
} from "@nestjs/common";
import { ThrottlerGuard, ThrottlerModule } from "@nestjs/throttler";
import { ApiKeysService, InMemoryApiKeyStorage } from "@saferoute/api-kit/api-keys";
import { ApiKeysGuard, ApiKeysModule, RequireScope } from "@saferoute/api-kit/api-keys/nest";
import {
  apiKeyThrottlerTracker,
  createMemoryRateLimitStore,
  createThrottlerStorage,
} from "@saferoute/api-kit/rate-limits";
import { installedVersion } from "./app.ts";

/** Requests a minute per tracker. */
const LIMIT = 3;
const [MAJOR, MINOR] = installedVersion("@nestjs/throttler");
/** 4.x: one limit, `ttl` in seconds. */
const LEGACY = MAJOR < 5;
/** `getTracker` is an option from 5.1 on; 4.x and 5.0 override the guard's. */
const TRACKER_OPTION = MAJOR > 5 || (MAJOR === 5 && MINOR >= 1);
const [FIRST_IP, SECOND_IP] = ["127.0.0.1", "127.0.0.2"];

/** Throttler 4's and 5.0's way to track: the guard's `getTracker(req)` (4 does not await it), overridden. */
@Injectable()
class TrackedThrottlerGuard extends ThrottlerGuard {
  // 4.x types it `string`, 5.x and later `Promise<string>` (they await it): both accept this.
  // deno-lint-ignore no-explicit-any
  protected override getTracker(request: Record<string, any>): any {
    return apiKeyThrottlerTracker(request);
  }
}

const GUARD = TRACKER_OPTION ? ThrottlerGuard : TrackedThrottlerGuard;

@Controller("store-throttled")
class StoreThrottledController {
  /** Counted per key: the API-key guard runs first. */
  @Get("keyed")
  @UseGuards(ApiKeysGuard, GUARD)
  @RequireScope("orders", "read")
  keyed() {
    return { ok: true };
  }

  /** No key: counted per client IP. */
  @Get("open")
  @UseGuards(GUARD)
  open() {
    return { ok: true };
  }
}

/** The throttler over the store, in the installed release's `forRoot` signature. */
function throttlerModule(): DynamicModule {
  const storage = createThrottlerStorage(createMemoryRateLimitStore(), {
    throttlerMajor: MAJOR as 4 | 5 | 6,
  });
  const options = LEGACY ? { ttl: 60, limit: LIMIT, storage } : {
    throttlers: [{ ttl: 60_000, limit: LIMIT }],
    storage,
    ...(TRACKER_OPTION ? { getTracker: apiKeyThrottlerTracker } : {}),
  };
  return ThrottlerModule.forRoot(options as Parameters<typeof ThrottlerModule.forRoot>[0]);
}

@Module({
  imports: [
    ApiKeysModule.forRoot({
      peppers: { 1: "consumer-throttler-pepper-0123456789abcdef" },
      storage: new InMemoryApiKeyStorage(),
      ttlPolicy: { allowNeverExpires: true },
    }),
    throttlerModule(),
  ],
  controllers: [StoreThrottledController],
})
class StoreThrottlerModule {}

/** A GET of `path` from `localAddress`: the status and the throttler's headers. */
function get(
  port: number,
  path: string,
  localAddress: string,
  key?: string,
): Promise<{ status: number; remaining: number; retryAfter: number }> {
  const headers: Record<string, string> = key === undefined ? {} : { "x-api-key": key };
  return new Promise((resolve, reject) => {
    const options = { host: "127.0.0.1", port, path, localAddress, headers, agent: false };
    http.get(options, (response) => {
      response.resume();
      response.on("end", () =>
        resolve({
          status: response.statusCode ?? 0,
          remaining: Number(response.headers["x-ratelimit-remaining"]),
          retryAfter: Number(response.headers["retry-after"]),
        }));
    }).on("error", reject);
  });
}

/**
 * Registers the checks of the throttler over the store against an app `createApp` makes: exact
 * hits and the 429, counted by key id across client IPs, else by client IP.
 */
export function storeThrottlerChecks(
  createApp: (module: Type<unknown>) => Promise<INestApplication>,
): void {
  describe("@nestjs/throttler over createThrottlerStorage, tracked by apiKeyThrottlerTracker", () => {
    let app: INestApplication;
    let port = 0;
    before(async () => {
      app = await createApp(StoreThrottlerModule);
      await app.listen(0, "127.0.0.1");
      port = app.getHttpServer().address().port;
    });
    after(async () => {
      await app?.close();
    });

    const newKey = async () =>
      (await app.get(ApiKeysService).create({
        tenantId: "consumer",
        name: "throttled",
        scopes: [{ resource: "orders", level: "read" }],
        expiresAt: null,
      })).key;

    it("one key from two IPs shares one count: exact hits, then 429", async () => {
      const key = await newKey();
      for (let n = 1; n <= LIMIT; n++) {
        const reply = await get(port, "/store-throttled/keyed", n % 2 ? FIRST_IP : SECOND_IP, key);
        assert.deepEqual([reply.status, reply.remaining], [200, LIMIT - n]);
      }
      for (const ip of [FIRST_IP, SECOND_IP]) {
        const refused = await get(port, "/store-throttled/keyed", ip, key);
        assert.equal(refused.status, 429);
        // a hit counts for ttl and one sub-bucket (docs/rate-limits.md, the algorithm)
        assert.ok(refused.retryAfter > 0 && refused.retryAfter <= 66, `${refused.retryAfter}`);
      }
      const other = await get(port, "/store-throttled/keyed", FIRST_IP, await newKey());
      assert.deepEqual(
        [other.status, other.remaining],
        [200, LIMIT - 1],
        "another key counts apart",
      );
    });

    it("without a key, each client IP has its own count", async () => {
      for (let n = 1; n <= LIMIT; n++) {
        const reply = await get(port, "/store-throttled/open", FIRST_IP);
        assert.deepEqual([reply.status, reply.remaining], [200, LIMIT - n]);
      }
      assert.equal((await get(port, "/store-throttled/open", FIRST_IP)).status, 429);
      const other = await get(port, "/store-throttled/open", SECOND_IP);
      assert.deepEqual([other.status, other.remaining], [200, LIMIT - 1]);
    });
  });
}
