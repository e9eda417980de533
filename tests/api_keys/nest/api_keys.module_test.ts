import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { collectUnhandledRejections } from "../../reliability/harness.ts";
import {
  Controller,
  Get,
  type INestApplication,
  Inject,
  Injectable,
  Module,
  Scope,
  UseGuards,
} from "@nestjs/common";
import { APP_GUARD, NestFactory, REQUEST } from "@nestjs/core";
import { FastifyAdapter } from "@nestjs/platform-fastify";
import { ApiKeysGuard } from "../../../api_keys/nest/api_keys.guard.ts";
import {
  ApiKeysModule,
  type ApiKeysModuleOptions,
} from "../../../api_keys/nest/api_keys.module.ts";
import type {
  ApiKeyClientIpResolver,
  ApiKeyContextWriter,
} from "../../../api_keys/nest/api_keys.constants.ts";
import { eventually } from "../../eventually.ts";
import {
  appModule,
  boot,
  issue,
  KeyedController,
  moduleOptions,
  moduleWarnings,
  PEPPER,
  type Platform,
  PLATFORMS,
  withKey,
} from "./test_app.ts";
import { ApiKeysService } from "../../../api_keys/service.ts";
import { createMemoryRateLimitStore, createRateLimiter } from "../../../rate_limits/mod.ts";
import { InMemoryApiKeyStorage } from "../../../api_keys/storage/in_memory.ts";
import { InMemoryApiKeyChangeFeed } from "../../../api_keys/change_feed.ts";
import { overrideStorage } from "../helpers.ts";
import type { ApiKeyEvent, ApiKeyVerificationMetric } from "../../../api_keys/events.ts";
import type { ApiKeyErrorCode } from "../../../api_keys/errors.ts";

/** The service's part of module options (the module's own are refused by the service). */
function serviceOptionsOf(options: ApiKeysModuleOptions) {
  const { expiryNotices: _, ...service } = options;
  return service;
}

@Injectable()
class ConfigService {
  get(name: string): string {
    if (name !== "API_KEY_PEPPER") throw new Error(`unknown setting ${name}`);
    return PEPPER;
  }
}

@Module({ providers: [ConfigService], exports: [ConfigService] })
class ConfigModule {}

@Injectable({ scope: Scope.REQUEST })
class RequestConfig {
  pepper() {
    return PEPPER;
  }
}

@Module({ providers: [RequestConfig], exports: [RequestConfig] })
class RequestConfigModule {}

/** Asserts `app.init()` refuses a request-scoped `inject` of `forRootAsync`, then closes `app`. */
async function assertRequestScopeRefused(app: INestApplication): Promise<void> {
  try {
    await assert.rejects(
      app.init(),
      new TypeError(
        "ApiKeysModule.forRootAsync: `inject` must not include request-scoped providers",
      ),
    );
  } finally {
    await app.close().catch(() => {});
  }
}

async function bootFailure(options: unknown, platform: Platform): Promise<Error> {
  const module = appModule(ApiKeysModule.forRoot(options as ApiKeysModuleOptions));
  const settings = { logger: false as const, abortOnError: false };
  try {
    const app = platform === "express"
      ? await NestFactory.create(module, settings)
      : await NestFactory.create(module, new FastifyAdapter(), settings);
    await app.close();
  } catch (error) {
    return error as Error;
  }
  throw new Error("the app booted");
}

for (const platform of PLATFORMS) {
  describe(`ApiKeysModule over ${platform}`, () => {
    it("refuses to boot with a bad option, naming it and no secret", async () => {
      const cases: [Record<string, unknown>, RegExp][] = [
        [{ currentPepperVersion: 2 }, /currentPepperVersion/],
        [{ peppers: {} }, /peppers/],
        [{ debounceMs: -1 }, /debounceMs/],
        [{ storage: { insert() {}, findById() {} } }, /storage/],
        [{ contextWriter: "apiKey" }, /contextWriter/],
        [{ clientIpResolver: 42 }, /clientIpResolver/],
      ];
      for (const [override, message] of cases) {
        const error = await bootFailure(moduleOptions(override), platform);
        assert.ok(error instanceof TypeError, String(error));
        assert.match(error.message, message);
        assert.ok(!error.message.includes(PEPPER));
      }
    });

    it("forRootAsync builds the options from an injected config provider", async () => {
      const running = await boot(
        appModule(ApiKeysModule.forRootAsync({
          imports: [ConfigModule],
          inject: [ConfigService],
          useFactory: async (config: ConfigService) => {
            await Promise.resolve();
            return moduleOptions({ peppers: { 1: config.get("API_KEY_PEPPER") } });
          },
        })),
        platform,
      );
      try {
        const { key } = await issue(running.service);
        const response = await running.request("/open", { headers: withKey(key) });
        assert.equal(response.status, 200);
        assert.equal((response.body.current as { tenantId: string }).tenantId, "tenant-1");
      } finally {
        await running.close();
      }
    });

    it("forRootAsync refuses at init an `inject` naming a request-scoped provider", async () => {
      const settings = { logger: false as const, abortOnError: false };
      for (const inject of [[RequestConfig], [REQUEST]]) {
        const module = appModule(ApiKeysModule.forRootAsync({
          imports: [RequestConfigModule],
          inject,
          useFactory: () => moduleOptions(),
        }));
        const app = platform === "express"
          ? await NestFactory.create(module, settings)
          : await NestFactory.create(module, new FastifyAdapter(), settings);
        await assertRequestScopeRefused(app);
      }
    });

    it("forRootAsync validates the produced options at boot", async () => {
      const module = appModule(ApiKeysModule.forRootAsync({
        useFactory: () => moduleOptions({ debounceMs: -5 }),
      }));
      const settings = { logger: false as const, abortOnError: false };
      await assert.rejects(
        platform === "express"
          ? NestFactory.create(module, settings)
          : NestFactory.create(module, new FastifyAdapter(), settings),
        /debounceMs/,
      );
    });

    it("forRoot and forRootAsync refuse unknown options at boot, naming them", async () => {
      const settings = { logger: false as const, abortOnError: false };
      const create = (module: ReturnType<typeof appModule>) =>
        platform === "express"
          ? NestFactory.create(module, settings)
          : NestFactory.create(module, new FastifyAdapter(), settings);
      const unknown = { ...moduleOptions(), rateLimit: { limit: 1 } } as ApiKeysModuleOptions;
      await assert.rejects(
        create(appModule(ApiKeysModule.forRoot(unknown))),
        /ApiKeysModuleOptions: unknown option `rateLimit`/,
      );
      await assert.rejects(
        create(
          appModule(ApiKeysModule.forRootAsync({ useFactory: () => ({ ...unknown, foo: 1 }) })),
        ),
        /ApiKeysModuleOptions: unknown options `rateLimit`, `foo`/,
      );
    });

    it("uses a custom context writer while CurrentApiKey keeps working", async () => {
      const contextWriter: ApiKeyContextWriter = async (context, request) => {
        await Promise.resolve();
        request.auth = { apiKeyId: context.keyId };
      };
      const running = await boot(
        appModule(ApiKeysModule.forRoot(moduleOptions({ contextWriter }))),
        platform,
      );
      try {
        const { id, key } = await issue(running.service);
        const { status, body } = await running.request("/open", { headers: withKey(key) });
        assert.equal(status, 200);
        assert.deepEqual(body.auth, { apiKeyId: id });
        assert.equal(body.property, null);
        assert.equal((body.current as { keyId: string }).keyId, id);
      } finally {
        await running.close();
      }
    });

    it("uses a custom client-IP resolver, failing closed when it knows no address", async () => {
      let address: string | undefined = "10.1.2.3";
      const seen: unknown[] = [];
      const clientIpResolver: ApiKeyClientIpResolver = async (request) => {
        seen.push(request.headers["x-request-id"]);
        await Promise.resolve();
        return address;
      };
      const running = await boot(
        appModule(ApiKeysModule.forRoot(moduleOptions({ clientIpResolver }))),
        platform,
      );
      try {
        const restricted = await issue(running.service, { allowedIpCidrs: ["10.0.0.0/8"] });
        const unrestricted = await issue(running.service);
        const status = async (key: string) =>
          (await running.request("/open", { headers: withKey(key, { "x-request-id": "r1" }) }))
            .status;
        assert.equal(await status(restricted.key), 200);
        address = "192.0.2.1";
        assert.equal(await status(restricted.key), 403);
        address = undefined;
        assert.equal(await status(restricted.key), 403);
        assert.equal(await status(unrestricted.key), 200);
        assert.deepEqual(seen, ["r1", "r1", "r1", "r1"]);
      } finally {
        await running.close();
      }
    });
  });
}

describe("ApiKeysModule", () => {
  it("refuses to start (app.init) while usable keys remain on a retired pepper version, naming the count", async () => {
    const storage = new InMemoryApiKeyStorage();
    const old = new ApiKeysService({ peppers: { 1: PEPPER }, storage });
    await old.create({ tenantId: "t", name: "old", scopes: [{ resource: "a", level: "read" }] });
    const options = moduleOptions({
      peppers: { 2: `${PEPPER}-two` },
      storage,
      retiredPepperVersions: [1],
    });
    /** Creates and initialises the app (module init runs in `init`); the error, or null. */
    const start = async (moduleOptions: ApiKeysModuleOptions): Promise<Error | null> => {
      const app = await NestFactory.create(appModule(ApiKeysModule.forRoot(moduleOptions)), {
        logger: false,
        abortOnError: false,
      });
      try {
        await app.init();
        return null;
      } catch (error) {
        return error as Error;
      } finally {
        await app.close().catch(() => {});
      }
    };
    assert.match(
      String((await start(options))?.message),
      /refusing to start: 1 usable API key still needs a retired hash \(1 on pepper version 1\)/,
    );
    const down = Object.assign(Object.create(storage), {
      countHashes: () => Promise.reject(new Error("connection refused")),
    });
    const failed = await start({ ...options, storage: down });
    assert.equal((failed as { code?: string } | null)?.code, "api_key_storage_unavailable");
    assert.equal(await start({ ...options, retiredPepperVersions: [] }), null);
  });

  it("forRootAsync rejects a missing factory at once", () => {
    assert.throws(
      // @ts-expect-error: invalid on purpose
      () => ApiKeysModule.forRootAsync({ inject: [] }),
      /useFactory/,
    );
  });

  it("expiryNotices runs notifyExpiring when the app starts, then every intervalMs, until it closes", async () => {
    const storage = new InMemoryApiKeyStorage();
    const events: ApiKeyEvent[] = [];
    const options = moduleOptions({
      storage,
      onEvent: (event) => void events.push(event),
      expiryNotices: { thresholdsMs: [86_400_000], intervalMs: 40 },
    });
    const soon = () => new Date(Date.now() + 3_600_000);
    const before = await issue(new ApiKeysService(serviceOptionsOf(options)), {
      expiresAt: soon(),
    });
    const expiring = () =>
      events.flatMap((event) => event.type === "api_key.expiring" ? [event.keyId] : []);
    const running = await boot(appModule(ApiKeysModule.forRoot(options)), "express");
    let closed = false;
    try {
      await eventually(() => expiring().includes(before.id));
      const during = await issue(running.service, { expiresAt: soon() });
      await eventually(() => expiring().includes(during.id));
      await running.close();
      closed = true;
      const after = await issue(new ApiKeysService(serviceOptionsOf(options)), {
        expiresAt: soon(),
      });
      await new Promise((resolve) => setTimeout(resolve, 150));
      assert.ok(!expiring().includes(after.id), "a run after the app closed");
      assert.deepEqual(expiring(), [before.id, during.id]);
    } finally {
      if (!closed) await running.close();
    }
  });

  it("a failed expiry-notice run whose console.warn throws is contained (no unhandled rejection), and retried", async () => {
    const storage = new InMemoryApiKeyStorage();
    const list = storage.listExpiring.bind(storage);
    let failures = 1;
    storage.listExpiring = (options) =>
      failures-- > 0 ? Promise.reject(new Error("refused")) : list(options);
    const warn = console.warn;
    console.warn = () => {
      throw new Error("the console is closed");
    };
    const unhandled = collectUnhandledRejections();
    const options = moduleOptions({
      storage,
      expiryNotices: { thresholdsMs: [86_400_000], intervalMs: 20 },
    });
    const running = await boot(appModule(ApiKeysModule.forRoot(options)), "express");
    try {
      await eventually(() => failures < 0); // the failed run, then one that listed
      await new Promise((resolve) => setTimeout(resolve, 0));
    } finally {
      console.warn = warn;
      await running.close();
      await unhandled.stop();
    }
    assert.deepEqual(unhandled.reasons, []);
  });

  it("a failed expiry-notice run is logged once per streak, without its message, and retried", async () => {
    const storage = new InMemoryApiKeyStorage();
    const list = storage.listExpiring.bind(storage);
    let failures = 2;
    storage.listExpiring = (options) =>
      failures-- > 0 ? Promise.reject(new Error("db.internal:5432 refused")) : list(options);
    const warn = console.warn;
    const lines: string[] = [];
    console.warn = (...args: unknown[]) => lines.push(args.map(String).join(" "));
    const events: ApiKeyEvent[] = [];
    const options = moduleOptions({
      storage,
      onEvent: (event) => void events.push(event),
      expiryNotices: { thresholdsMs: [86_400_000], intervalMs: 20 },
    });
    const { id } = await issue(new ApiKeysService(serviceOptionsOf(options)), {
      expiresAt: new Date(Date.now() + 3_600_000),
    });
    const running = await boot(appModule(ApiKeysModule.forRoot(options)), "express");
    try {
      await eventually(() => events.some((event) => event.type === "api_key.expiring"));
      assert.deepEqual(lines, ["api-keys: expiryNotices failed (ApiKeyStorageError)"]);
      assert.equal(
        (events.find((event) => event.type === "api_key.expiring") as {
          keyId: string;
        }).keyId,
        id,
      );
    } finally {
      console.warn = warn;
      await running.close();
    }
  });

  it("refuses to boot with a bad expiryNotices option or a storage that cannot run it", async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ expiryNotices: 60_000 }, /expiryNotices must be \{ thresholdsMs, intervalMs \}/],
      [{ expiryNotices: { thresholdsMs: [], intervalMs: 1000 } }, /expiryNotices\.thresholdsMs/],
      [{ expiryNotices: { thresholdsMs: [1000], intervalMs: 0 } }, /expiryNotices\.intervalMs/],
      [
        { expiryNotices: { thresholdsMs: [1000], intervalMs: 2 ** 31 } },
        /expiryNotices\.intervalMs/,
      ],
      [
        {
          storage: overrideStorage(new InMemoryApiKeyStorage(), {}),
          expiryNotices: { thresholdsMs: [1000], intervalMs: 1000 },
        },
        /expiryNotices needs a storage with the capabilities listExpiring and claimExpiryNotice/,
      ],
    ];
    const info = console.info;
    console.info = () => {};
    try {
      for (const [override, message] of cases) {
        const error = await bootFailure(moduleOptions(override), "express");
        assert.ok(error instanceof TypeError, String(error));
        assert.match(error.message, message);
      }
    } finally {
      console.info = info;
    }
  });

  it("is global: a guarded controller of a feature module resolves the guard", async () => {
    @Module({ controllers: [KeyedController] })
    class FeatureModule {}
    @Module({ imports: [ApiKeysModule.forRoot(moduleOptions()), FeatureModule] })
    class RootModule {}
    const running = await boot(RootModule, "express");
    try {
      assert.equal((await running.request("/open")).status, 401);
      const { key } = await issue(running.service);
      assert.equal((await running.request("/open", { headers: withKey(key) })).status, 200);
    } finally {
      await running.close();
    }
  });
});

describe("ApiKeysModule imported more than once", () => {
  it("warns once, at init, when one app imports it twice (root and feature module): two services", async () => {
    const services: ApiKeysService[] = [];
    @Injectable()
    class User {
      constructor(@Inject(ApiKeysService) service: ApiKeysService) {
        services.push(service);
      }
    }
    const options = moduleOptions();
    @Module({
      imports: [ApiKeysModule.forRootAsync({ useFactory: () => options })],
      providers: [User],
    })
    class FeatureModule {}
    @Module({
      imports: [ApiKeysModule.forRootAsync({ useFactory: () => options }), FeatureModule],
      providers: [User],
    })
    class RootModule {}
    const warned = await moduleWarnings(async () => {
      const running = await boot(RootModule, "express");
      await running.close();
    });
    assert.equal(new Set(services).size, 2);
    assert.equal(warned.length, 1, warned.join("\n"));
    assert.match(warned[0], /ApiKeysModule is imported 2 times in this app/);
    assert.match(warned[0], /a key revoked through one/);
  });

  it("does not warn for apps importing it once, one after another or at the same time", async () => {
    const warned = await moduleWarnings(async () => {
      for (let i = 0; i < 2; i++) {
        const running = await boot(appModule(ApiKeysModule.forRoot(moduleOptions())), "express");
        await running.close();
      }
      const both = await Promise.all(
        PLATFORMS.map((platform) =>
          boot(appModule(ApiKeysModule.forRoot(moduleOptions())), platform)
        ),
      );
      await Promise.all(both.map((running) => running.close()));
    });
    assert.deepEqual(warned, []);
  });
});

/**
 * Apps compiled without `emitDecoratorMetadata` have no `design:paramtypes`.
 * This suite erases that metadata from the library's injectables (and the test
 * app's) before boot, so only explicit `@Inject` tokens can wire them.
 */
const PARAMTYPES = "design:paramtypes";

@Controller("explicit")
@UseGuards(ApiKeysGuard)
class ExplicitController {
  constructor(@Inject(ApiKeysService) private readonly service: ApiKeysService) {}

  @Get()
  index() {
    return { namespace: this.service.namespace };
  }
}

/** A control case: relies on `design:paramtypes`, so erasing it must break it. */
@Controller("implicit")
class ImplicitController {
  constructor(private readonly service: ApiKeysService) {}

  @Get()
  index() {
    return { wired: this.service !== undefined };
  }
}

for (const target of [ApiKeysGuard, ExplicitController, ImplicitController]) {
  Reflect.deleteMetadata(PARAMTYPES, target);
}

describe("without decorator metadata", () => {
  it("has no design:paramtypes left on the guard", () => {
    assert.equal(Reflect.getMetadata(PARAMTYPES, ApiKeysGuard), undefined);
  });

  for (const platform of PLATFORMS) {
    it(`boots and guards routes over ${platform}`, async () => {
      const running = await boot(
        appModule(
          ApiKeysModule.forRoot(moduleOptions()),
          [ExplicitController, ImplicitController],
          [
            { provide: APP_GUARD, useExisting: ApiKeysGuard },
          ],
        ),
        platform,
      );
      try {
        assert.equal((await running.request("/explicit")).body.code, "api_key_missing");
        const { key } = await issue(running.service);
        const explicit = await running.request("/explicit", { headers: withKey(key) });
        assert.deepEqual([explicit.status, explicit.body], [200, { namespace: "ak" }]);
        const implicit = await running.request("/implicit", { headers: withKey(key) });
        assert.deepEqual([implicit.status, implicit.body], [200, { wired: false }]);
      } finally {
        await running.close();
      }
    });
  }
});

const MINUTE = 60_000;

for (const platform of PLATFORMS) {
  describe(`key lifecycle through the guard over ${platform}`, () => {
    it("keeps a rotated key working during its grace and rejects it after", async () => {
      let now = Date.parse("2031-05-01T12:00:00Z");
      const running = await boot(
        appModule(ApiKeysModule.forRoot(moduleOptions({ clock: () => new Date(now) }))),
        platform,
      );
      try {
        const old = await issue(running.service);
        const rotated = await running.service.rotate(old.id, { gracePeriodMs: 10 * MINUTE });
        assert.equal(rotated.graceExpiresAt.getTime(), now + 10 * MINUTE);
        const useOld = () => running.request("/orders", { headers: withKey(old.key) });
        const useNew = () => running.request("/orders", { headers: withKey(rotated.key) });
        assert.equal((await useOld()).status, 200);
        assert.equal((await useNew()).status, 200);
        now += 10 * MINUTE - 1;
        assert.equal((await useOld()).status, 200);
        now += 2;
        const expired = await useOld();
        assert.deepEqual([expired.status, expired.body.code], [401, "api_key_expired"]);
        assert.equal((await useNew()).status, 200);
      } finally {
        await running.close();
      }
    });

    it("rejects a key past its expiry with 401 api_key_expired", async () => {
      let now = Date.parse("2031-05-01T12:00:00Z");
      const running = await boot(
        appModule(ApiKeysModule.forRoot(moduleOptions({ clock: () => new Date(now) }))),
        platform,
      );
      try {
        const { key } = await issue(running.service, { expiresAt: new Date(now + MINUTE) });
        assert.equal((await running.request("/open", { headers: withKey(key) })).status, 200);
        now += MINUTE;
        const response = await running.request("/open", { headers: withKey(key) });
        assert.deepEqual([response.status, response.body.code], [401, "api_key_expired"]);
      } finally {
        await running.close();
      }
    });

    it("delivers the events of each operation to async sinks, guard failures included", async () => {
      const events: ApiKeyEvent[] = [];
      const metrics: ApiKeyVerificationMetric[] = [];
      const failures: [string | null, ApiKeyErrorCode][] = [];
      const running = await boot(
        appModule(ApiKeysModule.forRoot(moduleOptions({
          emitUsageEvents: true,
          onEvent: async (event) => {
            await new Promise((resolve) => setTimeout(resolve, 1));
            events.push(event);
          },
          onMetric: async (metric) => {
            await Promise.resolve();
            metrics.push(metric);
          },
          onAuthFailed: (prefix, code) => failures.push([prefix, code]),
        }))),
        platform,
      );
      try {
        const created = await issue(running.service, { tenantId: "tenant-ev" });
        await running.request("/orders", { headers: withKey(created.key) }); // used
        await running.request("/orders"); // missing
        await running.request("/orders", { method: "POST", headers: withKey(created.key) }); // scope
        const second = await issue(running.service, { tenantId: "tenant-ev" });
        await running.request("/orders", {
          headers: withKey(created.key, { authorization: `Bearer ${second.key}` }),
        }); // two keys: malformed
        const rotated = await running.service.rotate(created.id, { gracePeriodMs: MINUTE });
        await running.service.revoke(rotated.id);
        await running.request("/orders", { headers: withKey(rotated.key) }); // revoked
        await eventually(() => events.length >= 13);
        const ofType = (type: string) => events.filter((event) => event.type === type);

        assert.deepEqual(events.map((event) => event.type).sort(), [
          "api_key.auth_failed",
          "api_key.auth_failed",
          "api_key.auth_failed",
          "api_key.auth_failed",
          "api_key.authorization_denied",
          "api_key.authorization_denied",
          "api_key.authorization_denied",
          "api_key.authorization_denied",
          "api_key.created",
          "api_key.created",
          "api_key.revoked",
          "api_key.rotated",
          "api_key.used",
        ]);
        const prefix = (ofType("api_key.created")
          .find((event) => (event as { keyId: string }).keyId === created.id) as { prefix: string })
          .prefix;
        assert.ok(created.key.includes(prefix));
        assert.deepEqual(
          ofType("api_key.used").map((e) => {
            const used = e as { keyId: string; tenantId: string };
            return [used.keyId, used.tenantId];
          }),
          [[created.id, "tenant-ev"]],
        );
        const failed = ofType("api_key.auth_failed") as Extract<
          ApiKeyEvent,
          { type: "api_key.auth_failed" }
        >[];
        const byCode = new Map(failed.map((event) => [event.code, event]));
        assert.deepEqual(byCode.get("api_key_missing")?.prefix, null);
        assert.equal(byCode.get("api_key_missing")?.keyId, undefined);
        const scope = byCode.get("api_key_scope_insufficient");
        assert.deepEqual(
          [scope?.prefix, scope?.keyId, scope?.tenantId, scope?.environment],
          [prefix, created.id, "tenant-ev", "test"],
        );
        assert.equal(byCode.get("api_key_revoked")?.keyId, rotated.id);
        assert.equal(byCode.get("api_key_malformed")?.prefix, null);
        assert.deepEqual(failures.map(([, code]) => code).sort(), [
          "api_key_malformed",
          "api_key_missing",
          "api_key_revoked",
          "api_key_scope_insufficient",
        ]);
        await eventually(() => metrics.length >= 3);
        assert.ok(metrics.some((metric) => metric.outcome === "success"));
        assert.ok(metrics.some((metric) => metric.outcome === "revoked"));
        const everything = JSON.stringify([events, metrics, failures]);
        for (const secret of [created.key, second.key, rotated.key, PEPPER]) {
          assert.ok(!everything.includes(secret), "a sink saw a secret");
        }
      } finally {
        await running.close();
      }
    });
  });
}

describe("ApiKeysModule and the limiter's ready() (issue 40)", () => {
  const settings = { logger: false as const, abortOnError: false };
  const storeWith = (ready: () => Promise<void>, name = "probe") => {
    const memory = createMemoryRateLimitStore();
    return {
      name,
      checkBatch: (checks: Parameters<typeof memory.checkBatch>[0]) => memory.checkBatch(checks),
      ready,
    };
  };

  it("a misconfigured store fails the start with the store's TypeError", async () => {
    const limiter = createRateLimiter({
      store: storeWith(() => Promise.reject(new TypeError("the redis client was never connected"))),
      logger: () => {},
    });
    const module = appModule(ApiKeysModule.forRoot(moduleOptions({ limiter })));
    await assert.rejects(
      (async () => {
        const app = await NestFactory.create(module, settings);
        await app.init();
      })(),
      /never connected/,
    );
  });

  it("a store merely down logs one line and the app starts (the failure policy applies)", async () => {
    const lines: string[] = [];
    const limiter = createRateLimiter({
      store: storeWith(() => Promise.reject(new Error("ECONNREFUSED"))),
      logger: (line) => lines.push(line),
    });
    const running = await boot(
      appModule(ApiKeysModule.forRoot(moduleOptions({ limiter }))),
      "express",
    );
    try {
      assert.equal(lines.filter((line) => line.includes("unavailable at start-up")).length, 1);
    } finally {
      await running.close();
    }
  });
});

describe("ApiKeysModule's singleton check with two imports", () => {
  const requestScoped = () =>
    ApiKeysModule.forRootAsync({
      imports: [RequestConfigModule],
      inject: [RequestConfig],
      useFactory: () => moduleOptions(),
    });
  const singleton = () => ApiKeysModule.forRoot(moduleOptions());

  for (
    const [label, root, feature] of [
      ["request-scoped root, singleton feature", requestScoped, singleton],
      ["singleton root, request-scoped feature", singleton, requestScoped],
    ] as const
  ) {
    it(`refuses to start: ${label}`, async () => {
      @Module({ imports: [feature()] })
      class FeatureModule {}
      @Module({ imports: [root(), FeatureModule] })
      class RootModule {}
      const app = await NestFactory.create(RootModule, { logger: false, abortOnError: false });
      await assertRequestScopeRefused(app);
    });
  }
});

describe("ApiKeysModule and the change feed of its options", () => {
  for (const variant of ["forRoot", "forRootAsync"] as const) {
    it(`${variant}: app.close() closes the feed, after the service`, async () => {
      const feed = new InMemoryApiKeyChangeFeed();
      const options = moduleOptions({ feed });
      const closed: string[] = [];
      const close = feed.close.bind(feed);
      feed.close = () => {
        closed.push("feed");
        return close();
      };
      const module = appModule(
        variant === "forRoot"
          ? ApiKeysModule.forRoot(options)
          : ApiKeysModule.forRootAsync({ useFactory: () => options }),
      );
      const running = await boot(module, "express");
      const closeService = running.service.close.bind(running.service);
      running.service.close = () => {
        closed.push("service");
        return closeService();
      };
      assert.equal(feed.status().healthy, true);
      await running.close();
      assert.deepEqual(closed, ["service", "feed"]);
      assert.equal(feed.status().healthy, false);
    });
  }

  it("closes the feed even when the service's close() fails", async () => {
    const feed = new InMemoryApiKeyChangeFeed();
    const running = await boot(
      appModule(ApiKeysModule.forRoot(moduleOptions({ feed }))),
      "express",
    );
    running.service.close = () => Promise.reject(new Error("flush failed"));
    await running.close().catch(() => {});
    assert.equal(feed.status().healthy, false);
  });
});
