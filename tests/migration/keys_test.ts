/**
 * Keys issued by `@nestarc/api-keys` keep working after the migration of
 * docs/migration.md ("Keys keep working"): a Nest app configured as the guide
 * says (`legacyKeyLayouts: ["nestarc-v0"]`, the old deployment's pepper kept
 * as a version) accepts a key and record made by the old algorithm
 * (tests/api_keys/nestarc.ts) over real HTTP, upgrades the record's hash on
 * first use, and issues new keys in this library's layout.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { InMemoryApiKeyStorage } from "../../api_keys/mod.ts";
import { ApiKeysModule } from "../../api_keys/nest/api_keys.module.ts";
import { legacyRecord, nestarcHash, nestarcKey } from "../api_keys/nestarc.ts";
import {
  appModule,
  boot,
  eventually,
  issue,
  PLATFORMS,
  withKey,
} from "../api_keys/nest/test_app.ts";

/** The old deployment's pepper: shorter than the 32 bytes a current pepper needs here. */
const OLD_PEPPER = "old-pepper-16byt";
const NEW_PEPPER = "a-new-current-pepper-of-at-least-32-bytes";

for (const platform of PLATFORMS) {
  describe(`keys of @nestarc/api-keys after the migration (${platform})`, () => {
    it("verify through the guard, are re-hashed on first use, and new keys use the new layout", async () => {
      const storage = new InMemoryApiKeyStorage();
      const old = nestarcKey("ak", "test");
      const record = legacyRecord(old, nestarcHash(old.secret, OLD_PEPPER), {
        tenantId: "tenant-1",
        hashScheme: "sha256-pepper",
        pepperVersion: 1,
      });
      await storage.insert(record);
      const running = await boot(
        appModule(ApiKeysModule.forRoot({
          storage,
          peppers: { 1: OLD_PEPPER, 2: NEW_PEPPER },
          currentPepperVersion: 2,
          legacyKeyLayouts: ["nestarc-v0"],
        })),
        platform,
      );
      try {
        const first = await running.request("/orders", { headers: withKey(old.raw) });
        assert.equal(first.status, 200, JSON.stringify(first.body));
        await eventually(() => {
          const stored = storage.peekByPrefix(old.prefix);
          return stored?.hashScheme === undefined && stored?.pepperVersion === 2;
        });
        const again = await running.request("/orders", { headers: withKey(old.raw) });
        assert.equal(again.status, 200);
        const wrong = `${old.raw.slice(0, -1)}${old.raw.endsWith("A") ? "B" : "A"}`;
        assert.equal((await running.request("/orders", { headers: withKey(wrong) })).status, 401);
        const { key } = await issue(running.service);
        assert.doesNotMatch(key, /^ak_test_[A-Za-z0-9]{12}_[A-Za-z0-9]{32}$/); // this library's layout
        assert.equal((await running.request("/orders", { headers: withKey(key) })).status, 200);
      } finally {
        await running.close();
      }
    });
  });
}
