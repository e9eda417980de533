import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  activityOf,
  configOf,
  dateOf,
  expiresSoon,
  fill,
  firstHour,
  keysOf,
  pageOf,
  usageOf,
} from "../../../client/elements/_model.ts";
import { CSRF_HEADER } from "../../../client/elements/_api.ts";

const auditRecord = {
  v: 1,
  tenantId: "t1",
  seq: 3,
  at: "2026-11-29T08:00:00.000Z",
  action: "key.revoked",
  actor: "alice@example.com",
  keyId: "k1",
  prefix: "sk_live_k1",
  requestId: null,
  clientAddress: null,
  outcome: "success",
  changes: {},
  prevHash: "a",
  hash: "b",
};

describe("client/elements/_model.ts", () => {
  it("activityOf keeps well-formed records and the cursor; drops the rest", () => {
    const page = activityOf({
      records: [auditRecord, { ...auditRecord, at: "nope" }, { ...auditRecord, actor: 3 }, "x", {
        ...auditRecord,
        keyId: null,
        prefix: null,
        outcome: "refused",
      }],
      nextCursor: "c2",
    });
    assert.equal(page.nextCursor, "c2");
    assert.deepEqual(page.records.map((r) => [r.keyId, r.prefix, r.outcome]), [
      ["k1", "sk_live_k1", "success"],
      [null, null, "refused"],
    ]);
    assert.equal(page.records[0].at.toISOString(), auditRecord.at);
    assert.deepEqual(activityOf(null), { records: [], nextCursor: null });
    assert.equal(activityOf({ records: [], nextCursor: 5 }).nextCursor, null);
  });

  it("configOf keeps well-formed entries, string or {value, label} presets, csrf or the default", () => {
    assert.deepEqual(
      configOf({
        scopes: [{ scope: "orders:read", description: "Read orders" }, { scope: "a:b" }, "x", {}],
        environments: ["live", 2],
        gracePresets: ["1h", { value: "24h", label: "A day" }, { label: "no value" }],
        expiryPresets: [{ value: "30d" }],
        capabilities: { rename: true, conditionalRename: true, usage: "yes" },
        csrf: { header: "X-Intent", value: "keys" },
      }),
      {
        scopes: [
          { scope: "orders:read", description: "Read orders" },
          { scope: "a:b", description: "" },
        ],
        environments: ["live"],
        gracePresets: [{ value: "1h", label: "1h" }, { value: "24h", label: "A day" }],
        expiryPresets: [{ value: "30d", label: "30d" }],
        defaultExpiry: "30d",
        defaultGrace: "24h",
        capabilities: { rename: true, conditionalRename: true, usage: false },
        can: { create: true, rename: true, rotate: true, revoke: true, audit: false },
        limits: null,
        csrf: ["X-Intent", "keys"],
      },
    );
    const fallback = configOf(null);
    assert.deepEqual(fallback.capabilities, {
      rename: false,
      conditionalRename: false,
      usage: false,
    });
    assert.deepEqual(fallback.csrf, [...CSRF_HEADER]);
  });

  it("configOf: can as sent (missing ones false), defaults when offered, limits checked", () => {
    const config = configOf({
      expiryPresets: ["30d", "never"],
      gracePresets: ["none", "24h"],
      defaultExpiry: "1y",
      defaultGrace: "none",
      can: { create: false, rotate: true },
      limits: {
        policies: [{ name: "m", limit: 5, windowMs: 60_000 }, {
          name: "bad",
          limit: 5,
          windowMs: 0,
        }],
        credits: { amount: 10, refillAmount: "x", refillEvery: "daily", sharedBy: "tenant" },
      },
    });
    assert.equal(config.defaultExpiry, "never", "a default not offered: never");
    assert.equal(config.defaultGrace, "none");
    assert.deepEqual(config.can, {
      create: false,
      rename: false,
      rotate: true,
      revoke: false,
      audit: false,
    });
    assert.deepEqual(config.limits, {
      policies: [{ name: "m", limit: 5, windowMs: 60_000 }],
      credits: { amount: 10, refillAmount: null, refillEvery: "daily", sharedBy: "tenant" },
    });
    const own = configOf({ limits: { policies: [], credits: { amount: 1, sharedBy: 5 } } });
    assert.equal(own.limits?.credits?.sharedBy, null, "sharedBy: a string or null");
  });

  it("pageOf: keys, nextCursor (empty is none) and the tenant pool", () => {
    const page = pageOf({
      keys: [{ id: "1", name: "n", prefix: "p" }],
      nextCursor: "abc",
      tenantCredits: { credits: 7, nextRefillAt: "2026-01-01T00:00:00Z", refillAmount: 100 },
    });
    assert.equal(page.keys.length, 1);
    assert.equal(page.nextCursor, "abc");
    assert.deepEqual(page.tenantCredits, {
      credits: 7,
      nextRefillAt: new Date("2026-01-01T00:00:00Z"),
      refillAmount: 100,
    });
    assert.deepEqual(pageOf({ keys: [], nextCursor: "", tenantCredits: { credits: "7" } }), {
      keys: [],
      nextCursor: null,
      tenantCredits: null,
    });
  });

  it("keysOf needs id, name and prefix; dates, credits and status are checked", () => {
    const [key, ...rest] = keysOf([
      {
        id: "1",
        name: "n",
        prefix: "p",
        environment: "live",
        scopes: ["a:read"],
        createdAt: "2026-01-02T00:00:00.000Z",
        lastUsedAt: "not a date",
        expiresAt: null,
        credits: 5,
        key: "must not be kept",
      },
      { id: "2", name: "no prefix" },
      { id: "3", name: "n", prefix: "p", credits: Infinity },
    ]);
    assert.equal(rest.length, 1);
    assert.equal(rest[0].credits, null);
    assert.equal(rest[0].status, "active");
    assert.deepEqual(key, {
      id: "1",
      name: "n",
      prefix: "p",
      environment: "live",
      scopes: ["a:read"],
      status: "active",
      createdAt: new Date("2026-01-02T00:00:00.000Z"),
      lastUsedAt: null,
      expiresAt: null,
      credits: 5,
      creditsRefillAmount: null,
      creditsNextRefillAt: null,
      creditsSharedBy: null,
      allowedIpCidrs: [],
      replacedByKeyId: null,
      replacesKeyId: null,
    });
    assert.deepEqual(keysOf({ not: "a list" }), []);
    assert.deepEqual(keysOf({ keys: [{ id: "4", name: "n", prefix: "p" }] }).map((k) => k.id), [
      "4",
    ]);
  });

  it("dateOf rejects long and invalid strings", () => {
    assert.equal(dateOf("2".repeat(65)), null);
    assert.equal(dateOf(12), null);
    assert.equal(dateOf("2026-01-01")?.toISOString(), "2026-01-01T00:00:00.000Z");
    assert.equal(dateOf("2026-12-07T10:00:00.5+02:00")?.toISOString(), "2026-12-07T08:00:00.500Z");
  });

  it("dateOf reads ISO 8601 only, as the library's reader does: no local time, no guess (a browser's Date reads these differently)", () => {
    for (
      const loose of [
        "2026-12-07T10:00:00", // no offset: a local time
        "0",
        "12",
        "Dec 7 2026",
        "7 Dec 2026 10:00 PST",
        "2026-02-30T00:00:00Z",
        "2026-12-07 10:00:00Z",
      ]
    ) {
      assert.equal(dateOf(loose), null, loose);
    }
  });

  it("usageOf places sparse buckets in the 25 hours from the hour 24 hours before now's to now's; others and non-counts dropped", () => {
    const now = Date.parse("2026-01-02T10:30:00Z");
    const at = (hoursAgo: number, accepted: unknown) => ({
      start: new Date(Date.parse("2026-01-02T10:00:00Z") - hoursAgo * 3_600_000).toISOString(),
      accepted,
      refused: { api_key_scope_denied: 9 },
    });
    const usage = usageOf({
      keys: {
        k1: [at(0, 5), at(23, 2), at(24, 3), at(25, 100), at(-1, 100), at(3, -1), at(4, "3"), null],
        k2: [],
        k3: "not a list",
      },
    }, now);
    assert.deepEqual([...usage.keys()], ["k1", "k2"]);
    const counts = usage.get("k1")!;
    assert.equal(counts.length, 25);
    assert.equal(counts[24], 5);
    assert.equal(counts[1], 2);
    assert.equal(counts[0], 3);
    assert.equal(counts.reduce((a, b) => a + b, 0), 10);
    assert.deepEqual(usage.get("k2"), Array(25).fill(0));
    assert.equal(usageOf("nope", now).size, 0);
    assert.equal(new Date(firstHour(now)).toISOString(), "2026-01-01T10:00:00.000Z");
  });

  it("the usage window holds every request of the last 24 hours: at 10:05, one at 10:30 the day before is counted", () => {
    const now = Date.parse("2030-05-01T10:05:00.000Z");
    const hour = Date.parse("2030-05-01T10:00:00.000Z");
    for (const at of [now, now - 60_000, now - 3_600_000, hour, hour - 1]) {
      assert.ok(firstHour(at) <= at - 86_400_000, new Date(at).toISOString());
      assert.ok(firstHour(at) > at - 90_000_000, "and at most one hour more");
    }
    const answer = { keys: { k1: [{ start: "2030-04-30T10:00:00.000Z", accepted: 7 }] } };
    assert.equal(usageOf(answer, now).get("k1")!.reduce((a, b) => a + b, 0), 7);
  });

  it("usageOf counts only safe integers (no Infinity, fraction or unsafe count); an hour's sum stops at 2^53 - 1", () => {
    const now = Date.parse("2026-01-02T10:30:00Z");
    const at = (hoursAgo: number, accepted: unknown) => ({
      start: new Date(Date.parse("2026-01-02T10:00:00Z") - hoursAgo * 3_600_000).toISOString(),
      accepted,
    });
    const counts = usageOf({
      keys: {
        k1: [
          ...[Infinity, 2.5, 2 ** 53, NaN, 1e308].map((accepted) => at(0, accepted)),
          at(1, Number.MAX_SAFE_INTEGER),
          at(1, Number.MAX_SAFE_INTEGER),
          at(2, 4),
        ],
      },
    }, now).get("k1")!;
    assert.deepEqual(counts.slice(22), [4, Number.MAX_SAFE_INTEGER, 0]);
    assert.ok(counts.every(Number.isSafeInteger));
  });

  it("expiresSoon: within 7 days, not past, not revoked", () => {
    const now = Date.parse("2026-01-01T00:00:00Z");
    const [key] = keysOf([{ id: "1", name: "n", prefix: "p" }]);
    const at = (days: number, status = "active") => ({
      ...key,
      status,
      expiresAt: new Date(now + days * 86_400_000),
    });
    assert.deepEqual(
      [at(6.9), at(7), at(7.1), at(-1), at(3, "revoked"), key].map((k) => expiresSoon(k, now)),
      [true, true, false, false, false, false],
    );
    assert.equal(expiresSoon(at(10), now, 14), true);
  });

  it("fill replaces known placeholders and leaves others", () => {
    assert.equal(fill("Type {name} ({other})", { name: "ci" }), "Type ci ({other})");
  });
});
