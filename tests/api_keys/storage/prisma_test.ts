import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  ApiKeyOperationError,
  type ApiKeyRecord,
  ApiKeyStorageError,
} from "../../../api_keys/mod.ts";
import { PrismaApiKeyStorage } from "../../../api_keys/storage/prisma.ts";
import { API_KEY_USAGE_REFUSALS, type ApiKeyUsageRow } from "../../../api_keys/metering/usage.ts";
import { fakePrismaClient } from "./fake_prisma.ts";
import { makeService, READ_ORDERS, rejection } from "../helpers.ts";
import { keyOf } from "../../reliability/hostile_inputs.ts";
import { storedRecord } from "./stored_record.ts";

/** A row as Prisma returns it: the stored record with a null allowlist. */
const goodRow = { ...storedRecord({ scopes: ["a:read"] }), allowedIpCidrs: null };

describe("PrismaApiKeyStorage", () => {
  it("maps a null allowlist to an empty list", async () => {
    const storage = new PrismaApiKeyStorage(fakePrismaClient({ rows: [{ ...goodRow }] }));
    assert.deepEqual((await storage.findById("k1"))?.allowedIpCidrs, []);
  });

  it("maps rows without checking them: a malformed row is the service's ApiKeyStorageError", async () => {
    for (
      const bad of [
        { environment: "prod" },
        { scopes: "a:read" },
        { createdAt: "2020-01-01" },
        { pepperVersion: "1" },
        { hash: null },
      ]
    ) {
      const storage = new PrismaApiKeyStorage(
        fakePrismaClient({ rows: [{ ...goodRow, ...bad }] }),
      );
      // One check, in the service's storage wrapper: the adapter hands the row on as read.
      const mapped = (await storage.findByPrefix("AbCdEfGhIjKl")) as unknown as Record<
        string,
        unknown
      >;
      for (const [field, value] of Object.entries(bad)) assert.deepEqual(mapped[field], value);
      const { service } = makeService({ storage });
      const error = await rejection(service.verify(keyOf("AbCdEfGhIjKl", "S".repeat(32))));
      assert.ok(error instanceof ApiKeyStorageError, JSON.stringify(bad));
      assert.equal(error.httpStatus, 503);
      await assert.rejects(service.list("t1"), ApiKeyStorageError);
      await assert.rejects(service.revoke("k1"), ApiKeyStorageError);
    }
  });

  it("a row whose expiresAt is not a valid date reads as expired, not as malformed", async () => {
    const client = fakePrismaClient();
    const { service, clocks } = makeService({ storage: new PrismaApiKeyStorage(client) });
    const { id, key } = await service.create({ tenantId: "t1", name: "n", scopes: READ_ORDERS });
    client.rows()[0].expiresAt = new Date(NaN);
    assert.equal((await rejection(service.verify(key))).code, "api_key_expired");
    const [listed] = await service.list("t1");
    assert.equal(listed.id, id);
    assert.ok(listed.expiresAt instanceof Date && listed.expiresAt.getTime() <= clocks.now);
    assert.equal((await rejection(service.rotate(id))).code, "api_key_not_rotatable");
  });

  it("uses the conditional update and maps P2025 by code", async () => {
    const newRecord = { ...goodRow, id: "k2", prefix: "ZyXwVuTsRqPo", allowedIpCidrs: [] } as never;
    const input = { oldKeyId: "k1", newRecord, oldExpiresAt: new Date(5), rotatedAt: new Date(4) };
    const plain = fakePrismaClient({
      transactions: false,
      rows: [{ ...goodRow, revokedAt: new Date(1) }],
    });
    const seen: unknown[] = [];
    const update = plain.apiKey.update;
    plain.apiKey.update = (args) => {
      seen.push(args.where);
      return update(args);
    };
    assert.equal(await new PrismaApiKeyStorage(plain).rotate(input), "not_rotatable");
    assert.deepEqual(seen[0], { id: "k1", rotatedAt: null, revokedAt: null });
    assert.deepEqual(
      plain.rows().map((row) => [row.id, row.revokedAt]),
      [["k1", new Date(1)], ["k2", new Date(4)]],
      "without a transaction the inserted row is revoked",
    );

    const transactional = fakePrismaClient({ rows: [{ ...goodRow, rotatedAt: new Date(1) }] });
    const storage = new PrismaApiKeyStorage(transactional);
    assert.equal(await storage.rotate(input), "not_rotatable");
    assert.equal(transactional.rows().length, 1, "transaction rolled back the new row");
    await assert.rejects(storage.markRevoked("nope", new Date()), {
      code: "api_key_record_not_found",
    });
    await storage.touchLastUsed("nope", new Date());
  });

  it("markRevokedIfActive: conditional update, then findUnique after P2025", async () => {
    const client = fakePrismaClient({
      rows: [{ ...goodRow }, {
        ...goodRow,
        id: "k2",
        prefix: "ZyXwVuTsRqPo",
        revokedAt: new Date(1),
      }],
    });
    const seen: unknown[] = [];
    const { update, findUnique } = client.apiKey;
    client.apiKey.update = (args) => {
      seen.push(["update", args.where, args.data]);
      return update(args);
    };
    client.apiKey.findUnique = (args) => {
      seen.push(["findUnique", args.where]);
      return findUnique(args);
    };
    const storage: { markRevokedIfActive(id: string, at: Date): Promise<boolean> } =
      new PrismaApiKeyStorage(client) as never;
    assert.equal(await storage.markRevokedIfActive("k1", new Date(5)), true);
    assert.deepEqual(seen, [["update", { id: "k1", revokedAt: null }, { revokedAt: new Date(5) }]]);
    seen.length = 0;
    assert.equal(await storage.markRevokedIfActive("k2", new Date(6)), false);
    assert.deepEqual(seen, [
      ["update", { id: "k2", revokedAt: null }, { revokedAt: new Date(6) }],
      ["findUnique", { id: "k2" }],
    ]);
    assert.deepEqual(client.rows().map((row) => row.revokedAt), [new Date(5), new Date(1)]);
    await assert.rejects(storage.markRevokedIfActive("nope", new Date(7)), {
      code: "api_key_record_not_found",
    });
    client.apiKey.update = () => Promise.reject(new Error("connection reset"));
    await assert.rejects(storage.markRevokedIfActive("k1", new Date(8)), /connection reset/);
  });

  it("findTenantPool and setTenantPool: on with storesCredits and a client with $queryRawUnsafe, one parameterised statement each", async () => {
    const pooled = {
      ...goodRow,
      credits: { remaining: 3, updatedAt: "2030-01-01T00:00:00.000Z", sharedBy: "tenant" },
    };
    const queries: unknown[][] = [];
    const client = Object.assign(fakePrismaClient({ rows: [pooled] }), {
      $queryRawUnsafe: (...args: unknown[]) => {
        queries.push(args);
        return Promise.resolve(args[1] === "t1" ? [{ id: "k1" }] : []);
      },
    });
    assert.equal(new PrismaApiKeyStorage(client).findTenantPool, undefined, "no storesCredits");
    assert.equal(
      new PrismaApiKeyStorage(fakePrismaClient(), { storesCredits: true }).findTenantPool,
      undefined,
      "no $queryRawUnsafe",
    );
    const storage = new PrismaApiKeyStorage(client, { storesCredits: true });
    const found = await storage.findTenantPool!("t1");
    assert.equal(found?.id, "k1");
    assert.equal(found?.credits?.updatedAt.getTime(), Date.parse("2030-01-01T00:00:00.000Z"));
    assert.equal(await storage.findTenantPool!("t2"), null);
    assert.deepEqual(
      queries.map((args) => args.slice(1)),
      [["t1"], ["t2"]],
      "the tenant a parameter",
    );
    assert.match(
      String(queries[0][0]),
      /WHERE tenant_id = \$1 AND .* IS NOT NULL\s+ORDER BY .* DESC, created_at DESC, id\s+LIMIT 1$/,
    );
    assert.equal(typeof new PrismaApiKeyStorage(fakePrismaClient()).findByReplacement, "function");
    assert.equal(new PrismaApiKeyStorage(client).setTenantPool, undefined, "no storesCredits");
    queries.length = 0;
    await storage.setTenantPool!("t1", 7, new Date("2030-01-02T00:00:00.000Z"));
    assert.deepEqual(queries[0].slice(1), ["t1", 7, "2030-01-02T00:00:00.000Z"]);
    assert.match(String(queries[0][0]), /^UPDATE api_keys SET credits = .*RETURNING prefix$/s);
  });

  it("ready: with $queryRawUnsafe only; a DateStyle other than ISO, or an instant at a non-zero offset not arriving as itself, is a TypeError naming it; an answer that is no row an Error (unchecked, logged)", async () => {
    assert.equal(new PrismaApiKeyStorage(fakePrismaClient()).ready, undefined);
    const back = new Date(Date.UTC(2031, 5, 15, 12));
    const utc = { back, style: "ISO, MDY", zone: "UTC", shifted: null };
    const answering = (session: unknown, instant?: unknown) => {
      const sent: unknown[][] = [];
      const ready = new PrismaApiKeyStorage(
        Object.assign(fakePrismaClient(), {
          $queryRawUnsafe: (sql: string, ...values: unknown[]) => {
            sent.push(values);
            return Promise.resolve(sql.includes("DateStyle") ? session : instant);
          },
        }),
      ).ready!();
      return { ready, sent };
    };
    const plain = answering([utc]);
    await plain.ready;
    assert.equal(plain.sent.length, 1, "a zone at offset 0 throughout: one statement");
    const shifted = { ...utc, zone: "Asia/Kolkata", shifted: String(Date.UTC(2026, 0, 1)) };
    const sends = answering([shifted], [{ exact: true, moved: true }]); // a client sending offsets
    await sends.ready;
    assert.deepEqual(sends.sent[1], [new Date(Date.UTC(2026, 0, 1)), "2026-01-01T00:00:00.000Z"]);
    await assert.rejects(answering([shifted], [{ exact: false, moved: true }]).ready, {
      name: "TypeError",
      message: /time zone is Asia\/Kolkata, not UTC.*options=-c%20TimeZone%3DUTC/,
    });
    await assert.rejects(answering([{ ...utc, back: new Date(NaN), style: "SQL, DMY" }]).ready, {
      name: "TypeError",
      message: /DateStyle is SQL, DMY, not ISO.*options=-c%20DateStyle%3DISO/,
    });
    for (
      const [session, instant] of [
        [undefined],
        [[]],
        [[{}]],
        [{ ...utc }],
        [[{ ...utc, back: "2031-06-15" }]],
        [[{ ...utc, shifted: 1 }]],
        [[{ ...utc, shifted: "1.5" }]],
        [[{ ...utc, shifted: "9e15" }]],
        [[shifted], []],
        [[shifted], [{ exact: "false", moved: true }]],
        // An instant at offset 0 (a probe read wrong) proves nothing: unchecked, never passed.
        [[shifted], [{ exact: true, moved: false }]],
        [[shifted], [{ exact: false, moved: false }]],
      ]
    ) {
      await assert.rejects(
        answering(session, instant).ready,
        (e: Error) => e.constructor === Error,
        JSON.stringify([session, instant]),
      );
    }
  });

  it("findManyByIds: one findMany where id in the ids and the tenant, by id", async () => {
    const client = fakePrismaClient();
    const asked: unknown[] = [];
    const findMany = client.apiKey.findMany.bind(client.apiKey);
    client.apiKey.findMany = (args) => (asked.push(args), findMany(args));
    const storage = new PrismaApiKeyStorage(client);
    for (const [id, tenantId] of [["b", "t1"], ["a", "t1"], ["c", "t2"]]) {
      await storage.insert(storedRecord({ id, tenantId, prefix: `prefix${id}` }));
    }
    const found = await storage.findManyByIds("t1", ["c", "b", "x", "a"]);
    assert.deepEqual(found.map((record) => record.id), ["a", "b"]);
    assert.deepEqual(asked, [{
      where: { id: { in: ["c", "b", "x", "a"] }, tenantId: "t1" },
      orderBy: [{ id: "asc" }],
    }]);
  });

  it("rejects a client without the delegate methods", () => {
    assert.throws(
      () => new PrismaApiKeyStorage({ apiKey: {} } as never),
      /client\.apiKey is missing method create/,
    );
  });
});

/**
 * `PrismaApiKeyStorage.rotate` over a client without `$transaction`: the new
 * row is inserted first, then the old one is marked with a conditional update;
 * when that update fails or loses, the new row (whose raw key was never handed
 * out) is marked revoked. A delegate fails at each step here, the
 * compensation included, and `list` shows what is left.
 */
/** A step of a rotation without `$transaction`. */
type Step = "insert new" | "mark old" | "revoke new";
/** How a step goes wrong: its call rejects, or a concurrent revoke of the old key wins before it. */
type Failure = "rejects" | "loses";

async function setup(failures: Partial<Record<Step, Failure>>) {
  const client = fakePrismaClient({ transactions: false });
  const { service, events, clocks } = makeService({ storage: new PrismaApiKeyStorage(client) });
  const { id, key } = await service.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
  const steps: Step[] = [];
  const { create, update } = client.apiKey;
  const fail = <T>(step: Step, run: () => Promise<T>): Promise<T> => {
    steps.push(step);
    if (failures[step] === "rejects") return Promise.reject(new Error(`${step} failed`));
    if (failures[step] === "loses") {
      client.rows().find((row) => row.id === id)!.revokedAt = new Date(clocks.now - 1);
    }
    return run();
  };
  client.apiKey.create = (args) => fail("insert new", () => create(args));
  client.apiKey.update = (args) =>
    fail(args.where.id === id ? "mark old" : "revoke new", () => update(args));
  events.length = 0;
  const outcome = await rejection(service.rotate(id));
  client.apiKey.create = create;
  client.apiKey.update = update;
  const all = await service.list("t", { includeRevoked: true });
  return {
    service,
    key,
    steps,
    outcome,
    events,
    now: clocks.now,
    old: all.find((record) => record.id === id)!,
    orphan: all.find((record) => record.id !== id) as ApiKeyRecord | undefined,
    listed: (await service.list("t")).map((record) => record.id),
  };
}

function assertUntouched(old: ApiKeyRecord): void {
  assert.equal(old.rotatedAt, null);
  assert.equal(old.replacedByKeyId, null);
  assert.equal(old.expiresAt, null);
}

describe("PrismaApiKeyStorage.rotate without $transaction", () => {
  it("inserts first: a failed insert leaves the old key as it was and nothing else", async () => {
    const { service, key, steps, outcome, events, old, orphan, listed } = await setup({
      "insert new": "rejects",
    });
    assert.deepEqual(steps, ["insert new"]);
    assert.ok(outcome instanceof ApiKeyStorageError);
    assertUntouched(old);
    assert.equal(orphan, undefined);
    assert.deepEqual(listed, [old.id]);
    assert.deepEqual(events, []);
    assert.equal((await service.verify(key)).keyId, old.id);
  });

  it("a failed update of the old key: the new row is revoked, the old key as it was", async () => {
    const { service, key, steps, outcome, events, now, old, orphan, listed } = await setup({
      "mark old": "rejects",
    });
    assert.deepEqual(steps, ["insert new", "mark old", "revoke new"]);
    assert.ok(outcome instanceof ApiKeyStorageError);
    assertUntouched(old);
    assert.equal(orphan?.revokedAt?.getTime(), now);
    assert.deepEqual(listed, [old.id], "list shows only the old key");
    assert.deepEqual(events, []);
    assert.equal((await service.verify(key)).keyId, old.id);
  });

  it("a lost update (the old key revoked meanwhile): not rotatable, the new row revoked", async () => {
    const { steps, outcome, events, now, old, orphan, listed } = await setup({
      "mark old": "loses",
    });
    assert.deepEqual(steps, ["insert new", "mark old", "revoke new"]);
    assert.ok(outcome instanceof ApiKeyOperationError);
    assert.equal(outcome.code, "api_key_not_rotatable");
    assert.notEqual(old.revokedAt, null);
    assert.equal(old.replacedByKeyId, null);
    assert.equal(orphan?.revokedAt?.getTime(), now);
    assert.deepEqual(listed, [], "both keys are revoked");
    assert.deepEqual(events, []);
  });

  it("a lost update whose compensation fails: a storage error; list shows the new row active", async () => {
    const { outcome, steps, events, old, orphan, listed } = await setup({
      "mark old": "loses",
      "revoke new": "rejects",
    });
    assert.deepEqual(steps, ["insert new", "mark old", "revoke new"]);
    assert.ok(outcome instanceof ApiKeyStorageError);
    assert.equal(old.replacedByKeyId, null);
    assert.ok(orphan !== undefined);
    assert.equal(orphan.revokedAt, null);
    // Its raw key was never returned, so nobody holds it; an operator can revoke it.
    assert.deepEqual(listed, [orphan.id]);
    assert.deepEqual(events, []);
  });

  it("a failed update whose compensation fails too: a storage error; list shows both keys active", async () => {
    const { service, key, outcome, steps, events, old, orphan, listed } = await setup({
      "mark old": "rejects",
      "revoke new": "rejects",
    });
    assert.deepEqual(steps, ["insert new", "mark old", "revoke new"]);
    assert.ok(outcome instanceof ApiKeyStorageError);
    assertUntouched(old);
    assert.ok(orphan !== undefined);
    assert.equal(orphan.revokedAt, null);
    assert.deepEqual(listed, [old.id, orphan.id]);
    assert.deepEqual(events, []);
    assert.equal((await service.verify(key)).keyId, old.id);
  });
});

describe("PrismaApiKeyStorage and the hashScheme column", () => {
  const legacyRow = { ...goodRow, hash: "a".repeat(64), hashScheme: "sha256-pepper" };
  const next = { hash: "N".repeat(43), hashScheme: "hmac-sha256" as const, pepperVersion: 2 };

  it("reads a missing or default column as the default, and writes it only when not the default", async () => {
    const client = fakePrismaClient({ hashSchemeColumn: false, rows: [{ ...goodRow }] });
    const storage = new PrismaApiKeyStorage(client);
    assert.equal((await storage.findById("k1"))?.hashScheme, undefined);
    const record = (await storage.findById("k1"))!;
    await storage.insert({
      ...record,
      id: "k2",
      prefix: "Other0000000",
      hashScheme: "hmac-sha256",
    });
    assert.equal("hashScheme" in client.rows()[1], false, "the default is not written");
    await assert.rejects(
      storage.insert({ ...record, id: "k3", prefix: "Other0000001", hashScheme: "sha256" }),
      /Unknown argument `hashScheme`/,
      "a legacy scheme needs the column",
    );
  });

  it("an unmigrated model keeps upgrading old pepper versions: replaceHash leaves hashScheme out", async () => {
    const client = fakePrismaClient({ hashSchemeColumn: false, rows: [{ ...goodRow }] });
    const storage = new PrismaApiKeyStorage(client);
    assert.equal(await storage.replaceHash("k1", goodRow.hash, next), true);
    assert.deepEqual(
      [client.rows()[0].hash, client.rows()[0].pepperVersion, "hashScheme" in client.rows()[0]],
      [next.hash, 2, false],
    );
  });

  it("a migrated model: replaceHash of a legacy row writes the default scheme over it", async () => {
    const client = fakePrismaClient({ rows: [{ ...legacyRow }] });
    const storage = new PrismaApiKeyStorage(client);
    assert.equal((await storage.findById("k1"))?.hashScheme, "sha256-pepper");
    assert.equal(await storage.replaceHash("k1", "b".repeat(64), next), false, "another hash");
    assert.equal(client.rows()[0].hash, legacyRow.hash);
    assert.equal(await storage.replaceHash("k1", legacyRow.hash, next), true);
    assert.equal(client.rows()[0].hashScheme, "hmac-sha256");
    assert.equal((await storage.findById("k1"))?.hashScheme, undefined);
    assert.equal(await storage.replaceHash("nope", legacyRow.hash, next), false, "unknown id");
  });
});

describe("PrismaApiKeyStorage.countHashes", () => {
  it("reads the usable rows in pages of 1,000 ordered by id, with take and id > the last", async () => {
    const rows = Array.from({ length: 2_345 }, (_, i) => ({
      ...goodRow,
      id: `k${String(i).padStart(5, "0")}`,
      prefix: `P${String(i).padStart(11, "0")}`,
      pepperVersion: i % 2 + 1,
      revokedAt: i % 100 === 0 ? new Date(0) : null,
    }));
    const client = fakePrismaClient({ rows });
    const pages: unknown[] = [];
    const findMany = client.apiKey.findMany.bind(client.apiKey);
    client.apiKey.findMany = (args) => {
      pages.push(args.where.id ?? null);
      return findMany(args);
    };
    const counts = await new PrismaApiKeyStorage(client).countHashes(new Date(1));
    assert.deepEqual(pages, [null, { gt: "k01010" }, { gt: "k02020" }]);
    assert.deepEqual(counts.sort((a, b) => a.pepperVersion - b.pepperVersion), [
      { hashScheme: "hmac-sha256", pepperVersion: 1, count: 1_149 },
      { hashScheme: "hmac-sha256", pepperVersion: 2, count: 1_172 },
    ]);
  });
});

describe("PrismaApiKeyStorage usageBatches", () => {
  /** A usage client logging each statement's parameters. */
  function usageClient() {
    const statements: { sql: string; values: unknown[] }[] = [];
    return {
      statements,
      client: {
        $executeRawUnsafe(sql: string, ...values: unknown[]) {
          statements.push({ sql, values });
          return Promise.resolve(1);
        },
        $queryRawUnsafe: () => Promise.resolve([]),
      },
    };
  }
  const row = {
    keyId: "k",
    tenantId: "t",
    bucket: new Date("2030-01-01T00:00:00.000Z"),
    accepted: 1,
    refused: Object.fromEntries(API_KEY_USAGE_REFUSALS.map((code) => [code, 0])),
    cost: 1,
    lastUsedAt: null,
  } as ApiKeyUsageRow;

  it("needs usage and a boolean; turns on the capability, and each write carries its batch id in one statement", async () => {
    const prisma = fakePrismaClient({ rows: [] });
    assert.throws(
      () => new PrismaApiKeyStorage(prisma, { usageBatches: true }),
      /options\.usageBatches needs options\.usage/,
    );
    const { client, statements } = usageClient();
    assert.throws(
      () => new PrismaApiKeyStorage(prisma, { usage: client, usageBatches: "yes" as never }),
      /options\.usageBatches must be a boolean/,
    );
    assert.equal(new PrismaApiKeyStorage(prisma, { usage: client }).usageBatches, undefined);
    const storage = new PrismaApiKeyStorage(prisma, { usage: client, usageBatches: true });
    assert.equal(storage.usageBatches, true);
    await storage.recordUsage!([row], "batch-1");
    await storage.recordUsage!([row]);
    assert.deepEqual(statements.map((s) => s.values.length), [2, 1]);
    assert.equal(statements[0].values[1], "batch-1");
    assert.match(
      statements[0].sql,
      /INSERT INTO api_key_usage_batches .* ON CONFLICT \(id\) DO NOTHING/,
    );
    assert.doesNotMatch(statements[1].sql, /api_key_usage_batches/, "no id: no batch check");
  });
});

describe("PrismaApiKeyStorage options.storesRateLimitKeyId", () => {
  it("needs storesRateLimits and a boolean; writes and reads the column only with it", async () => {
    const prisma = fakePrismaClient({ rows: [] });
    assert.throws(
      () => new PrismaApiKeyStorage(prisma, { storesRateLimitKeyId: true }),
      /options\.storesRateLimitKeyId needs options\.storesRateLimits/,
    );
    assert.throws(
      () =>
        new PrismaApiKeyStorage(prisma, {
          storesRateLimits: true,
          storesRateLimitKeyId: "yes" as never,
        }),
      /options\.storesRateLimitKeyId must be a boolean/,
    );
    const without = new PrismaApiKeyStorage(prisma, { storesRateLimits: true });
    assert.equal(without.storesRateLimitKeyId, undefined);
    const record = { ...storedRecord(), id: "k2", prefix: "p2", rateLimitKeyId: "k1" };
    await without.insert(record);
    assert.equal((await without.findById("k2"))?.rateLimitKeyId, undefined);
    const storage = new PrismaApiKeyStorage(prisma, {
      storesRateLimits: true,
      storesRateLimitKeyId: true,
    });
    assert.equal(storage.storesRateLimitKeyId, true);
    await storage.insert({ ...record, id: "k3", prefix: "p3" });
    assert.equal((await storage.findById("k3"))?.rateLimitKeyId, "k1");
  });
});
