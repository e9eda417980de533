/**
 * `ApiKeysThrottlerTracker`: the `@nestjs/throttler` tracker bound to the
 * module (the guard's verified key whatever the context writer, else the client
 * IP of the module's `clientIpResolver`, IPv6 grouped by network). Unit tests,
 * then `@nestjs/throttler` 6 for real on Express and Fastify over loopback HTTP.
 */
import "reflect-metadata";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Controller, Get, Module, type Provider, UseGuards } from "@nestjs/common";
import { APP_GUARD } from "@nestjs/core";
import { ThrottlerGuard, ThrottlerModule } from "@nestjs/throttler";
import { RequireScope } from "../../../api_keys/nest/api_keys.decorators.ts";
import { ApiKeysGuard, ApiKeysThrottlerTracker } from "../../../api_keys/nest/api_keys.guard.ts";
import {
  ApiKeysModule,
  type ApiKeysModuleOptions,
} from "../../../api_keys/nest/api_keys.module.ts";
import { trustedProxyClientIpResolver } from "../../../api_keys/nest/api_keys.client_ip.ts";
import { createThrottlerStorage } from "../../../rate_limits/throttler.ts";
import { createRateLimiter } from "../../../rate_limits/limiter.ts";
import { boot, issue, moduleOptions, PLATFORMS, type RunningApp, withKey } from "./test_app.ts";

const LIMIT = 3;

describe("ApiKeysThrottlerTracker (unit)", () => {
  const track = new ApiKeysThrottlerTracker().getTracker();

  it("without a verified key: the default resolver's client IP, IPv6 by /64, IPv4-mapped as IPv4", () => {
    assert.equal(track({ ip: "198.51.100.7" }), "ip:198.51.100.7");
    assert.equal(track({ ip: "::ffff:198.51.100.7" }), "ip:198.51.100.7");
    assert.equal(track({ ip: "2001:db8:1:2::1" }), "ip:2001:db8:1:2::/64");
    assert.equal(track({ ip: "2001:db8:1:2:aaaa::9" }), "ip:2001:db8:1:2::/64");
    assert.equal(track({ socket: { remoteAddress: "203.0.113.5" } }), "ip:203.0.113.5");
  });

  it("never trusts a request property: `request.apiKey` set by anyone but the guard is ignored", () => {
    assert.equal(track({ apiKey: { keyId: "forged" }, ip: "198.51.100.7" }), "ip:198.51.100.7");
  });

  it("an unknown or unparsable client IP is `ip:unknown`", () => {
    assert.equal(track({}), "ip:unknown");
    assert.equal(track({ ip: "not-an-ip" }), "ip:unknown");
  });

  it("uses the module's resolver, async ones included; a failing one means unknown", async () => {
    const fromHeader = new ApiKeysThrottlerTracker((request) => request.headers["x-client"])
      .getTracker();
    assert.equal(
      fromHeader({ ip: "10.0.0.1", headers: { "x-client": "2001:db8::5" } }),
      "ip:2001:db8::/64",
    );
    const later = new ApiKeysThrottlerTracker(() => Promise.resolve("::ffff:10.9.8.7"))
      .getTracker();
    assert.equal(await later({}), "ip:10.9.8.7");
    const failing = new ApiKeysThrottlerTracker(() => Promise.reject(new Error("down")))
      .getTracker();
    assert.equal(await failing({}), "ip:unknown");
  });

  it("ipv6SubnetPrefix sets the IPv6 grouping (0 to 128); anything else throws at startup", () => {
    const tracker = new ApiKeysThrottlerTracker();
    assert.equal(
      tracker.getTracker({ ipv6SubnetPrefix: 56 })({ ip: "2001:db8:1:2ff::1" }),
      "ip:2001:db8:1:200::/56",
    );
    assert.equal(
      tracker.getTracker({ ipv6SubnetPrefix: 128 })({ ip: "2001:db8::1" }),
      "ip:2001:db8::1/128",
    );
    for (const bad of [-1, 129, 1.5, Number.NaN, "64"]) {
      assert.throws(
        () => tracker.getTracker({ ipv6SubnetPrefix: bad as number }),
        /ipv6SubnetPrefix must be an integer from 0 to 128/,
      );
    }
    assert.throws(
      () => tracker.getTracker({ ipv6SubnetPrefx: 48 } as object),
      /unknown option `ipv6SubnetPrefx` \(known: ipv6SubnetPrefix\)/,
      "a misspelt prefix is not the default /64 silently",
    );
  });
});

@Controller()
class RoutesController {
  @Get("public")
  @UseGuards(ThrottlerGuard)
  open() {
    return { ok: true };
  }

  /** The throttler refuses before the key is checked (nothing charged). */
  @Get("first")
  @UseGuards(ThrottlerGuard, ApiKeysGuard)
  @RequireScope("orders", "read")
  first() {
    return { ok: true };
  }

  @Get("orders")
  @UseGuards(ApiKeysGuard, ThrottlerGuard)
  @RequireScope("orders", "read")
  orders() {
    return { ok: true };
  }
}

/** Routes behind global guards only. */
@Controller()
class GlobalRoutesController {
  @Get("orders")
  @RequireScope("orders", "read")
  orders() {
    return { ok: true };
  }
}

/** The throttler module as the docs print it: its tracker injected from `ApiKeysModule`. */
function throttlerModule() {
  return ThrottlerModule.forRootAsync({
    inject: [ApiKeysThrottlerTracker],
    useFactory: (tracker: ApiKeysThrottlerTracker) => {
      const throttlers = [{ ttl: 60_000, limit: LIMIT }];
      return {
        throttlers,
        storage: createThrottlerStorage(createRateLimiter({ logger: () => {} }), { throttlers }),
        getTracker: tracker.getTracker(),
      };
    },
  });
}

/**
 * An app whose key limits and throttler share one limiter (as the docs advise), the throttler
 * `default` of 60 s keyed by the tracker alone, as keys' own policy `default` of 60 s.
 */
async function startShared(platform: (typeof PLATFORMS)[number]): Promise<RunningApp> {
  const limiter = createRateLimiter({ logger: () => {} });
  const throttlers = [{ name: "default", ttl: 60_000, limit: LIMIT }];
  @Module({
    imports: [
      ApiKeysModule.forRoot(moduleOptions({ limiter })),
      ThrottlerModule.forRootAsync({
        inject: [ApiKeysThrottlerTracker],
        useFactory: (tracker: ApiKeysThrottlerTracker) => ({
          throttlers,
          storage: createThrottlerStorage(limiter, { throttlers }),
          getTracker: tracker.getTracker(),
          generateKey: (_context: unknown, key: string) => key, // one count per key, all routes
        }),
      }),
    ],
    controllers: [RoutesController],
  })
  class AppModule {}
  return await boot(AppModule, platform);
}

/** An app behind a trusted proxy (127.0.0.1, framework trust off) with the given options. */
async function start(
  platform: (typeof PLATFORMS)[number],
  extra: Partial<ApiKeysModuleOptions> = {},
  global = false,
): Promise<RunningApp> {
  const providers: Provider[] = global
    ? [
      // Nest runs global guards in the order they are provided: the key first.
      { provide: APP_GUARD, useExisting: ApiKeysGuard },
      { provide: APP_GUARD, useClass: ThrottlerGuard },
    ]
    : [];
  @Module({
    imports: [
      ApiKeysModule.forRoot(moduleOptions({
        clientIpResolver: trustedProxyClientIpResolver({ trustedProxies: ["127.0.0.1"] }),
        ...extra,
      })),
      throttlerModule(),
    ],
    controllers: [global ? GlobalRoutesController : RoutesController],
    providers,
  })
  class AppModule {}
  return await boot(AppModule, platform);
}

/** Statuses of `count` requests, one after another. */
async function statuses(
  app: RunningApp,
  path: string,
  headers: Record<string, string>,
  count = 1,
): Promise<number[]> {
  const answers: number[] = [];
  for (let i = 0; i < count; i++) answers.push((await app.request(path, { headers })).status);
  return answers;
}

const from = (ip: string) => ({ "x-forwarded-for": ip });

/** Two tenants' keys from one client IP: one exhausting its count leaves the other's whole. */
async function assertKeysCountApart(app: RunningApp): Promise<void> {
  try {
    const stolen = await issue(app.service, { tenantId: "tenant-a" });
    const other = await issue(app.service, { tenantId: "tenant-b" });
    const client = from("198.51.100.66");
    assert.deepEqual(
      await statuses(app, "/orders", withKey(stolen.key, client), LIMIT + 1),
      [200, 200, 200, 429],
    );
    assert.deepEqual(await statuses(app, "/orders", withKey(other.key, client)), [200]);
  } finally {
    await app.close();
  }
}

for (const platform of PLATFORMS) {
  describe(`ApiKeysThrottlerTracker with @nestjs/throttler 6 over HTTP (${platform})`, () => {
    it("behind a trusted proxy, each client has its own count, not the proxy's", async () => {
      const app = await start(platform);
      try {
        const attacker = from("198.51.100.66");
        assert.deepEqual(await statuses(app, "/public", attacker, LIMIT + 1), [200, 200, 200, 429]);
        assert.deepEqual(await statuses(app, "/public", from("203.0.113.9")), [200]);
        // Throttler first: a client without a key is counted by its own address too.
        assert.deepEqual(await statuses(app, "/first", attacker, LIMIT + 1), [401, 401, 401, 429]);
        const { key } = await issue(app.service);
        assert.deepEqual(await statuses(app, "/first", withKey(key, from("203.0.113.10"))), [200]);
      } finally {
        await app.close();
      }
    });

    it("with a custom context writer, each verified key has its own count", async () => {
      const app = await start(platform, {
        // deno-lint-ignore no-explicit-any
        contextWriter: (context, request: any) => {
          request.auth = { tenantId: context.tenantId, keyId: context.keyId };
        },
      });
      await assertKeysCountApart(app);
    });

    it("an IPv6 client is counted by its /64, an IPv4-mapped one as its IPv4 address", async () => {
      const app = await start(platform);
      try {
        const rotating: number[] = [];
        for (let i = 1; i <= LIMIT + 2; i++) {
          rotating.push(...await statuses(app, "/public", from(`2001:db8:1:2::${i.toString(16)}`)));
        }
        assert.deepEqual(rotating, [200, 200, 200, 429, 429]);
        assert.deepEqual(await statuses(app, "/public", from("2001:db8:1:3::1")), [200]);
        assert.deepEqual(await statuses(app, "/public", from("198.51.100.7"), 2), [200, 200]);
        assert.deepEqual(await statuses(app, "/public", from("::ffff:198.51.100.7"), 2), [
          200,
          429,
        ]);
      } finally {
        await app.close();
      }
    });

    it("a key's own policy and a throttler of the same name and window on one limiter count apart", async () => {
      const app = await startShared(platform);
      try {
        const { key } = await issue(app.service, {
          rateLimits: [{ name: "default", limit: LIMIT, windowMs: 60_000 }],
        });
        // Each request is one unit of the key's policy and one hit of the throttler, not two of one.
        assert.deepEqual(
          await statuses(app, "/orders", withKey(key, from("198.51.100.8")), LIMIT + 1),
          [200, 200, 200, 429],
        );
      } finally {
        await app.close();
      }
    });

    it("global guards, ApiKeysGuard provided first: each verified key has its own count", async () => {
      const app = await start(platform, {}, true);
      await assertKeysCountApart(app);
    });
  });
}
