import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { ApiKeyEvent, ApiKeyVerificationMetric } from "../../../api_keys/events.ts";
import type { ApiKeyErrorCode } from "../../../api_keys/errors.ts";
import { ApiKeysModule } from "../../../api_keys/nest/mod.ts";
import {
  appModule,
  boot,
  eventually,
  issue,
  moduleOptions,
  PEPPER,
  PLATFORMS,
  withKey,
} from "./test_app.ts";

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
        await eventually(() => events.length >= 9);
        const ofType = (type: string) => events.filter((event) => event.type === type);

        assert.deepEqual(events.map((event) => event.type).sort(), [
          "api_key.auth_failed",
          "api_key.auth_failed",
          "api_key.auth_failed",
          "api_key.auth_failed",
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
          ofType("api_key.used").map((e) => [(e as { keyId: string }).keyId, e.tenantId]),
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
