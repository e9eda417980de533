/**
 * `ApiKeysService.importKeys` on in-memory storage (the same on PostgreSQL:
 * tests/postgres/legacy_test.ts): validated per record, idempotent keyed by
 * prefix, conflicts and errors reported per record without stopping.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  type ApiKeyEvent,
  type ImportApiKeyRecord,
  InMemoryApiKeyStorage,
} from "../../api_keys/mod.ts";
import { importKeys, keyImporter } from "../../api_keys/_import.ts";
import { compileSettings } from "../../api_keys/_settings.ts";
import {
  cleanImport,
  makeService,
  overrideStorage,
  PEPPER_1,
  PEPPER_2,
  rejection,
} from "./helpers.ts";
import { nestarcHash, nestarcKey, plainSha256 } from "./verify/nestarc.ts";

const READ = { resource: "orders", level: "read" as const };
const LEGACY = { legacyKeyLayouts: ["nestarc-v0" as const] };

/** A nestarc export: its keys and their rows as JSON would carry them. */
function nestarcExport(count: number) {
  const keys = Array.from({ length: count }, (_, i) => nestarcKey("ak", i % 2 ? "test" : "live"));
  const rows: ImportApiKeyRecord[] = keys.map((key, i) => ({
    id: `n-${i}`,
    tenantId: `tenant-${i % 3}`,
    name: `nestarc key ${i}`,
    environment: key.environment,
    prefix: key.prefix,
    hash: nestarcHash(key.secret, PEPPER_1),
    hashScheme: "sha256-pepper",
    pepperVersion: 1,
    scopes: ["orders:read", "invoices:write"],
    expiresAt: i === 0 ? "2031-01-01T00:00:00.000Z" : null,
    revokedAt: null,
    lastUsedAt: "2029-12-01T00:00:00.000Z",
    createdBy: i === 1 ? "admin@example.com" : null,
    createdAt: "2029-01-01T00:00:00.000Z",
  }));
  return { keys, rows };
}

const created = (events: ApiKeyEvent[]) => events.filter((e) => e.type === "api_key.created");

/** The known fields an unknown field's refusal lists. */
const KNOWN =
  " (known: id, tenantId, name, environment, prefix, hash, hashScheme, pepperVersion, " +
  "layout, scopes, allowedIpCidrs, expiresAt, revokedAt, rotatedAt, replacedByKeyId, lastUsedAt, " +
  "createdBy, createdAt)";

describe("importKeys", () => {
  it("imports foreign records whose keys then verify, emitting api_key.created each", async () => {
    const { keys, rows } = nestarcExport(5);
    const { service, storage, events } = makeService({ cache: false, ...LEGACY });
    assert.deepEqual(await service.importKeys(rows), cleanImport({ imported: 5 }));
    assert.equal(created(events).length, 5);
    const first = (await storage.findById("n-0"))!;
    assert.deepEqual(
      [first.hashScheme, first.expiresAt?.toISOString(), first.scopes, first.rotatedAt],
      ["sha256-pepper", "2031-01-01T00:00:00.000Z", ["orders:read", "invoices:write"], null],
    );
    for (const [i, key] of keys.entries()) {
      assert.equal((await service.verify(key.raw)).keyId, `n-${i}`);
    }
  });

  it("is idempotent: a re-run skips every record without events, upgraded ones included", async () => {
    const { keys, rows } = nestarcExport(4);
    const { service, events } = makeService({ cache: false, ...LEGACY });
    await service.importKeys(rows);
    await service.verify(keys[2].raw); // upgraded on use: its hash is no longer the export's
    await new Promise((resolve) => setTimeout(resolve, 10));
    events.length = 0;
    assert.deepEqual(await service.importKeys(rows), cleanImport({ skipped: 4 }));
    assert.deepEqual(created(events), []);
  });

  it("a re-run where the old system revoked a key since revokes it here, once", async () => {
    const { keys, rows } = nestarcExport(2);
    const { service, events } = makeService({ cache: false, ...LEGACY });
    await service.importKeys(rows);
    assert.equal((await service.verify(keys[0].raw)).keyId, "n-0");
    const revokedSince = { ...rows[0], revokedAt: "2029-11-30T00:00:00.000Z" };
    events.length = 0;
    assert.deepEqual(
      await service.importKeys([revokedSince, rows[1]]),
      cleanImport({ skipped: 1, revoked: 1 }),
    );
    assert.equal((await rejection(service.verify(keys[0].raw))).code, "api_key_revoked");
    const revoked = events.filter((e) => e.type === "api_key.revoked");
    assert.deepEqual(revoked.map((e) => "keyId" in e ? e.keyId : null), ["n-0"]);
    // Already revoked here: nothing more to do, whatever the record says.
    const again = await service.importKeys([revokedSince, rows[0]]);
    assert.deepEqual([again.skipped, again.revoked, again.conflicts], [2, 0, []]);
    assert.equal(events.filter((e) => e.type === "api_key.revoked").length, 1);
  });

  it("the same key (same hash, or same id upgraded) with other fields is a conflict naming them", async () => {
    const { keys, rows } = nestarcExport(3);
    const { service, storage, events } = makeService({ cache: false, ...LEGACY });
    await service.importKeys(rows);
    await service.verify(keys[2].raw); // upgraded on use: found by id and tenant
    await new Promise((resolve) => setTimeout(resolve, 10));
    events.length = 0;
    const changed = [
      { ...rows[0], tenantId: "globex" },
      { ...rows[1], environment: "live" as const, scopes: ["orders:read"] },
      { ...rows[2], allowedIpCidrs: ["10.0.0.0/8"], expiresAt: "2032-01-01T00:00:00.000Z" },
      { ...rows[1], scopes: ["invoices:write", "orders:read"] }, // the same scopes in another order
      { ...rows[0], tenantId: "globex", revokedAt: "2029-11-30T00:00:00.000Z" },
    ];
    const result = await service.importKeys(changed);
    assert.deepEqual(result, {
      imported: 0,
      skipped: 1,
      revoked: 0,
      conflicts: [
        { index: 0, prefix: rows[0].prefix, message: "the same key differs in tenantId" },
        {
          index: 1,
          prefix: rows[1].prefix,
          message: "the same key differs in environment, scopes",
        },
        {
          index: 2,
          prefix: rows[2].prefix,
          message: "the same key differs in allowedIpCidrs, expiresAt",
        },
        {
          index: 4,
          prefix: rows[0].prefix,
          message: "the same key differs in tenantId (revoked here, as in the record)",
        },
      ],
      errors: [],
      conflictCount: 4,
      errorCount: 0,
    });
    // Nothing but the revocation changed: the key stays with its first tenant, revoked.
    const first = (await storage.findById("n-0"))!;
    assert.equal(first.tenantId, "tenant-0");
    assert.notEqual(first.revokedAt, null);
    assert.equal((await storage.findById("n-1"))!.environment, keys[1].environment);
    assert.deepEqual(events.map((e) => e.type), ["api_key.revoked"]);
  });

  it("a re-run correcting a never-upgraded record's hashScheme, pepperVersion or layout is a conflict naming them, never skipped", async () => {
    const { rows } = nestarcExport(3);
    const peppers = { 1: PEPPER_1, 2: PEPPER_2 };
    const { service, storage } = makeService({ cache: false, ...LEGACY, peppers }); // storesLayout
    const layouts = rows.map((row) => ({ ...row, layout: "nestarc-v0" }));
    const wrong = [
      { ...layouts[0], pepperVersion: 2 },
      { ...layouts[1], hashScheme: "sha256" as const, pepperVersion: 0 },
      layouts[2],
    ];
    assert.deepEqual(await service.importKeys(wrong), cleanImport({ imported: 3 }));
    // The last one recorded in a legacy layout, its export corrected to the current one.
    const result = await service.importKeys([layouts[0], layouts[1], {
      ...layouts[2],
      layout: null,
    }]);
    assert.deepEqual(result.conflicts.map((c) => [c.index, c.message]), [
      [0, "the same key differs in pepperVersion"],
      [1, "the same key differs in hashScheme, pepperVersion"],
      [2, "the same key differs in layout"],
    ]);
    assert.equal(result.skipped, 0);
    // No layout recorded (an app that keeps none wrote the row): not a difference.
    const { layout: _, ...unrecorded } = (await storage.findById(rows[0].id!))!;
    const other = makeService({ cache: false, ...LEGACY, peppers });
    await other.storage.insert({ ...unrecorded, pepperVersion: 1 });
    assert.deepEqual(await other.service.importKeys([layouts[0]]), cleanImport({ skipped: 1 }));
  });

  it("recognises a key upgraded on use whatever pepper version the re-run's service calls current", async () => {
    const { keys, rows } = nestarcExport(1);
    const app = makeService({
      cache: false,
      ...LEGACY,
      peppers: { 1: PEPPER_1, 2: PEPPER_2 },
      currentPepperVersion: 2,
    });
    await app.service.importKeys(rows);
    await app.service.verify(keys[0].raw); // upgraded to hmac-sha256 under version 2
    await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal((await app.storage.findById("n-0"))!.pepperVersion, 2);
    // The import tool knows only the versions the records name.
    const tool = makeService({ cache: false, ...LEGACY, storage: app.storage });
    const result = await tool.service.importKeys(rows);
    assert.deepEqual([result.skipped, result.conflicts], [1, []]);
  });

  it("a record without id whose key was upgraded on use is a conflict that says so; with upgradeHashesOnUse: false it is the same key", async () => {
    const { keys, rows } = nestarcExport(1);
    const { id: _, ...withoutId } = rows[0];
    const revokedSince = { ...withoutId, revokedAt: "2029-11-30T00:00:00.000Z" };
    const upgraded = makeService({ cache: false, ...LEGACY });
    await upgraded.service.importKeys([withoutId]);
    await upgraded.service.verify(keys[0].raw);
    await new Promise((resolve) => setTimeout(resolve, 10));
    assert.deepEqual((await upgraded.service.importKeys([revokedSince])).conflicts, [{
      index: 0,
      prefix: rows[0].prefix,
      message: "the prefix holds another key (a different hash), or this key upgraded on use: " +
        "give the record's id",
    }]);
    const kept = makeService({ cache: false, ...LEGACY, upgradeHashesOnUse: false });
    await kept.service.importKeys([withoutId]);
    await kept.service.verify(keys[0].raw);
    await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal((await kept.service.importKeys([revokedSince])).revoked, 1);
    assert.equal((await rejection(kept.service.verify(keys[0].raw))).code, "api_key_revoked");
  });

  it("an issue carries the prefix only when it is a well-formed prefix (never a whole key)", async () => {
    const { rows } = nestarcExport(1);
    const key = nestarcKey("ak");
    const { service } = makeService({ cache: false, ...LEGACY });
    const result = await service.importKeys([
      { ...rows[0], prefix: key.raw },
      { ...rows[0], prefix: key.secret },
      { ...rows[0], name: "" },
    ]);
    assert.deepEqual(result.errors.map((e) => [e.index, e.prefix]), [
      [0, null],
      [1, null],
      [2, rows[0].prefix],
    ]);
    assert.ok(!JSON.stringify(result).includes(key.secret), "no secret in the report");
  });

  it("reports a prefix or id holding another key as a per-record conflict and goes on", async () => {
    const { rows } = nestarcExport(3);
    const { service } = makeService({ cache: false, ...LEGACY });
    await service.importKeys([rows[1]]);
    const other = { ...rows[1], id: "someone-else", hash: "f".repeat(64) };
    const stolenId = { ...rows[2], id: "n-1" };
    const result = await service.importKeys([rows[0], other, stolenId, rows[1]]);
    assert.equal(result.imported, 1);
    assert.equal(result.skipped, 1);
    assert.deepEqual(result.conflicts, [
      {
        index: 1,
        prefix: rows[1].prefix,
        message: "the prefix holds another key (a different hash)",
      },
      { index: 2, prefix: rows[2].prefix, message: "the id belongs to another key" },
    ]);
    assert.ok(!JSON.stringify(result).includes(rows[1].hash), "no hash in the report");
  });

  it("validates each record, reporting per record and importing the valid ones", async () => {
    const { rows } = nestarcExport(1);
    const base = rows[0];
    const key = nestarcKey("ak");
    const cases: [unknown, RegExp][] = [
      [null, /Invalid record: must be an object/],
      [[], /Invalid record: must be an object$/],
      [["a", "b"], /Invalid record: must be an object$/],
      [{ ...base, prefix: "short" }, /Invalid prefix/],
      [{ ...base, prefix: "ABCDEFGHIJK!" }, /Invalid prefix/],
      [
        { ...base, hashScheme: "md5" },
        /Invalid hashScheme: must be one of hmac-sha256, sha256-pepper, sha256/,
      ],
      [{ ...base, hashScheme: undefined }, /Invalid hashScheme/],
      [{ ...base, hash: "z".repeat(64) }, /Invalid hash: is not a sha256-pepper hash/],
      [{ ...base, pepperVersion: 7 }, /Invalid pepperVersion: pepper version 7 is not configured/],
      [
        { ...base, pepperVersion: "ak_x" },
        /Invalid pepperVersion: must be a configured pepper version$/,
      ],
      [{ ...base, hashScheme: "sha256", pepperVersion: 1 }, /Invalid pepperVersion: must be 0/],
      [{ ...base, hashScheme: "hmac-sha256" }, /Invalid hash: is not a hmac-sha256 hash/],
      [{ ...base, scopes: ["Orders Admin:read"] }, /Invalid scopes/],
      [{ ...base, scopes: ["orders:admin"] }, /Invalid scopes/],
      [{ ...base, scopes: [] }, /Invalid scopes/],
      [{ ...base, environment: undefined }, /Invalid environment/],
      [{ ...base, environment: "prod" }, /Invalid environment/],
      [{ ...base, tenantId: " " }, /Invalid tenantId/],
      [{ ...base, name: "" }, /Invalid name/],
      [{ ...base, createdAt: "yesterday" }, /Invalid createdAt/],
      [{ ...base, expiresAt: "10000-01-01T00:00:00Z" }, /Invalid expiresAt/],
      [{ ...base, revokedAt: 5 }, /Invalid revokedAt/],
      [{ ...base, id: "" }, /Invalid id/],
      [{ ...base, allowedIpCidrs: ["300.1.1.1"] }, /Invalid allowedIpCidrs/],
    ];
    const valid = {
      ...base,
      id: "good",
      prefix: key.prefix,
      hash: nestarcHash(key.secret, PEPPER_1).toUpperCase(),
    };
    const { service, storage } = makeService({ cache: false, ...LEGACY });
    const result = await service.importKeys([...cases.map(([record]) => record), valid] as never);
    assert.equal(result.imported, 1);
    assert.equal(result.errors.length, cases.length);
    for (const [i, [, message]] of cases.entries()) {
      assert.equal(result.errors[i].index, i);
      assert.match(result.errors[i].message, message, `case ${i}`);
    }
    assert.equal((await storage.findById("good"))!.hash, nestarcHash(key.secret, PEPPER_1));
    assert.equal((await service.verify(key.raw)).keyId, "good");
  });

  it("refuses, per record and never echoed, an id the list's cursor, a log line or PostgreSQL cannot carry; 200 characters are imported", async () => {
    const { keys, rows } = nestarcExport(6);
    const ids = ["x".repeat(201), "x".repeat(200_000), "a\0b", "old-\ud800", "acme\nkey-7"];
    const atBound = "\u4e00".repeat(200);
    const records = [...ids.map((id, i) => ({ ...rows[i], id })), { ...rows[5], id: atBound }];
    const { service, storage } = makeService({ cache: false, ...LEGACY });
    const result = await service.importKeys(records);
    assert.equal(result.imported, 1);
    assert.deepEqual(result.errors.map((error) => error.index), [0, 1, 2, 3, 4]);
    assert.deepEqual(
      result.errors.map((error) => error.prefix),
      rows.slice(0, 5).map((r) => r.prefix),
    );
    for (const [i, error] of result.errors.entries()) {
      assert.match(error.message, /^Invalid id: must /, `record ${i}`);
      assert.ok(!error.message.includes(ids[i]) && !error.message.includes("x".repeat(10)));
      assert.equal(await storage.findByPrefix(rows[i].prefix), null, `record ${i}`);
    }
    assert.equal((await service.verify(keys[5].raw)).keyId, atBound);
  });

  it("takes an @nestarc/api-keys 0.4 row one to one: rotatedAt and replacedByKeyId kept as exported (null, or both a rotation)", async () => {
    const { keys, rows } = nestarcExport(4);
    const when = "2029-06-01T00:00:00.000Z";
    const records = [
      { ...rows[0], rotatedAt: null, replacedByKeyId: null },
      {
        ...rows[1],
        rotatedAt: when,
        replacedByKeyId: "n-2",
        expiresAt: "2029-06-02T00:00:00.000Z",
      },
      { ...rows[2], rotatedAt: when, replacedByKeyId: null },
      { ...rows[3], rotatedAt: null, replacedByKeyId: "." },
    ];
    const { service, storage } = makeService({ cache: false, ...LEGACY });
    const result = await service.importKeys(records as never);
    assert.equal(result.imported, 2);
    assert.deepEqual(result.errors.map(({ index, message }) => [index, message]), [
      [
        2,
        "Invalid replacedByKeyId: must name the key that replaced it, with rotatedAt (or both null)",
      ],
      [
        3,
        "Invalid replacedByKeyId: must name the key that replaced it, with rotatedAt (or both null)",
      ],
    ]);
    const rotated = (await storage.findByPrefix(keys[1].prefix))!;
    assert.deepEqual([rotated.rotatedAt?.toISOString(), rotated.replacedByKeyId], [when, "n-2"]);
    const plain = (await storage.findByPrefix(keys[0].prefix))!;
    assert.deepEqual([plain.rotatedAt, plain.replacedByKeyId], [null, null]);
    // A re-run skips them both (a rotated key's expiry is its grace end, never a conflict).
    const again = await service.importKeys(records.slice(0, 2) as never);
    assert.deepEqual([again.imported, again.skipped, again.errors.length], [0, 2, 0]);
  });

  it("refuses a rotated row without its grace end (expiresAt): it would stay valid forever beside its successor", async () => {
    const { keys, rows } = nestarcExport(1);
    const when = "2029-06-01T00:00:00.000Z";
    const { service, storage } = makeService({ cache: false, ...LEGACY });
    for (const expiresAt of [null, undefined]) {
      const result = await service.importKeys(
        [{ ...rows[0], rotatedAt: when, replacedByKeyId: "n-2", expiresAt }] as never,
      );
      assert.equal(result.imported, 0);
      assert.deepEqual(result.errors.map(({ index, message }) => [index, message]), [
        [0, "Invalid expiresAt: must be the grace end of a rotated key (rotatedAt is set)"],
      ]);
    }
    assert.equal(await storage.findByPrefix(keys[0].prefix), null);
  });

  it("refuses a record with unknown fields, naming them and never a value", async () => {
    const { keys, rows } = nestarcExport(4);
    const when = "2024-01-01T00:00:00.000Z";
    const records = [
      { ...rows[0], revoked_at: when },
      { ...rows[1], expires_at: when },
      { ...rows[2], revokedat: when, allowedIps: ["10.0.0.0/8"] },
      { ...rows[3], revoked: true },
    ];
    const { service } = makeService({ cache: false, ...LEGACY });
    const result = await service.importKeys(records as never);
    assert.equal(result.imported, 0);
    assert.deepEqual(
      result.errors.map(({ index, prefix, message }) => [index, prefix, message]),
      [
        [0, keys[0].prefix, "Invalid record: unknown fields: revoked_at" + KNOWN],
        [1, keys[1].prefix, "Invalid record: unknown fields: expires_at" + KNOWN],
        [2, keys[2].prefix, "Invalid record: unknown fields: revokedat, allowedIps" + KNOWN],
        [3, keys[3].prefix, "Invalid record: unknown fields: revoked" + KNOWN],
      ],
    );
    for (const key of keys) await rejection(service.verify(key.raw));
  });

  it("refuses a prefix that does not fit the record's own layout, on a storage that keeps layouts (its key could never verify)", async () => {
    const { rows } = nestarcExport(1);
    const hexy = {
      name: "hexy",
      separator: "-",
      namespace: "sk",
      environments: { live: "prod", test: "dev" },
      prefixLength: 8,
      secretLength: 40,
      alphabet: "hex",
      checksum: false,
    } as const;
    const { service } = makeService({ cache: false, legacyKeyLayouts: ["nestarc-v0", hexy] });
    const records = [
      { ...rows[0], layout: "hexy" }, // a 12-character base62 prefix
      { ...rows[0], id: "n-hex", prefix: "0a1b2c3d", layout: null }, // hex-8: not the current layout
      { ...rows[0], id: "n-hex-ok", prefix: "0a1b2c3e", layout: "hexy" },
    ];
    const result = await service.importKeys(records);
    assert.deepEqual(result.errors.map(({ index, message }) => [index, message]), [
      [0, "Invalid prefix: does not fit the record's layout hexy (its length and alphabet)"],
      [
        1,
        "Invalid prefix: does not fit the record's layout (the current one; its length and alphabet)",
      ],
    ]);
    assert.equal(result.imported, 1);
  });

  it("takes an async iterable, sha256 records, and refuses legacy schemes without legacyKeyLayouts", async () => {
    const key = nestarcKey("ak");
    const row: ImportApiKeyRecord = {
      tenantId: "t",
      name: "plain",
      environment: "live",
      prefix: key.prefix,
      hash: plainSha256(key.secret),
      hashScheme: "sha256",
      pepperVersion: 0,
      scopes: [{ resource: "orders", level: "read" }],
    };
    async function* stream() {
      yield row;
    }
    const plain = makeService({ cache: false });
    const refused = await plain.service.importKeys(stream());
    assert.match(refused.errors[0].message, /sha256 needs the service's legacyKeyLayouts/);
    const { service } = makeService({ cache: false, ...LEGACY });
    assert.equal((await service.importKeys(stream())).imported, 1);
    assert.equal((await service.verify(key.raw)).tenantId, "t");
    await assert.rejects(service.importKeys(42 as never), TypeError);
    const settings = compileSettings({
      peppers: { 1: PEPPER_1 },
      storage: new InMemoryApiKeyStorage(),
    });
    await assert.rejects(importKeys(settings, 42 as never), TypeError);
  });

  it("with retiredPepperVersions, refuses records on a retired version, and sha256 ones, per record", async () => {
    const { rows } = nestarcExport(4);
    const old = makeService({ cache: false });
    const onOne = await old.service.create({ tenantId: "t", name: "v1", scopes: [READ] });
    const stored = (await old.storage.findById(onOne.id))!;
    const plain = nestarcKey("ak");
    const records: ImportApiKeyRecord[] = [
      { ...rows[0], id: undefined, pepperVersion: 1, hash: stored.hash, hashScheme: "hmac-sha256" },
      { ...rows[1], pepperVersion: 1 },
      { ...rows[2], hash: plainSha256(plain.secret), hashScheme: "sha256", pepperVersion: 0 },
      { ...rows[3], hash: nestarcHash(plain.secret, PEPPER_2), pepperVersion: 2 },
    ];
    records[0] = { ...records[0], prefix: stored.prefix, layout: null };
    const options = { peppers: { 1: PEPPER_1, 2: PEPPER_2 }, cache: false as const, ...LEGACY };
    const { service } = makeService({ ...options, retiredPepperVersions: [1] });
    await service.ready();
    const result = await service.importKeys(records);
    assert.equal(result.imported, 1);
    assert.deepEqual(result.errors.map(({ index, message }) => [index, message]), [
      [0, "Invalid pepperVersion: pepper version 1 is retired (retiredPepperVersions)"],
      [1, "Invalid pepperVersion: pepper version 1 is retired (retiredPepperVersions)"],
      [2, "Invalid hashScheme: sha256 is retired (retiredPepperVersions is set)"],
    ]);
    assert.ok(!JSON.stringify(result).includes(stored.hash), "no hash in the errors");
    await rejection(service.verify(onOne.key));
    // `[]` retires sha256 alone.
    const none = makeService({ ...options, retiredPepperVersions: [] });
    const again = await none.service.importKeys(records.slice(0, 3));
    assert.deepEqual(again.errors.map(({ index }) => index), [2]);
  });

  it("keyImporter needs pepper versions only: the keys it imports verify under the real peppers", async () => {
    const { keys, rows } = nestarcExport(3);
    const storage = new InMemoryApiKeyStorage();
    const importer = keyImporter({ storage, pepperVersions: [1], ...LEGACY });
    const unknownVersion = { ...rows[2], pepperVersion: 2 };
    const result = await importer.importKeys([rows[0], rows[1], unknownVersion]);
    assert.deepEqual([result.imported, result.errors.map((e) => [e.index, e.message])], [
      2,
      [[2, "Invalid pepperVersion: pepper version 2 is not configured"]],
    ]);
    const again = await importer.importKeys([{ ...rows[1], revokedAt: "2029-11-30T00:00:00Z" }]);
    assert.deepEqual([again.skipped, again.revoked], [0, 1]);
    const { service } = makeService({ storage, cache: false, ...LEGACY });
    assert.equal((await service.verify(keys[0].raw)).keyId, "n-0");
    assert.equal((await rejection(service.verify(keys[1].raw))).code, "api_key_revoked");
    assert.throws(
      () => keyImporter({ storage, pepperVersions: [1], legacyKeyLayouts: ["v9" as never] }),
      /^TypeError: KeyImporterOptions\.legacyKeyLayouts\[0\] is an unknown layout/,
    );
  });

  it("a storage failure is that record's error; the others go on", async () => {
    const { rows } = nestarcExport(3);
    const inner = new InMemoryApiKeyStorage();
    let calls = 0;
    const storage = overrideStorage(inner, {
      insert: (record: never) =>
        ++calls === 2 ? Promise.reject(new Error("db down")) : inner.insert(record),
    });
    const { service } = makeService({ storage, cache: false, ...LEGACY });
    const result = await service.importKeys(rows);
    assert.equal(result.imported, 2);
    assert.deepEqual(result.errors, [
      { index: 1, prefix: rows[1].prefix, message: "API key storage is unavailable" },
    ]);
  });
});

describe("importKeys: dates, scopes and echoes, strictly", () => {
  it("reads a date (UTC midnight) or a date-time with its zone; refuses loose, zoneless and rolled-over dates naming the field", async () => {
    const { keys, rows } = nestarcExport(4);
    const { service, storage } = makeService({ cache: false, ...LEGACY });
    const result = await service.importKeys([
      { ...rows[0], expiresAt: "2031-01-01" },
      { ...rows[1], expiresAt: "2031-01-01T02:00:00+02:00" },
      { ...rows[2], expiresAt: new Date("2031-01-01T00:00:00Z") },
      { ...rows[3], expiresAt: "2032-02-29T00:00:00.5Z", createdAt: "2029-01-01" },
    ]);
    assert.deepEqual(result.errors, []);
    assert.equal(result.imported, 4);
    const stored = await Promise.all(keys.map((key) => storage.findByPrefix(key.prefix)));
    assert.deepEqual(stored.map((record) => record!.expiresAt!.toISOString()), [
      "2031-01-01T00:00:00.000Z",
      "2031-01-01T00:00:00.000Z",
      "2031-01-01T00:00:00.000Z",
      "2032-02-29T00:00:00.500Z",
    ]);
    assert.equal(stored[3]!.createdAt.toISOString(), "2029-01-01T00:00:00.000Z");

    const loose = [
      "5",
      "01/02/2031",
      "2031-02-30T00:00:00Z",
      "2031-02-29",
      "2031-06-01T00:00:00",
      "2031-06-01 00:00:00",
      "Jun 1 2031",
      "2031-06-01T24:00:00Z",
      "2031-06-01T00:00:00+25:00",
      "+002031-06-01T00:00:00Z",
    ];
    const fields = ["expiresAt", "revokedAt", "createdAt", "lastUsedAt"] as const;
    const { rows: more } = nestarcExport(loose.length * fields.length);
    const records = fields.flatMap((field, f) =>
      loose.map((value, v) => ({ ...more[f * loose.length + v], [field]: value }))
    );
    const refused = await service.importKeys(records);
    assert.equal(refused.imported, 0);
    assert.equal(refused.errors.length, records.length);
    for (const [i, error] of refused.errors.entries()) {
      const field = fields[Math.floor(i / loose.length)];
      const value = loose[i % loose.length];
      assert.match(error.message, new RegExp(`^Invalid ${field}: `), value);
      assert.ok(!error.message.includes(value), error.message);
    }
  });

  it("refuses a scope string without a colon, naming scopes (never the value)", async () => {
    const { keys, rows } = nestarcExport(2);
    const { service } = makeService({ cache: false, ...LEGACY });
    const secretLike = "s3cr3tS3cr3tS3cr3tS3cr3tS3cr3t00";
    const result = await service.importKeys([
      { ...rows[0], scopes: ["read"] },
      { ...rows[1], scopes: ["orders:read", secretLike] },
    ]);
    assert.equal(result.imported, 0);
    assert.deepEqual(result.errors.map((error) => error.index), [0, 1]);
    for (const error of result.errors) {
      assert.match(error.message, /^Invalid scopes: /);
      assert.ok(!error.message.includes(secretLike), error.message);
      assert.ok(!error.message.includes("rea:"), error.message);
    }
    for (const key of keys) await rejection(service.verify(key.raw));
  });

  it("imports @nestarc/api-keys scopes with capitals and '/' one to one; they authorize exactly", async () => {
    const { keys, rows } = nestarcExport(2);
    const { service, storage } = makeService({ cache: false, ...LEGACY });
    const scopes = ["Orders:read", "billing/invoices:write", "v2.Reports-x_1:read"];
    const result = await service.importKeys([
      { ...rows[0], scopes },
      { ...rows[1], scopes: [{ resource: "R/".repeat(50), level: "write" }] },
    ]);
    assert.deepEqual(result, cleanImport({ imported: 2 }));
    assert.deepEqual((await storage.findById("n-0"))!.scopes, scopes);
    assert.deepEqual((await service.verify(keys[0].raw)).scopes, scopes);
    assert.deepEqual((await service.verify(keys[1].raw)).scopes, [`${"R/".repeat(50)}:write`]);
    const required = (resource: string, level: "read" | "write") => ({
      requiredScope: { resource, level },
    });
    await service.authorize(keys[0].raw, required("Orders", "read"));
    await service.authorize(keys[0].raw, required("billing/invoices", "read"));
    await service.authorize(keys[0].raw, required("v2.Reports-x_1", "read"));
    for (const [resource, level] of [["orders", "read"], ["billing", "read"]] as const) {
      const error = await rejection(service.authorize(keys[0].raw, required(resource, level)));
      assert.equal(error.code, "api_key_scope_insufficient", resource);
    }
    assert.deepEqual(
      await service.importKeys([{ ...rows[0], scopes }]),
      cleanImport({ skipped: 1 }),
      "a re-run skips it: the scopes compare equal",
    );
  });

  it("still refuses, per record and never echoed, a resource outside [A-Za-z0-9._/-] of 1-128", async () => {
    const { keys, rows } = nestarcExport(6);
    const { service } = makeService({ cache: false, ...LEGACY });
    const bad = [":read", "a b:read", "a\tb:read", `${"R".repeat(129)}:read`, "a:b:read", "ä:read"];
    const result = await service.importKeys(
      bad.map((scope, i) => ({ ...rows[i], scopes: [scope] })),
    );
    assert.equal(result.imported, 0);
    assert.deepEqual(result.errors.map((error) => error.index), [0, 1, 2, 3, 4, 5]);
    for (const error of result.errors) {
      assert.match(
        error.message,
        /^Invalid scopes: scopes\[0\]\.resource must be 1-128 characters of \[A-Za-z0-9._\/-\]$/,
      );
    }
    for (const key of keys) await rejection(service.verify(key.raw));
  });

  it("never echoes a hash or a key given as a field name or an allowlist entry", async () => {
    const { keys, rows } = nestarcExport(3);
    const { service } = makeService({ cache: false, ...LEGACY });
    const hash = rows[0].hash as string;
    const result = await service.importKeys([
      { ...rows[0], [hash]: "x" } as never,
      { ...rows[1], [keys[1].raw]: 1 } as never,
      { ...rows[2], allowedIpCidrs: [hash] },
    ]);
    assert.deepEqual(result.errors.map((error) => error.message), [
      "Invalid record: unknown fields: (a name of 64 characters)" + KNOWN,
      `Invalid record: unknown fields: (a name of ${keys[1].raw.length} characters)` + KNOWN,
      "Invalid allowedIpCidrs: allowedIpCidrs entry 0 is not an IP or CIDR",
    ]);
    const report = JSON.stringify(result);
    for (const secret of [hash, hash.slice(0, 32), keys[1].secret]) {
      assert.ok(!report.includes(secret), report);
    }
  });

  it("keeps at most the first 1,000 conflicts and errors, counting all and reporting each to onIssue as it happens", async () => {
    const storage = new InMemoryApiKeyStorage();
    const importer = keyImporter({ storage, pepperVersions: [1], ...LEGACY });
    const bad = 200_000;
    const seen: [string, number][] = [];
    let pulled = 0;
    async function* records() {
      for (let i = 0; i < bad; i++) {
        // Each issue is reported before the next record is read (a CLI's line number holds).
        assert.equal(seen.length, i);
        pulled++;
        yield { x: i } as never;
      }
    }
    const result = await importer.importKeys(records(), {
      onIssue: (issue, kind) => {
        assert.equal(issue.index, pulled - 1);
        seen.push([kind, issue.index]);
      },
    });
    assert.equal(seen.length, bad);
    assert.ok(seen.every(([kind, index], i) => kind === "error" && index === i));
    assert.equal(result.errorCount, bad);
    assert.equal(result.errors.length, 1_000);
    assert.deepEqual(result.errors.map((error) => error.index), [...Array(1_000).keys()]);
    assert.match(result.errors[999].message, /^Invalid record: unknown fields: x/);

    const { rows } = nestarcExport(1);
    const other = { ...rows[0], hash: "0".repeat(64) };
    const conflicts = await importer.importKeys([rows[0], ...Array(1_001).fill(other)]);
    assert.deepEqual(
      [
        conflicts.imported,
        conflicts.conflictCount,
        conflicts.conflicts.length,
        conflicts.errorCount,
      ],
      [1, 1_001, 1_000, 0],
    );
    assert.deepEqual(conflicts.conflicts.at(-1)?.index, 1_000);
    await assert.rejects(
      importer.importKeys([], { onIssue: "print" as never }),
      /options\.onIssue must be a function/,
    );
  });
});
