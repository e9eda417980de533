/**
 * Runs a full scenario and scans everything the library emits (events,
 * metrics, onAuthFailed arguments, errors in every printed form, console and
 * Nest logger output, HTTP bodies and headers) for raw keys, secret parts and
 * peppers.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { inspect } from "node:util";
import type { LoggerService } from "@nestjs/common";
import { ApiKeysService, type ApiKeysServiceOptions, parseKey } from "../../api_keys/mod.ts";
import { FaultyStorage } from "./faulty_storage.ts";
import { PEPPER_1, PEPPER_2 } from "./harness.ts";
import { bootApp, getRequest, PLATFORMS, rawRequest } from "./nest_app.ts";

const SCOPES = [{ resource: "orders", level: "read" as const }];

/** Everything emitted, as text, and every secret that must not appear in it. */
class Scan {
  readonly emitted: string[] = [];
  readonly secrets = new Set<string>([PEPPER_1, PEPPER_2]);
  readonly #console: Record<string, (...args: unknown[]) => void> = {};

  add(...values: unknown[]): void {
    for (const value of values) {
      this.emitted.push(typeof value === "string" ? value : inspect(value, { depth: 8 }));
      try {
        this.emitted.push(JSON.stringify(value, (_, v) => typeof v === "bigint" ? String(v) : v));
      } catch {
        // not serialisable: inspect above covers it
      }
    }
  }

  addError(error: unknown): void {
    const e = error as Error & { reason?: unknown };
    this.add(String(e), e?.message, e?.reason, e?.stack, JSON.stringify(e), inspect(e));
  }

  key(raw: string): string {
    const parsed = parseKey(raw)!;
    this.secrets.add(raw);
    this.secrets.add(parsed.secret);
    this.secrets.add(parsed.secret + parsed.checksum);
    // Masks show the prefix only: no checksum, no 8 characters of the secret (docs/security.md).
    this.secrets.add(parsed.checksum);
    for (let i = 0; i + 8 <= parsed.secret.length; i++) {
      this.secrets.add(parsed.secret.slice(i, i + 8));
    }
    return raw;
  }

  captureConsole(): void {
    for (const level of ["log", "info", "warn", "error", "debug", "trace"] as const) {
      this.#console[level] = console[level];
      console[level] = (...args: unknown[]) => this.add(...args);
    }
  }

  restoreConsole(): void {
    Object.assign(console, this.#console);
  }

  sinks(): Partial<ApiKeysServiceOptions> {
    return {
      onEvent: (event) => this.add(event),
      onMetric: (metric) => this.add(metric),
      onAuthFailed: (...args) => this.add(args),
    };
  }

  logger(): LoggerService {
    const keep = (...args: unknown[]) => this.add(...args);
    return { log: keep, error: keep, warn: keep, debug: keep, verbose: keep, fatal: keep };
  }

  assertClean(): void {
    assert.ok(this.emitted.length > 20, "the scenario emitted too little to be a scan");
    const text = this.emitted.join("\n");
    for (const secret of this.secrets) {
      assert.ok(!text.includes(secret), `a secret appeared in the output (${secret.slice(0, 6)}…)`);
    }
  }
}

async function settled(scan: Scan, promise: Promise<unknown>): Promise<void> {
  try {
    scan.add(await promise);
  } catch (error) {
    scan.addError(error);
  }
}

describe("secrets scan", () => {
  it("the core never emits a raw key, a secret or a pepper", async () => {
    const scan = new Scan();
    scan.captureConsole();
    try {
      let now = Date.parse("2031-01-01T00:00:00Z");
      const clock = () => new Date(now);
      const faulty = new FaultyStorage();
      // Pepper 1 only, then 1 and 2: old records keep version 1; a third service lost 1 (retired).
      const v1 = new ApiKeysService({ peppers: { 1: PEPPER_1 }, storage: faulty.storage, clock });
      const old = scan.key((await v1.create({ tenantId: "t", name: "old", scopes: SCOPES })).key);
      const service = new ApiKeysService({
        peppers: { 1: PEPPER_1, 2: PEPPER_2 },
        storage: faulty.storage,
        clock,
        emitUsageEvents: true,
        debounceMs: 0,
        storageTimeoutMs: 20,
        ...scan.sinks(),
      });
      const retiredView = new ApiKeysService({
        peppers: { 2: PEPPER_2 },
        storage: faulty.storage,
        onAuthFailed: () => {
          throw new Error("callback down");
        },
        onEvent: () => Promise.reject(new Error("sink down")),
        onMetric: () => {
          throw new Error("sink down");
        },
      });
      const live = await service.create({
        tenantId: "t",
        name: "live",
        scopes: SCOPES,
        allowedIpCidrs: ["10.0.0.0/8"],
      });
      scan.key(live.key);
      const test = scan.key(
        (await service.create({
          tenantId: "t",
          name: "test",
          scopes: SCOPES,
          environment: "test",
          expiresAt: new Date(now + 60_000),
        })).key,
      );
      const revoked = await service.create({ tenantId: "t", name: "rev", scopes: SCOPES });
      scan.key(revoked.key);
      await service.revoke(revoked.id);
      const rotated = await service.rotate(live.id, { gracePeriodMs: 1_000 });
      scan.key(rotated.key);
      const wrong = (raw: string) => raw.slice(0, -8) + "AAAAAAAA";

      for (
        const call of [
          () => service.verify(old),
          () => service.verify(live.key),
          () => service.verify(rotated.key),
          () => service.verify(wrong(live.key)),
          () => service.verify(revoked.key),
          () => service.verify(live.key + "x"),
          () => service.verify(live.key.replace(/^ak_/, "zz_")),
          () => service.authorize(live.key, { clientIp: "192.0.2.1" }),
          () => service.authorize(test, { requiredEnvironment: "live" }),
          () => service.authorize(test, { requiredScope: { resource: "admin", level: "write" } }),
          () => service.authorize(undefined),
          () => retiredView.verify(old),
          () => retiredView.verify(test),
          () => service.list("t", { includeRevoked: true }),
        ]
      ) await settled(scan, call());
      now += 120_000; // the test key expired, the grace period ended
      await settled(scan, service.verify(test));
      await settled(scan, service.verify(live.key));
      faulty.fail("findByPrefix", "reject");
      await settled(scan, service.verify(rotated.key));
      faulty.fail("findByPrefix", "hang");
      await settled(scan, service.authorize(rotated.key));
      faulty.fail("insert", "throw");
      await settled(scan, service.create({ tenantId: "t", name: "x", scopes: SCOPES }));
      faulty.clear();
      await new Promise((resolve) => setTimeout(resolve, 10));
    } finally {
      scan.restoreConsole();
    }
    scan.assertClean();
  });

  for (const platform of PLATFORMS) {
    it(`over HTTP (${platform}): responses, Nest logger and console never carry a key or pepper`, async () => {
      const scan = new Scan();
      const faulty = new FaultyStorage();
      scan.captureConsole();
      const running = await bootApp(platform, {
        apiKeys: {
          peppers: { 1: PEPPER_1, 2: PEPPER_2 },
          storage: faulty.storage,
          storageTimeoutMs: 20,
          emitUsageEvents: true,
          ...scan.sinks(),
        },
        safeResponse: { requestId: true },
        logger: scan.logger(),
      });
      try {
        const key = scan.key(
          (await running.service.create({ tenantId: "t", name: "k", scopes: SCOPES })).key,
        );
        const revoked = await running.service.create({ tenantId: "t", name: "r", scopes: SCOPES });
        scan.key(revoked.key);
        await running.service.revoke(revoked.id);
        const other = scan.key(
          (await running.service.create({ tenantId: "t", name: "o", scopes: SCOPES })).key,
        );
        const requests: [string, string][][] = [
          [["X-API-Key", key]],
          [["Authorization", `Bearer ${key}`]],
          [["X-API-Key", key.slice(0, -8) + "AAAAAAAA"]],
          [["X-API-Key", revoked.key]],
          [["X-API-Key", key], ["X-API-Key", other]],
          [["X-API-Key", key], ["Authorization", `Bearer ${other}`]],
          [["X-API-Key", key + "A".repeat(40)]],
          [["X-API-Key", `${key}\u00e9`]],
          [],
        ];
        for (const headers of requests) {
          const response = await rawRequest(running.port, getRequest("/keyed", headers));
          assert.ok(response !== null);
          scan.add(response.raw);
        }
        faulty.fail("findByPrefix", "reject");
        const failing = await rawRequest(running.port, getRequest("/keyed", [["X-API-Key", key]]));
        assert.equal(failing?.status, 503);
        scan.add(failing!.raw);
        await new Promise((resolve) => setTimeout(resolve, 10));
      } finally {
        await running.close();
        scan.restoreConsole();
      }
      scan.assertClean();
    });
  }
});
