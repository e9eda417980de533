import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Injectable, Module } from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
import { FastifyAdapter } from "@nestjs/platform-fastify";
import {
  type ApiKeyClientIpResolver,
  type ApiKeyContextWriter,
  ApiKeysModule,
  type ApiKeysModuleOptions,
  RequireEnvironment,
  RequireScope,
} from "../../../api_keys/nest/mod.ts";
import {
  appModule,
  boot,
  issue,
  KeyedController,
  moduleOptions,
  PEPPER,
  type Platform,
  PLATFORMS,
  withKey,
} from "./test_app.ts";

@Injectable()
class ConfigService {
  get(name: string): string {
    if (name !== "API_KEY_PEPPER") throw new Error(`unknown setting ${name}`);
    return PEPPER;
  }
}

@Module({ providers: [ConfigService], exports: [ConfigService] })
class ConfigModule {}

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

describe("RequireScope and RequireEnvironment", () => {
  it("reject bad arguments when the route is declared", () => {
    // @ts-expect-error: invalid on purpose
    assert.throws(() => RequireScope("orders", "admin"), /RequireScope: level/);
    assert.throws(() => RequireScope("", "read"), /RequireScope: resource/);
    for (const level of ["Write", undefined]) {
      assert.throws(() => RequireScope("orders", level as "read"), TypeError);
    }
    // @ts-expect-error: invalid on purpose
    assert.throws(() => RequireEnvironment("prod"), /RequireEnvironment: environment/);
  });
});

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
  it("forRootAsync rejects a missing factory at once", () => {
    assert.throws(
      // @ts-expect-error: invalid on purpose
      () => ApiKeysModule.forRootAsync({ inject: [] }),
      /useFactory/,
    );
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
