import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Module } from "@nestjs/common";
import { InMemoryApiKeyStorage } from "../../../api_keys/in_memory_storage.ts";
import { ApiKeysModule } from "../../../api_keys/nest/mod.ts";
import { SafeResponseModule } from "../../../safe_response/nest/mod.ts";
import { overrideStorage } from "../helpers.ts";
import {
  AdminController,
  boot,
  issue,
  KeyedController,
  moduleOptions,
  PLATFORMS,
  withKey,
} from "./test_app.ts";

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
