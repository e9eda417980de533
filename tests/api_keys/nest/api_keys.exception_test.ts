import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  type ArgumentsHost,
  Catch,
  type ExceptionFilter,
  HttpException,
  type INestApplication,
  Module,
} from "@nestjs/common";
import { ApiKeyHttpException } from "../../../api_keys/nest/api_keys.exception.ts";
import { ApiKeysModule } from "../../../api_keys/nest/api_keys.module.ts";
import {
  AdminController,
  appModule,
  boot,
  issue,
  KeyedController,
  moduleOptions,
  PLATFORMS,
  withKey,
} from "./test_app.ts";
import { InMemoryApiKeyStorage } from "../../../api_keys/storage/in_memory.ts";
import { SafeResponseModule } from "../../../safe_response/nest/mod.ts";
import { overrideStorage } from "../helpers.ts";

describe("ApiKeyHttpException", () => {
  it("is an HttpException with the status, a code property and a safe body", () => {
    const error = new ApiKeyHttpException("api_key_ip_not_allowed", 403, "not from here");
    assert.ok(error instanceof HttpException);
    assert.ok(error instanceof ApiKeyHttpException);
    assert.equal(error.getStatus(), 403);
    assert.equal(error.code, "api_key_ip_not_allowed");
    assert.deepEqual(error.getResponse(), {
      statusCode: 403,
      code: "api_key_ip_not_allowed",
      message: "not from here",
    });
    assert.ok(!(new HttpException("x", 401) instanceof ApiKeyHttpException));
  });
});

for (const platform of PLATFORMS) {
  describe(`ApiKeyHttpException over ${platform}`, () => {
    it("can be caught by an app filter with @Catch(ApiKeyHttpException)", async () => {
      @Catch(ApiKeyHttpException)
      class ApiKeyFilter implements ExceptionFilter {
        constructor(private readonly app: INestApplication) {}
        catch(exception: ApiKeyHttpException, host: ArgumentsHost) {
          this.app.getHttpAdapter().reply(
            host.switchToHttp().getResponse(),
            { caught: exception.code },
            exception.getStatus(),
          );
        }
      }
      const running = await boot(
        appModule(ApiKeysModule.forRoot(moduleOptions())),
        platform,
        undefined,
        (app) => app.useGlobalFilters(new ApiKeyFilter(app)),
      );
      try {
        const response = await running.request("/open");
        assert.deepEqual([response.status, response.body], [401, {
          caught: "api_key_missing",
        }]);
      } finally {
        await running.close();
      }
    });
  });
}

@Module({
  imports: [ApiKeysModule.forRoot(moduleOptions()), SafeResponseModule.register()],
  controllers: [KeyedController, AdminController],
})
class EnvelopedAppModule {}

const brokenStorage = overrideStorage(new InMemoryApiKeyStorage(), {
  findByPrefix: () => Promise.reject(new Error("connect ECONNREFUSED db-secret-host:5432")),
});

@Module({
  imports: [
    ApiKeysModule.forRoot(moduleOptions({ storage: brokenStorage })),
    SafeResponseModule.register(),
  ],
  controllers: [KeyedController],
})
class BrokenStorageAppModule {}

for (const platform of PLATFORMS) {
  describe(`ApiKeysGuard with SafeResponseModule over ${platform}`, () => {
    it("puts the api_key_* code and status into the error envelope", async () => {
      const running = await boot(EnvelopedAppModule, platform);
      try {
        const missing = await running.request("/open");
        assert.equal(missing.status, 401);
        assert.equal(missing.body.success, false);
        assert.equal(missing.body.statusCode, 401);
        assert.equal((missing.body.error as { code: string }).code, "api_key_missing");
        assert.equal(missing.headers.get("www-authenticate"), "Bearer", "the filter keeps it");

        const { key } = await issue(running.service);
        const scope = await running.request("/orders", { method: "POST", headers: withKey(key) });
        assert.equal(scope.status, 403);
        assert.equal((scope.body.error as { code: string }).code, "api_key_scope_insufficient");
        assert.ok(!JSON.stringify(scope.body).includes(key));

        const ok = await running.request("/orders", { headers: withKey(key) });
        assert.equal(ok.status, 200);
        assert.equal(ok.body.success, true);
        assert.deepEqual(ok.body.data, { ok: "read" });
      } finally {
        await running.close();
      }
    });

    it("turns a storage failure into a 503 envelope without internals", async () => {
      const running = await boot(BrokenStorageAppModule, platform);
      try {
        const { key } = await issue(running.service);
        const response = await running.request("/open", { headers: withKey(key) });
        assert.equal(response.status, 503);
        assert.equal(response.body.success, false);
        assert.equal((response.body.error as { code: string }).code, "api_key_storage_unavailable");
        const text = JSON.stringify(response.body);
        for (const secret of [key, "db-secret-host", "ECONNREFUSED"]) {
          assert.ok(!text.includes(secret), secret);
        }
      } finally {
        await running.close();
      }
    });
  });
}
