/**
 * The audit log through `ApiKeysService` (option `audit`) on the in-memory
 * storage: what each change records and by whom, the pages, verification,
 * the JSON Lines export, checkpoints, pruning, and that no record or export
 * holds a raw key, secret, hash or pepper.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  type ApiKeyAuditCheckpointEvent,
  type ApiKeysService,
  type ApiKeysServiceOptions,
  type ApiKeyStorage,
  type AuditLogPage,
  InMemoryApiKeyStorage,
} from "../../../api_keys/mod.ts";
import {
  auditHash,
  checkpointValid,
  GENESIS_HASH,
  verifyAuditChain,
} from "../../../api_keys/audit/chain.ts";
import { AuditLog, change, createdChanges, toAuditRecord } from "../../../api_keys/audit/_log.ts";
import type {
  AuditAppend,
  AuditCheckpoint,
  AuditExportLine,
  AuditReadQuery,
  StoredAuditRecord,
} from "../../../api_keys/audit/types.ts";
import type { AuditReadAnswer } from "../../../api_keys/storage/types.ts";
import { createRateLimiter } from "../../../rate_limits/limiter.ts";
import { createMemoryRateLimitStore } from "../../../rate_limits/memory_store.ts";
import type { RateLimitStore } from "../../../rate_limits/store.ts";
import { gatedStorage, makeService, PEPPER_1 } from "../helpers.ts";
import { nestarcHash, nestarcKey } from "../verify/nestarc.ts";
import { type ServiceHooks, serviceHooks } from "../../../api_keys/_service_hooks.ts";

const CHECKPOINT_KEY = "an-audit-key-of-at-least-thirty-two-bytes";
const SCOPES = [{ resource: "orders", level: "read" as const }];
const DAY = 86_400_000;

function auditedService(
  options: {
    checkpointEvery?: number;
    storage?: ApiKeyStorage;
    legacyKeyLayouts?: ApiKeysServiceOptions["legacyKeyLayouts"];
    store?: RateLimitStore;
    storageTimeoutMs?: number;
  } = {},
) {
  const info = console.info;
  const lines: string[] = [];
  console.info = (line: string) => lines.push(line);
  try {
    const storage = options.storage ?? new InMemoryApiKeyStorage();
    const made = makeService({
      storage,
      audit: { checkpointKey: CHECKPOINT_KEY, checkpointEvery: options.checkpointEvery ?? 1_000 },
      limiter: createRateLimiter({
        store: options.store ?? createMemoryRateLimitStore(),
        logger: () => {},
      }),
      legacyKeyLayouts: options.legacyKeyLayouts,
      storageTimeoutMs: options.storageTimeoutMs,
    });
    return { ...made, lines };
  } finally {
    console.info = info;
  }
}

async function collect(lines: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const line of lines) out.push(line);
  return out;
}

/** Emits the `api_key.exposed` event a leak report of key `id` (tenant "t") sends. */
function exposed(hooks: ServiceHooks, id: string, prefix: string): void {
  hooks.emitEvent!({
    type: "api_key.exposed",
    at: new Date(),
    keyId: id,
    tenantId: "t",
    prefix,
    environment: "live",
    source: "github",
    url: null,
  });
}

/**
 * Tenant `t`'s records by `actor` once there are `n` (they are appended off the
 * call's path), or those there after 5 s of polling.
 */
async function recordsOf(
  service: ApiKeysService,
  actor: string,
  n: number,
): Promise<AuditLogPage["records"]> {
  const until = Date.now() + 5_000;
  for (;;) {
    const { records } = await service.auditLog("t", { actor });
    if (records.length >= n || Date.now() > until) return records;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** A record of tenant `t` appended by the app (the head advances with it). */
const appended = (n: number): AuditAppend => ({
  tenantId: "t",
  body: JSON.stringify({ n }),
  at: new Date(),
  keyId: null,
  actor: "app",
  action: "key.created",
});

/**
 * In-memory storage whose `readAudit` can read the state and the records
 * apart with a change between them (as two statements sent at once may), can
 * show a forged record past the head that did not advance it (a row inserted
 * by the database owner), and records edited in place (`edit`).
 */
class RacingAuditStorage extends InMemoryApiKeyStorage {
  reads = 0;
  /** The `afterSeq` of each read in ascending order. */
  readsAfter: number[] = [];
  /** Records of tenant `t` answered in place of the stored ones, by `seq` (the head's hash too). */
  edited = new Map<number, StoredAuditRecord>();
  /** For the read numbered `read` (from 1): a change run between its two halves, and which half reads first. */
  race: (read: number) => { between: () => Promise<unknown>; stateFirst: boolean } | undefined =
    () => undefined;
  /** A record past the head, shown to reads in ascending order whose range holds it. */
  forged: StoredAuditRecord | undefined;
  /** What the database owner shows in place of every answer (rows and heads row written by hand). */
  view: ((answer: AuditReadAnswer, query: AuditReadQuery) => AuditReadAnswer) | undefined;

  override async readAudit(query: AuditReadQuery): Promise<AuditReadAnswer> {
    const race = this.race(++this.reads);
    let answer = await super.readAudit(query);
    if (race !== undefined) {
      await race.between();
      const again = await super.readAudit(query);
      answer = race.stateFirst
        ? { records: again.records, state: answer.state }
        : { records: answer.records, state: again.state };
    }
    const forged = this.forged;
    if (
      forged !== undefined && query.order === "asc" && forged.seq > (query.afterSeq ?? 0) &&
      forged.seq < (query.beforeSeq ?? Infinity) && answer.records.length < query.limit
    ) {
      answer = { ...answer, records: [...answer.records, forged] };
    }
    if (query.order === "asc") this.readsAfter.push(query.afterSeq ?? 0);
    const head = answer.state.head === null ? undefined : this.edited.get(answer.state.head.seq);
    const shown = {
      records: answer.records.map((r) => this.edited.get(r.seq) ?? r),
      state: head === undefined
        ? answer.state
        : { ...answer.state, head: { seq: head.seq, hash: head.hash } },
    };
    return this.view === undefined ? shown : this.view(shown, query);
  }

  /**
   * Edits record `seq`'s body as the database owner would; with `rehash`, its
   * hash and every later record's are recomputed and the head follows (a
   * consistent rewrite: nothing in the chain itself tells).
   */
  async edit(seq: number, rehash: boolean): Promise<void> {
    const { records } = await super.readAudit({ tenantId: "t", order: "asc", limit: 1_000 });
    let prevHash = records.find((r) => r.seq === seq)!.prevHash;
    for (const r of records.filter((r) => r.seq >= seq)) {
      const body = r.seq === seq ? JSON.stringify({ edited: true }) : r.body;
      const hash = rehash ? await auditHash(prevHash, "t", r.seq, r.at, body) : r.hash;
      this.edited.set(r.seq, { ...r, body, prevHash, hash });
      if (!rehash) return;
      prevHash = hash;
    }
  }

  /** Forges the record after the head (or the first one) without advancing the head. */
  async forge(): Promise<void> {
    const { head } = (await super.readAudit({ tenantId: "t", order: "desc", limit: 1 })).state;
    const [seq, prevHash] = [(head?.seq ?? 0) + 1, head?.hash ?? GENESIS_HASH];
    const [at, body] = [new Date(), JSON.stringify({ forged: true })];
    const hash = await auditHash(prevHash, "t", seq, at, body);
    this.forged = { tenantId: "t", seq, at, body, prevHash, hash };
  }
}

/**
 * From the next read on, `storage`'s second read meets a retention prune of
 * tenant `t`'s records older than half a day, committed before it.
 */
function pruneAtSecondRead(storage: RacingAuditStorage): void {
  storage.race = (read) =>
    read === 2
      ? {
        between: () => storage.pruneAudit("t", new Date(Date.now() - DAY / 2)),
        stateFirst: true,
      }
      : undefined;
  storage.reads = 0;
}

describe("api_keys/audit/_log.ts", () => {
  it("writes changes as JSON (dates as ISO, absent as null), a new key's fields without its hash", () => {
    assert.deepEqual(change(undefined, new Date(0)), {
      before: null,
      after: "1970-01-01T00:00:00.000Z",
    });
    const fields = createdChanges({
      name: "n",
      environment: "live",
      scopes: ["a:read"],
      expiresAt: null,
      createdBy: null,
      hash: "secret-hash",
    } as never);
    assert.deepEqual(Object.keys(fields).sort(), [
      "allowedIpCidrs",
      "createdBy",
      "environment",
      "expiresAt",
      "name",
      "scopes",
    ]);
    const record = toAuditRecord({
      tenantId: "t",
      seq: 2,
      at: new Date(0),
      body: '{"action":"key.created","v":1}',
      prevHash: "p",
      hash: "h",
    });
    assert.equal(record.at, "1970-01-01T00:00:00.000Z");
    assert.equal(record.action, "key.created");
    // A record no writer makes (edited in the database) is named, as verification does.
    const stored = { tenantId: "t", seq: 2, at: new Date(0), body: "{}", prevHash: "p", hash: "h" };
    for (
      const [odd, detail] of [
        [{ at: new Date(Number.NaN) }, "time"],
        [{ body: "not json" }, "body"],
        [{ body: "[1]" }, "body"],
        [{ body: "null" }, "body"],
      ] as const
    ) {
      assert.throws(() => toAuditRecord({ ...stored, ...odd }), {
        name: "AuditChainError",
        message:
          `the audit chain does not verify at seq 2 (edited: the record's ${detail} cannot be read)`,
      });
    }
  });

  it("refuses the option over a storage without the capability; names where records go", () => {
    const { appendAudit: _, readAudit: __, ...plain } = Object.fromEntries(
      Object.entries(Object.getOwnPropertyDescriptors(InMemoryApiKeyStorage.prototype)).map((
        [name],
      ) => [name, (() => {}) as unknown]),
    );
    assert.throws(
      () => auditedService({ storage: plain as unknown as ApiKeyStorage }),
      /audit needs a storage with the capabilities appendAudit, readAudit/,
    );
    assert.throws(
      () => makeService({ audit: { checkpointKey: "short" } }),
      /checkpointKey must be a string of at least 32 bytes/,
    );
    assert.throws(
      () => makeService({ audit: { checkpointKey: CHECKPOINT_KEY, checkpointEvery: 0 } }),
      /checkpointEvery/,
    );
    const { lines } = auditedService();
    assert.deepEqual(lines.filter((line) => line.includes("audit")), [
      "api-keys: audit log on; records go to the storage (InMemoryApiKeyStorage.appendAudit), each in the same step as its change",
    ]);
  });

  it("two credit changes at once: each record's before is the balance its own change was applied to", async () => {
    const { service } = auditedService();
    const { id } = await service.create({
      tenantId: "t",
      name: "ci",
      scopes: SCOPES,
      credits: { remaining: 100 },
    });
    const answers = await Promise.all([
      service.updateCredits("t", id, { add: -10 }, { actor: "alice" }),
      service.updateCredits("t", id, { add: -20 }, { actor: "bob" }),
    ]);
    const records = (await service.auditLog("t")).records
      .filter((r) => r.action === "key.credits_updated").reverse();
    assert.deepEqual(records.map((r) => r.changes.credits), [
      { before: 100, after: answers[0].remaining },
      { before: answers[0].remaining, after: answers[1].remaining },
    ]);
    // A set, and an add held at 0, record the balance the store applied them to (its answer).
    await service.updateCredits("t", id, { set: 5 }, { actor: "carol" });
    await service.updateCredits("t", id, { add: -9 }, { actor: "dave" });
    await service.updateCredits("t", id, { add: 0 }, { actor: "erin" });
    const [zero, held, set] = (await service.auditLog("t")).records;
    assert.deepEqual(set.changes.credits, { before: 70, after: 5 });
    assert.deepEqual(held.changes.credits, { before: 5, after: 0 });
    assert.deepEqual(zero.changes.credits, { before: 0, after: 0 });
  });

  it("over a custom store whose credit change answers no balance before: a set records before null, an add the balance it derives", async () => {
    const memory = createMemoryRateLimitStore();
    const store: RateLimitStore = {
      checkBatch: (checks) => memory.checkBatch(checks),
      readCredits: (counters) => memory.readCredits(counters),
      changeCredits: async (counter, change, deadline) => {
        const answer = await memory.changeCredits(counter, change, deadline);
        return answer && { allowed: true, remaining: answer.remaining, resetMs: answer.resetMs };
      },
    };
    const { service } = auditedService({ store });
    const { id } = await service.create({
      tenantId: "t",
      name: "ci",
      scopes: SCOPES,
      credits: { remaining: 100 },
    });
    await service.updateCredits("t", id, { set: 5 }, { actor: "carol" });
    await service.updateCredits("t", id, { add: 3 }, { actor: "dave" });
    const [add, set] = (await service.auditLog("t")).records;
    assert.deepEqual(set.changes.credits, { before: null, after: 5 });
    assert.deepEqual(add.changes.credits, { before: 5, after: 8 });
  });

  it("a kept checkpoint a prune passed verifies with checkpoint before_prune (not checked); one at or after the anchor: checked", async () => {
    const { service, clocks } = auditedService();
    const { id } = await service.create({ tenantId: "t", name: "a", scopes: SCOPES });
    await service.revokeForTenant("t", id, { actor: "bob" });
    const old = (await service.auditCheckpoint("t"))!;
    await service.create({ tenantId: "t", name: "a2", scopes: SCOPES });
    clocks.now += DAY;
    for (const name of ["b", "c", "d"]) {
      await service.create({ tenantId: "t", name, scopes: SCOPES });
    }
    const fresh = (await service.auditCheckpoint("t"))!;
    assert.equal(await service.pruneAuditLog("t", new Date(clocks.now)), 3);
    const before = await service.verifyAuditLog("t", { checkpoint: old });
    assert.equal((before as { checkpoint?: string }).checkpoint, "before_prune");
    const checked = await service.verifyAuditLog("t", { checkpoint: fresh });
    assert.equal((checked as { checkpoint?: string }).checkpoint, "checked");
    const none = await service.verifyAuditLog("t");
    assert.equal(none.ok && "checkpoint" in none, false);
  });

  it("refuses toSeq before the checkpoint's seq with a TypeError naming both", async () => {
    const { service } = auditedService();
    for (const name of ["a", "b", "c"]) {
      await service.create({ tenantId: "t", name, scopes: SCOPES });
    }
    const checkpoint = (await service.auditCheckpoint("t"))!;
    await assert.rejects(
      service.verifyAuditLog("t", { toSeq: 2, checkpoint }),
      (error: Error) =>
        error instanceof TypeError && /toSeq/.test(error.message) &&
        /checkpoint/.test(error.message),
    );
    assert.equal((await service.verifyAuditLog("t", { toSeq: 3, checkpoint })).ok, true);
  });

  it("refuses to append a record of a tenant id that is not well-formed UTF-16", async () => {
    const { log } = twoRecordChains();
    const audit = log.entry("acme\uD800", "key.renamed", undefined, "app", null, {});
    await assert.rejects(
      log.append(audit),
      (error: Error) => error instanceof TypeError && /well-formed/.test(error.message),
    );
  });

  it("refuses an audit context or a key name holding NUL or a lone surrogate (PostgreSQL's jsonb refuses them): the change is not made", async () => {
    const { service } = auditedService();
    const { id, key } = await service.create({ tenantId: "t", name: "ci", scopes: SCOPES });
    for (const text of ["mallory\u0000", "mallory\ud800", "\udc00"]) {
      for (const field of ["actor", "requestId", "clientAddress"]) {
        await assert.rejects(
          service.revokeForTenant("t", id, { [field]: text }),
          (error: Error) => error instanceof TypeError && error.message.includes(field),
          `${field} ${JSON.stringify(text)}`,
        );
      }
      await assert.rejects(
        service.create({ tenantId: "t", name: `ci${text}`, scopes: SCOPES }),
        { code: "api_key_invalid_input", field: "name" },
      );
    }
    assert.equal((await service.verify(key)).keyId, id);
    await service.close();
  });

  it("a page, verify, checkpoint, export or prune of a tenant id the storage cannot hold is ApiKeyValidationError naming tenantId", async () => {
    const { service } = auditedService();
    for (const tenantId of ["t\u0000", "t\ud800", ""]) {
      for (
        const call of [
          () => service.auditLog(tenantId),
          () => service.verifyAuditLog(tenantId),
          () => service.auditCheckpoint(tenantId),
          () => collect(service.exportAuditLog(tenantId)),
          () => service.pruneAuditLog(tenantId, new Date(0)),
        ]
      ) {
        await assert.rejects(
          call(),
          { code: "api_key_invalid_input", field: "tenantId" },
          String(call),
        );
      }
    }
    await service.close();
  });

  it("records create, rotate, credits and revoke with their actor, before and after (a second revoke none)", async () => {
    const { service } = auditedService();
    const { id } = await service.create(
      { tenantId: "t", name: "ci", scopes: SCOPES, credits: { remaining: 10 } },
      { actor: "alice", requestId: "req-1", clientAddress: "203.0.113.9" },
    );
    const rotated = await service.rotate(id, { name: "ci-2", gracePeriodMs: 60_000 });
    await service.updateCredits("t", rotated.id, { add: 5 }, { actor: "billing" });
    await service.revokeForTenant("t", rotated.id, { actor: "bob" });
    await service.revoke(rotated.id, { actor: "carol" }); // already revoked: no record
    const { records, nextCursor } = await service.auditLog("t");
    assert.equal(nextCursor, null);
    assert.deepEqual(records.map((r) => [r.seq, r.action, r.actor]), [
      [4, "key.revoked", "bob"],
      [3, "key.credits_updated", "billing"],
      [2, "key.rotated", "app"],
      [1, "key.created", "alice"],
    ]);
    const [revoked, credits, rotation, created] = records;
    assert.equal(created.keyId, id);
    assert.equal(created.requestId, "req-1");
    assert.equal(created.clientAddress, "203.0.113.9");
    assert.deepEqual(created.changes.name, { before: null, after: "ci" });
    assert.deepEqual(created.changes.credits, { before: null, after: 10 });
    assert.deepEqual(rotation.changes.name, { before: "ci", after: "ci-2" });
    assert.deepEqual(rotation.changes.replacedByKeyId, { before: null, after: rotated.id });
    assert.deepEqual(credits.changes.credits, { before: 10, after: 15 });
    assert.deepEqual(credits.changes.request, { before: null, after: { add: 5 } });
    assert.equal(revoked.keyId, rotated.id);
    assert.equal(typeof revoked.changes.revokedAt.after, "string");
    assert.equal(created.outcome, "success");
    assert.deepEqual(await service.verifyAuditLog("t"), {
      ok: true,
      checked: 4,
      head: { seq: 4, hash: revoked.hash },
    });
  });

  it("records expiry notices and ended rotations as the system's", async () => {
    const { service, clocks } = auditedService();
    const { id } = await service.create({
      tenantId: "t",
      name: "n",
      scopes: SCOPES,
      expiresAt: new Date(clocks.now + 10 * DAY),
    });
    await service.rotate(id, { gracePeriodMs: 60_000 });
    clocks.advance(2 * 60_000);
    await service.notifyExpiring({ thresholdsMs: [30 * DAY] });
    const records = await recordsOf(service, "system", 2);
    assert.deepEqual(records.map((r) => r.action).sort(), [
      "key.expiring",
      "key.rotation_completed",
    ]);
    assert.ok(records.every((r) => r.actor === "system"));
  });

  it("records a leak report's revocation and the exposure by actor leak-report", async () => {
    const { service } = auditedService();
    const { id } = await service.create({ tenantId: "t", name: "n", scopes: SCOPES });
    const hooks = serviceHooks(service)!;
    const { prefix } = (await service.list("t"))[0];
    await hooks.revokeReported(id, () => exposed(hooks, id, prefix));
    const records = await recordsOf(service, "leak-report", 2);
    assert.deepEqual(records.map((r) => r.action).sort(), ["key.exposed", "key.revoked"]);
    assert.ok(records.every((r) => r.keyId === id && r.prefix === prefix));
  });

  it("records a leak report's revocation and exposure when the write lands past the deadline", async () => {
    const { storage, release } = gatedStorage("markRevokedIfActive");
    const { service } = auditedService({ storage, storageTimeoutMs: 30 });
    const { id } = await service.create({ tenantId: "t", name: "n", scopes: SCOPES });
    const hooks = serviceHooks(service)!;
    const { prefix } = (await service.list("t"))[0];
    await assert.rejects(hooks.revokeReported(id, () => exposed(hooks, id, prefix)));
    assert.deepEqual((await service.auditLog("t", { actor: "leak-report" })).records, []);
    release();
    const records = await recordsOf(service, "leak-report", 2);
    assert.deepEqual(records.map((r) => r.action).sort(), ["key.exposed", "key.revoked"]);
  });

  it("records each imported key (not a skipped one) by the import's actor", async () => {
    const { service } = auditedService({ legacyKeyLayouts: ["nestarc-v0"] });
    const key = nestarcKey("ak", "live");
    const row = {
      id: "imported-1",
      tenantId: "t",
      name: "old",
      environment: key.environment,
      prefix: key.prefix,
      hash: nestarcHash(key.secret, PEPPER_1),
      hashScheme: "sha256-pepper" as const,
      pepperVersion: 1,
      scopes: ["orders:read"],
      expiresAt: null,
      revokedAt: null,
      lastUsedAt: null,
      createdBy: null,
      createdAt: "2029-01-01T00:00:00.000Z",
    };
    await service.importKeys([row], { actor: "migration" });
    await service.importKeys([row], { actor: "migration" });
    const { records } = await service.auditLog("t");
    assert.deepEqual(records.map((r) => [r.action, r.actor, r.keyId]), [
      ["key.imported", "migration", "imported-1"],
    ]);
    assert.ok(!JSON.stringify(records).includes(row.hash));
  });

  it("pages newest first with a cursor, filtered by key, action and time; bad queries refused", async () => {
    const { service, clocks } = auditedService();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await service.create({ tenantId: "t", name: `k${i}`, scopes: SCOPES })).id);
      clocks.advance(1_000);
    }
    await service.revoke(ids[0]);
    const first = await service.auditLog("t", { limit: 4 });
    assert.deepEqual(first.records.map((r) => r.seq), [6, 5, 4, 3]);
    const second = await service.auditLog("t", { limit: 4, cursor: first.nextCursor });
    assert.deepEqual(second.records.map((r) => r.seq), [2, 1]);
    assert.equal(second.nextCursor, null);
    const ofKey = await service.auditLog("t", { keyId: ids[0] });
    assert.deepEqual(ofKey.records.map((r) => r.action), ["key.revoked", "key.created"]);
    const revokes = await service.auditLog("t", { action: "key.revoked" });
    assert.equal(revokes.records.length, 1);
    const early = await service.auditLog("t", { to: new Date(Date.parse("2030-01-01") + 1_500) });
    assert.deepEqual(early.records.map((r) => r.seq), [2, 1]);
    assert.equal((await service.auditLog("other")).records.length, 0, "another tenant's log");
    for (
      const [query, field] of [
        [{ limit: 101 }, "limit"],
        [{ cursor: "x" }, "cursor"],
        [{ action: "key.nope" }, "action"],
        [{ from: new Date(Number.NaN) }, "from"],
        [{ from: new Date(8.64e15) }, "from"],
        [{ from: new Date(-8.64e15) }, "from"],
        [{ to: new Date("-000001-12-31T23:59:59.999Z") }, "to"],
        [{ keyId: "k\u0000" }, "keyId"],
        [{ to: new Date("+010000-01-01T00:00:00Z") }, "to"],
        [{ keyId: "" }, "keyId"],
      ] as const
    ) {
      await assert.rejects(service.auditLog("t", query as never), { field }, field);
    }
  });

  it("exports JSON Lines with checkpoints every N records and at the end, verifiable offline", async () => {
    const { service } = auditedService({ checkpointEvery: 2 });
    for (let i = 0; i < 5; i++) {
      await service.create({ tenantId: "t", name: `k${i}`, scopes: SCOPES });
    }
    const lines = await collect(service.exportAuditLog("t"));
    assert.ok(lines.every((line) => line.endsWith("\n") && !line.slice(0, -1).includes("\n")));
    const parsed = lines.map((line) => JSON.parse(line) as AuditExportLine);
    assert.deepEqual(parsed.map((l) => l.type === "record" ? `r${l.seq}` : `c${l.seq}`), [
      "r1",
      "r2",
      "c2",
      "r3",
      "r4",
      "c4",
      "r5",
      "c5",
    ]);
    for (const line of parsed) {
      if (line.type === "checkpoint") {
        assert.ok(await checkpointValid(CHECKPOINT_KEY, line));
      } else {
        assert.deepEqual(Object.keys(line).sort(), [
          "action",
          "actor",
          "at",
          "changes",
          "clientAddress",
          "hash",
          "keyId",
          "outcome",
          "prefix",
          "prevHash",
          "requestId",
          "seq",
          "tenantId",
          "type",
          "v",
        ]);
      }
    }
    // A tenant re-verifies the export without the database: the body is the line's entry.
    const stored: StoredAuditRecord[] = parsed.filter((l) => l.type === "record").map((l) => {
      const { type: _, tenantId, seq, at, prevHash, hash, ...entry } = l as AuditExportLine & {
        type: "record";
      };
      const { canonicalJson } = { canonicalJson: (v: unknown) => JSON.stringify(sortKeys(v)) };
      return { tenantId, seq, at: new Date(at), body: canonicalJson(entry), prevHash, hash };
    });
    assert.equal((await verifyAuditChain(stored, { tenantId: "t" })).ok, true);
    assert.deepEqual(await collect(service.exportAuditLog("t", 5)).then((l) => l.length), 2);
  });

  it("emits a signed checkpoint every N records; it verifies, a forged or altered one does not", async () => {
    const storage = new InMemoryApiKeyStorage();
    const { service, events } = auditedService({ checkpointEvery: 3, storage });
    for (let i = 0; i < 3; i++) {
      await service.create({ tenantId: "t", name: `k${i}`, scopes: SCOPES });
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
    const emitted = events.filter((e): e is ApiKeyAuditCheckpointEvent =>
      e.type === "api_key.audit_checkpoint"
    );
    assert.equal(emitted.length, 1);
    const { checkpoint } = emitted[0];
    assert.equal(checkpoint.seq, 3);
    assert.deepEqual(await service.verifyAuditLog("t", { checkpoint }), {
      checkpoint: "checked",
      ok: true,
      checked: 3,
      head: { seq: 3, hash: checkpoint.hash },
    });
    const forged = { ...checkpoint, mac: "0".repeat(64) };
    const answer = await service.verifyAuditLog("t", { checkpoint: forged });
    assert.equal(!answer.ok && answer.problem, "checkpoint_invalid");
    const later = await service.verifyAuditLog("t", {
      checkpoint: await service.auditCheckpoint("t").then((c) => ({ ...c!, seq: 9 })),
    });
    assert.equal(!later.ok && later.problem, "checkpoint_invalid", "a changed seq breaks the MAC");
  });

  it("verifies up to the head read at its start: records appended meanwhile (after a page, between a read's halves) raise no alarm", async () => {
    const storage = new RacingAuditStorage();
    const { service } = auditedService({ storage });
    for (let i = 0; i < 600; i++) await storage.appendAudit(appended(i));
    const quiet = await service.verifyAuditLog("t");
    assert.ok(quiet.ok && quiet.head?.seq === 600);
    const before = quiet.head;
    // One appended while the second page (records 501 to 600) is read.
    storage.reads = 0;
    storage.race = (read) =>
      read === 2
        ? { between: () => storage.appendAudit(appended(600)), stateFirst: true }
        : undefined;
    assert.deepEqual(await service.verifyAuditLog("t"), { ok: true, checked: 600, head: before });
    // The first page read after the state: it holds record 602, past the head read beside it.
    storage.reads = 0;
    storage.race = (read) =>
      read === 1
        ? { between: () => storage.appendAudit(appended(601)), stateFirst: true }
        : undefined;
    const stale = await service.verifyAuditLog("t");
    assert.deepEqual(stale.ok && [stale.checked, stale.head!.seq], [601, 601]);
    // A small chain whose state is read after its page: the head is past the page, not truncated.
    const small = new RacingAuditStorage();
    const other = auditedService({ storage: small }).service;
    for (let i = 0; i < 3; i++) await small.appendAudit(appended(i));
    small.race = (read) =>
      read === 1 ? { between: () => small.appendAudit(appended(3)), stateFirst: false } : undefined;
    const behind = await other.verifyAuditLog("t");
    assert.deepEqual(behind.ok && [behind.checked, behind.head!.seq], [4, 4]);
    await other.close();
    await service.close();
  });

  it("names a record past the head that did not advance it as inserted, on one page, past a page, or in an empty chain", async () => {
    for (const n of [0, 3, 600]) {
      const storage = new RacingAuditStorage();
      const { service } = auditedService({ storage });
      for (let i = 0; i < n; i++) await storage.appendAudit(appended(i));
      assert.equal((await service.verifyAuditLog("t")).ok, true);
      await storage.forge();
      const answer = await service.verifyAuditLog("t");
      assert.deepEqual(!answer.ok && [answer.problem, answer.seq, answer.checked], [
        "inserted",
        n + 1,
        n,
      ], `a chain of ${n}`);
      await service.close();
    }
  });

  it("a row the database owner wrote at seq 0 or below: verify reads from the start and names it inserted; no checkpoint or export over it; pages list it", async () => {
    for (const seq of [0, -5]) {
      const storage = new RacingAuditStorage();
      const { service } = auditedService({ storage });
      for (let i = 0; i < 3; i++) await storage.appendAudit(appended(i));
      const at = new Date();
      const body = JSON.stringify({ forged: true });
      const row = { tenantId: "t", seq, at, body, prevHash: GENESIS_HASH, hash: "a".repeat(64) };
      storage.view = (answer, query) => {
        const inside = seq > (query.afterSeq ?? -Infinity) && seq < (query.beforeSeq ?? Infinity);
        if (!inside || answer.records.length >= query.limit) return answer;
        const records = query.order === "asc" ? [row, ...answer.records] : [...answer.records, row];
        return { ...answer, records };
      };
      const answer = await service.verifyAuditLog("t");
      assert.deepEqual(!answer.ok && [answer.problem, answer.seq], ["inserted", seq], `seq ${seq}`);
      await assert.rejects(service.auditCheckpoint("t"), { name: "AuditChainError" });
      await assert.rejects(collect(service.exportAuditLog("t")), { name: "AuditChainError" });
      const { records } = await service.auditLog("t");
      assert.deepEqual(records.map((r) => r.seq), [3, 2, 1, seq]);
      await service.close();
    }
  });

  it("signs a checkpoint only over a chain that verifies: a rewrite after the last one this instance signed, or a tampered record, is refused", async () => {
    const storage = new RacingAuditStorage();
    const { service } = auditedService({ storage });
    for (let i = 0; i < 3; i++) await storage.appendAudit(appended(i));
    const first = await service.auditCheckpoint("t");
    assert.equal(first?.seq, 3);
    // Rewritten from record 2 with every hash recomputed and the head moved along: the chain
    // verifies on its own, not against the checkpoint signed before.
    await storage.edit(2, true);
    assert.equal((await service.verifyAuditLog("t")).ok, true);
    await assert.rejects(service.auditCheckpoint("t"), {
      name: "AuditChainError",
      message:
        "the audit chain does not verify at seq 3 (edited: the record's hash is not the checkpoint's)",
    });
    // A new instance remembers no checkpoint: it verifies from the anchor, and finds a record
    // edited without its hash.
    storage.edited.clear();
    await storage.edit(2, false);
    const other = auditedService({ storage }).service;
    await assert.rejects(other.auditCheckpoint("t"), /does not verify at seq 2 \(edited: /);
    storage.edited.clear();
    const again = await other.auditCheckpoint("t");
    assert.deepEqual([again?.seq, again?.hash], [3, first?.hash]);
    await other.close();
    await service.close();
  });

  it("verifies from the last checkpoint it signed: a full pass once, then the records since (a pruned one: from the anchor)", async () => {
    const storage = new RacingAuditStorage();
    const { service } = auditedService({ storage });
    for (let i = 0; i < 600; i++) await storage.appendAudit(appended(i));
    await service.auditCheckpoint("t");
    assert.deepEqual(storage.readsAfter, [0, 500]);
    for (let i = 0; i < 5; i++) await storage.appendAudit(appended(i));
    storage.readsAfter = [];
    assert.equal((await service.auditCheckpoint("t"))?.seq, 605);
    assert.deepEqual(storage.readsAfter, [599]);
    storage.readsAfter = [];
    assert.equal((await service.auditCheckpoint("t"))?.seq, 605);
    assert.deepEqual(storage.readsAfter, [604]);
    // Pruned past the checkpoint remembered: from the anchor again, no refusal.
    await storage.appendAudit(appended(605));
    assert.equal(await service.pruneAuditLog("t", new Date(Date.now() + DAY)), 605);
    storage.readsAfter = [];
    assert.equal((await service.auditCheckpoint("t"))?.seq, 606);
    assert.deepEqual(storage.readsAfter, [604]);
    await service.close();
  });

  it("refuses a head before the chain's anchor (a heads row written by hand): nothing signed or exported, verify says edited", async () => {
    const storage = new RacingAuditStorage();
    const { service } = auditedService({ storage });
    for (let i = 0; i < 3; i++) await storage.appendAudit(appended(i));
    const hidden = (head: { seq: number; hash: string }, anchorSeq: number) =>
      storage.view = (answer) => ({
        records: [],
        state: { head, anchor: { seq: anchorSeq, prevHash: answer.state.head!.hash } },
      });
    for (
      const [head, anchorSeq] of [[{ seq: 50, hash: "c".repeat(64) }, 100], [{
        seq: 3,
        hash: "f".repeat(64),
      }, 4]] as const
    ) {
      hidden(head, anchorSeq);
      const message = new RegExp(
        `at seq ${head.seq} \\(edited: the chain's head lies before its anchor ${anchorSeq}\\)`,
      );
      await assert.rejects(service.auditCheckpoint("t"), { name: "AuditChainError", message });
      await assert.rejects(collect(service.exportAuditLog("t")), message);
      const answer = await service.verifyAuditLog("t");
      assert.deepEqual([answer.ok, !answer.ok && answer.problem], [false, "edited"]);
    }
    await service.close();
  });

  it("a prune that keeps the record after the checkpoint it remembers must link to it: one written by hand over a rewrite is refused", async () => {
    const storage = new RacingAuditStorage();
    const { service } = auditedService({ storage });
    for (let i = 0; i < 9; i++) await storage.appendAudit(appended(i));
    assert.equal((await service.auditCheckpoint("t"))?.seq, 9);
    await storage.appendAudit(appended(9));
    // Records before 10 hidden, the anchor at record 10 with its prevHash: a real prune signs.
    const prunedTo10 = () =>
      storage.view = (answer) => {
        const records = answer.records.filter((r) => r.seq >= 10);
        const tenth = storage.edited.get(10) ?? records.find((r) => r.seq === 10)!;
        return {
          records,
          state: { ...answer.state, anchor: { seq: 10, prevHash: tenth.prevHash } },
        };
      };
    prunedTo10();
    assert.equal((await service.auditCheckpoint("t"))?.seq, 10);
    // Another instance remembering record 9; then record 9 rewritten (record 10's hash recomputed)
    // and hidden by a prune written by hand: refused.
    const nine = auditedService({ storage }).service;
    storage.view = (answer) => ({
      records: answer.records.filter((r) => r.seq <= 9),
      state: { ...answer.state, head: answer.records.find((r) => r.seq === 9)! },
    });
    assert.equal((await nine.auditCheckpoint("t"))?.seq, 9);
    await storage.edit(9, true);
    prunedTo10();
    await assert.rejects(nine.auditCheckpoint("t"), {
      name: "AuditChainError",
      message: /at seq 9 \(edited: the record's hash is not the checkpoint's\)/,
    });
    await Promise.all([nine.close(), service.close()]);
  });

  it("remembers the checkpoints an export signed from the anchor or its last checkpoint (not a partial export's): a later rewrite is refused", async () => {
    const storage = new RacingAuditStorage();
    const { service } = auditedService({ storage, checkpointEvery: 5 });
    for (let i = 0; i < 10; i++) await storage.appendAudit(appended(i));
    await collect(service.exportAuditLog("t"));
    await storage.edit(7, true);
    const message = /at seq 10 \(edited: the record's hash is not the checkpoint's\)/;
    await assert.rejects(collect(service.exportAuditLog("t")), message);
    await assert.rejects(service.auditCheckpoint("t"), message);
    // An export from record 8 trusts record 8's prevHash: what it signs is not remembered, so a
    // checkpoint still verifies from the anchor and finds record 3 edited.
    storage.edited.clear();
    const fresh = auditedService({ storage, checkpointEvery: 5 }).service;
    await collect(fresh.exportAuditLog("t", 8));
    await storage.edit(3, false);
    await assert.rejects(fresh.auditCheckpoint("t"), /at seq 3 \(edited: /);
    await fresh.close();
    await service.close();
  });

  it("signs up to the head read at its start: records appended meanwhile never refuse a checkpoint", async () => {
    const storage = new RacingAuditStorage();
    for (let i = 0; i < 600; i++) await storage.appendAudit(appended(i));
    let n = 600;
    // One instance remembering its last checkpoint, and each time a new one verifying it all.
    const kept = auditedService({ storage }).service;
    await kept.auditCheckpoint("t");
    for (const [read, stateFirst] of [[1, true], [1, false], [2, true], [2, false]] as const) {
      for (const service of [kept, auditedService({ storage }).service]) {
        storage.reads = 0;
        storage.race = (at) =>
          at === read
            ? { between: () => storage.appendAudit(appended(n++)), stateFirst }
            : undefined;
        const checkpoint = await service.auditCheckpoint("t");
        assert.ok(checkpoint !== null && checkpoint.seq >= n - 1, `read ${read}, ${stateFirst}`);
        assert.ok(await checkpointValid(CHECKPOINT_KEY, checkpoint));
        if (service !== kept) await service.close();
      }
    }
    assert.ok(n > 604, "the appends raced the reads");
    storage.race = () => undefined;
    assert.equal((await kept.verifyAuditLog("t")).ok, true);
    await kept.close();
  });

  it("emits no automatic checkpoint over a chain that does not verify, and logs it each time", async () => {
    const storage = new RacingAuditStorage();
    const { service, events } = auditedService({ checkpointEvery: 1, storage });
    const warn = console.error;
    const warned: string[] = [];
    console.error = (line: string) => warned.push(line);
    const emitted = () =>
      events.filter((e): e is ApiKeyAuditCheckpointEvent => e.type === "api_key.audit_checkpoint");
    try {
      await service.create({ tenantId: "t", name: "k0", scopes: SCOPES });
      for (let i = 0; i < 1_000 && emitted().length === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      await storage.edit(1, false);
      for (let i = 1; i < 3; i++) {
        await service.create({ tenantId: "t", name: `k${i}`, scopes: SCOPES });
      }
      await service.close();
    } finally {
      console.error = warn;
    }
    assert.deepEqual(emitted().map((e) => e.checkpoint.seq), [1]);
    assert.ok(warned.length > 0, "each checkpoint that found it logs a line");
    for (const line of warned) {
      assert.match(line, /^api-keys: the audit checkpoint of tenant "t" found the chain broken: /);
    }
  });

  it("exports only what verifies: a tampered record ends the export with an error before its line, no checkpoint at or past it", async () => {
    const storage = new RacingAuditStorage();
    const { service } = auditedService({ checkpointEvery: 2, storage });
    for (let i = 0; i < 5; i++) await storage.appendAudit(appended(i));
    const clean = await collect(service.exportAuditLog("t"));
    const lines: string[] = [];
    const exported = async (fromSeq?: number) => {
      lines.length = 0;
      for await (const line of service.exportAuditLog("t", fromSeq)) lines.push(line);
    };
    const kinds = () =>
      lines.map((line) => JSON.parse(line) as AuditExportLine).map((l) =>
        l.type === "record" ? `r${l.seq}` : `c${l.seq}`
      );
    await storage.edit(4, false);
    await assert.rejects(exported(), {
      name: "AuditChainError",
      message:
        "the audit chain does not verify at seq 4 (edited: the record's content does not match its hash)",
    });
    assert.deepEqual(kinds(), ["r1", "r2", "c2", "r3"]);
    assert.deepEqual(lines, clean.slice(0, 4));
    // From record 4: its previous hash is trusted, its own hash is not.
    await assert.rejects(exported(4), /does not verify at seq 4 \(edited: /);
    assert.deepEqual(kinds(), []);
    // Record 2 re-hashed alone: its line came before record 3 showed no link to it, its
    // checkpoint (signed only once the next record links to it) never does.
    storage.edited.clear();
    await storage.edit(2, true);
    for (const seq of [3, 4, 5]) storage.edited.delete(seq);
    await assert.rejects(exported(), /does not verify at seq 2 \(edited: the next record/);
    assert.deepEqual(kinds(), ["r1", "r2"]);
    // Rewritten from record 4 after a checkpoint of record 5 this instance signed: found there.
    storage.edited.clear();
    await service.auditCheckpoint("t");
    await storage.edit(4, true);
    await assert.rejects(exported(), /does not verify at seq 5 \(edited: .*checkpoint's\)/);
    assert.deepEqual(kinds(), ["r1", "r2", "c2", "r3", "r4"]);
    await service.close();
  });

  it("an export or a verify from past a checkpoint (remembered or given) walks from it: a rewrite behind it is refused, nothing signed", async () => {
    const storage = new RacingAuditStorage();
    const { service } = auditedService({ checkpointEvery: 1_000, storage });
    for (let i = 0; i < 4; i++) await storage.appendAudit(appended(i));
    const kept = (await service.auditCheckpoint("t"))!;
    assert.equal(kept.seq, 4);
    for (let i = 4; i < 8; i++) await storage.appendAudit(appended(i));
    const seqs = (lines: string[]) =>
      lines.map((line) => JSON.parse(line) as AuditExportLine).map((l) =>
        l.type === "record" ? `r${l.seq}` : `c${l.seq}`
      );
    // Untouched: only the records asked for are sent (the walk from the checkpoint is not).
    assert.deepEqual(seqs(await collect(service.exportAuditLog("t", 6))), ["r6", "r7", "r8", "c8"]);
    assert.deepEqual(seqs(await collect(service.exportAuditLog("t", 9))), []);
    assert.equal((await service.verifyAuditLog("t", { fromSeq: 6, checkpoint: kept })).ok, true);
    // Rewritten from record 2, every hash and the head recomputed: consistent on its own.
    const other = auditedService({ storage }).service;
    const [check, keptOf8] = [
      (await other.auditCheckpoint("t"))!,
      await service.auditCheckpoint("t"),
    ];
    assert.equal(keptOf8?.seq, 8);
    await storage.edit(2, true);
    assert.equal((await service.verifyAuditLog("t")).ok, true);
    const refused =
      /does not verify at seq 8 \(edited: the record's hash is not the checkpoint's\)/;
    for (const fromSeq of [6, 9, 20]) {
      const lines: string[] = [];
      await assert.rejects(async () => {
        for await (const line of service.exportAuditLog("t", fromSeq)) lines.push(line);
      }, refused);
      assert.deepEqual(seqs(lines).filter((l) => l.startsWith("c")), [], `from ${fromSeq}`);
    }
    // A checkpoint kept elsewhere, given to verify with a range starting past it.
    for (const fromSeq of [5, 6, 8]) {
      const answer = await service.verifyAuditLog("t", { fromSeq, checkpoint: kept });
      assert.deepEqual([answer.ok, !answer.ok && answer.problem, !answer.ok && answer.seq], [
        false,
        "edited",
        4,
      ], `from ${fromSeq}`);
    }
    const answer = await service.verifyAuditLog("t", { fromSeq: 8, toSeq: 8, checkpoint: check });
    assert.deepEqual([answer.ok, !answer.ok && answer.problem], [false, "edited"]);
    await Promise.all([other.close(), service.close()]);
  });

  it("a checkpoint whose seq or hash is not of the type signed (a string seq keeps its MAC) is checkpoint_invalid", async () => {
    const storage = new RacingAuditStorage();
    const { service } = auditedService({ storage });
    for (let i = 0; i < 4; i++) await storage.appendAudit(appended(i));
    const kept = (await service.auditCheckpoint("t"))!;
    await storage.edit(2, true);
    const answer = await service.verifyAuditLog("t", { checkpoint: kept });
    assert.deepEqual([!answer.ok && answer.problem, !answer.ok && answer.seq], ["edited", 4]);
    for (
      const changed of [
        { seq: "4" },
        { seq: 4.5 },
        { seq: 0 },
        { seq: -1 },
        { hash: kept.hash.toUpperCase() },
        { hash: ` ${kept.hash}` },
        { hash: 42 },
      ]
    ) {
      const checkpoint = { ...kept, ...changed } as unknown as AuditCheckpoint;
      const refused = await service.verifyAuditLog("t", { checkpoint });
      assert.equal(!refused.ok && refused.problem, "checkpoint_invalid", JSON.stringify(changed));
      assert.equal(await checkpointValid(CHECKPOINT_KEY, checkpoint), false);
    }
    await service.close();
  });

  it("refuses a range that is not one: seqs not positive integers, or fromSeq past toSeq (nothing verified is no ok)", async () => {
    const storage = new RacingAuditStorage();
    const { service } = auditedService({ storage });
    for (let i = 0; i < 3; i++) await storage.appendAudit(appended(i));
    for (const range of [{ fromSeq: 0 }, { toSeq: 1.5 }, { fromSeq: 2, toSeq: 1 }]) {
      await assert.rejects(service.verifyAuditLog("t", range), TypeError, JSON.stringify(range));
    }
    assert.equal((await service.verifyAuditLog("t", { fromSeq: 2, toSeq: 2 })).ok, true);
  });

  it("a range from just past the head is ok with nothing new; from further on, the records between are truncated (a poller's last record cut with the head)", async () => {
    const storage = new RacingAuditStorage();
    const { service } = auditedService({ storage });
    for (let i = 0; i < 3; i++) await storage.appendAudit(appended(i));
    const answer = async (range: { fromSeq: number; toSeq?: number }) => {
      const a = await service.verifyAuditLog("t", range);
      return a.ok ? `ok ${a.checked}` : `${a.problem} ${a.seq} ${a.checked}`;
    };
    assert.equal(await answer({ fromSeq: 4 }), "ok 0");
    assert.equal(await answer({ fromSeq: 5 }), "truncated 4 0");
    assert.equal(await answer({ fromSeq: 100, toSeq: 200 }), "truncated 4 0");
  });

  it("a range to toSeq must reach it: a tail deleted below the head row is truncated; at or past the head, the head's hash is checked", async () => {
    const storage = new RacingAuditStorage();
    const { service } = auditedService({ storage });
    for (let i = 0; i < 8; i++) await storage.appendAudit(appended(i));
    const problem = async (toSeq?: number) => {
      const answer = await service.verifyAuditLog("t", toSeq === undefined ? {} : { toSeq });
      return answer.ok ? `ok ${answer.checked}` : `${answer.problem} ${answer.seq}`;
    };
    // Records 7 and 8 deleted, the head row (8) left (a range to 6: record 7 must link to it).
    storage.view = (answer) => ({
      ...answer,
      records: answer.records.filter((r) => r.seq < 7),
    });
    assert.deepEqual(
      [await problem(), await problem(8), await problem(7), await problem(20), await problem(6)],
      ["truncated 7", "truncated 7", "truncated 7", "truncated 7", "truncated 7"],
    );
    assert.equal(await problem(5), "ok 5");
    // The head row's hash changed by hand: found by a range reaching the head.
    storage.view = (answer) => ({
      ...answer,
      state: answer.state.head === null
        ? answer.state
        : { ...answer.state, head: { seq: 8, hash: "f".repeat(64) } },
    });
    assert.deepEqual(
      [await problem(), await problem(8), await problem(20), await problem(7)],
      ["edited 8", "edited 8", "edited 8", "ok 7"],
    );
    await service.close();
  });

  it("a range to toSeq before the head: its last record edited with its hash recomputed is edited (record toSeq + 1 must link to it), the next record never answered", async () => {
    const storage = new RacingAuditStorage();
    const { service } = auditedService({ storage });
    for (let i = 0; i < 6; i++) await storage.appendAudit(appended(i));
    const { records } = await storage.readAudit({ tenantId: "t", order: "asc", limit: 100 });
    const body = JSON.stringify({ edited: true });
    const third = records[2];
    storage.edited.set(3, {
      ...third,
      body,
      hash: await auditHash(third.prevHash, "t", 3, third.at, body),
    });
    const ranges = [{}, { toSeq: 3 }, { fromSeq: 2, toSeq: 3 }, { fromSeq: 3, toSeq: 3 }];
    const answers = [];
    for (const range of ranges) answers.push(await service.verifyAuditLog("t", range));
    assert.deepEqual(
      answers.map((a) => a.ok ? "ok" : `${a.problem} ${a.seq} ${a.checked}`),
      ["edited 3 3", "edited 3 3", "edited 3 2", "edited 3 1"],
    );
    const two = await service.verifyAuditLog("t", { toSeq: 2 });
    assert.deepEqual(two.ok && [two.checked, two.head], [2, { seq: 2, hash: records[1].hash }]);
    await service.close();
  });

  it("exports up to the head read at its start: records appended meanwhile are left for the next export", async () => {
    const storage = new RacingAuditStorage();
    const { service } = auditedService({ checkpointEvery: 2, storage });
    for (let i = 0; i < 600; i++) await storage.appendAudit(appended(i));
    storage.race = (read) =>
      read === 1
        ? { between: () => storage.appendAudit(appended(600)), stateFirst: true }
        : undefined;
    storage.reads = 0;
    const lines = await collect(service.exportAuditLog("t"));
    const last = JSON.parse(lines.at(-1)!) as AuditExportLine;
    assert.deepEqual([lines.length, last.type, last.seq], [900, "checkpoint", 600]);
    await service.close();
  });

  it("an export or a verify from the next record, read beside its append (rows before it, the head after), raises no alarm", async () => {
    const storage = new RacingAuditStorage();
    const { service } = auditedService({ checkpointEvery: 100, storage });
    for (let i = 0; i < 5; i++) await storage.appendAudit(appended(i));
    const racing = (read: number) =>
      read === 1
        ? { between: () => storage.appendAudit(appended(read)), stateFirst: false }
        : undefined;
    storage.race = racing;
    storage.reads = 0;
    const lines = await collect(service.exportAuditLog("t", 6));
    assert.deepEqual(lines.map((l) => (JSON.parse(l) as AuditExportLine).seq), [6, 6]);
    storage.reads = 0;
    const answer = await service.verifyAuditLog("t", { fromSeq: 7 });
    assert.deepEqual([answer.ok, answer.checked], [true, 1]);
    await service.close();
  });

  it("a checkpoint whose read meets a prune landing between its pages verifies again from the new anchor", async () => {
    const storage = new RacingAuditStorage();
    const { service } = auditedService({ storage });
    const old = new Date(Date.now() - DAY);
    for (let i = 0; i < 700; i++) await storage.appendAudit({ ...appended(i), at: old });
    for (let i = 700; i < 710; i++) await storage.appendAudit(appended(i));
    pruneAtSecondRead(storage);
    assert.equal((await service.auditCheckpoint("t"))?.seq, 710);
    assert.equal((await service.verifyAuditLog("t")).checked, 10);
    await service.close();
  });

  it("a verify whose read meets a prune landing between its pages verifies again from the new anchor (to the head or to toSeq); records deleted past the anchor, or not pruned, are still found", async () => {
    const past = new Date(Date.now() - DAY);
    /**
     * `verifyAuditLog` over `range` of 1,000 records (the first `old` written a day ago, those
     * from `hidden[0]` to `hidden[1]` deleted) meeting the prune of the old ones before its
     * second page.
     */
    const verified = async (old: number, range: { toSeq?: number }, hidden = [0, 0]) => {
      const storage = new RacingAuditStorage();
      const { service } = auditedService({ storage });
      for (let i = 0; i < 1_000; i++) {
        await storage.appendAudit({ ...appended(i), at: i < old ? past : new Date() });
      }
      storage.view = (answer) => ({
        ...answer,
        records: answer.records.filter((r) => r.seq < hidden[0] || r.seq > hidden[1]),
      });
      pruneAtSecondRead(storage);
      const answer = await service.verifyAuditLog("t", range);
      await service.close();
      return answer.ok ? `ok ${answer.checked}` : `${answer.problem} ${answer.seq}`;
    };
    // Records 1 to 900 pruned once the first page (1 to 500) was read: an intact log verifies.
    assert.deepEqual(
      [
        await verified(900, {}),
        await verified(900, { toSeq: 800 }),
        await verified(900, { toSeq: 960 }),
      ],
      ["ok 100", "ok 0", "ok 60"],
    );
    // Records the prune did not drop, deleted by hand: found all the same.
    assert.deepEqual(
      [
        await verified(900, {}, [950, 950]),
        await verified(900, { toSeq: 960 }, [950, 950]),
        await verified(900, { toSeq: 960 }, [951, 960]),
        await verified(300, {}, [600, 600]),
        await verified(300, { toSeq: 800 }, [600, 600]),
      ],
      ["deleted 950", "deleted 950", "truncated 951", "deleted 600", "deleted 600"],
    );
  });

  it("an export meeting a prune between its pages goes on when only records it emitted were dropped; one dropped, deleted or edited before it reached it stops the export", async () => {
    const past = new Date(Date.now() - DAY);
    /** An export of 1,200 records (the first `old` written a day ago) meeting `between` before its second page. */
    const exported = async (old: number, between: (storage: RacingAuditStorage) => unknown) => {
      const storage = new RacingAuditStorage();
      const { service } = auditedService({ checkpointEvery: 100, storage });
      for (let i = 0; i < 1_200; i++) {
        await storage.appendAudit({ ...appended(i), at: i < old ? past : new Date() });
      }
      storage.race = (read) =>
        read === 2 ? { between: async () => await between(storage), stateFirst: true } : undefined;
      storage.reads = 0;
      const lines: AuditExportLine[] = [];
      const error = await (async () => {
        for await (const line of service.exportAuditLog("t")) lines.push(JSON.parse(line));
      })().then(() => undefined, (error: Error) => error);
      return { service, storage, lines, error };
    };
    const prune = (storage: RacingAuditStorage) =>
      storage.pruneAudit("t", new Date(Date.now() - DAY / 2));
    // Records 1 to 300, or 1 to 500 (the whole first page), pruned once emitted: the export goes on
    // from the last hash it emitted, every record linked to the one before.
    for (const old of [300, 500]) {
      const { service, lines, error } = await exported(old, prune);
      assert.equal(error, undefined, `${old}: ${error?.message}`);
      const records = lines.filter((l) => l.type === "record");
      assert.deepEqual(records.map((r) => r.seq), Array.from({ length: 1_200 }, (_, i) => i + 1));
      const links = records.map((r, i) => r.prevHash === (records[i - 1]?.hash ?? GENESIS_HASH));
      assert.ok(links.every(Boolean), `${old}: each record links to the one before`);
      assert.deepEqual([lines.at(-1)!.type, lines.at(-1)!.seq], ["checkpoint", 1_200]);
      assert.equal((await service.verifyAuditLog("t")).ok, true);
      await service.close();
    }
    // Records the export had not reached yet: pruned (501 to 700), deleted (600) or edited (700).
    const hide600 = (storage: RacingAuditStorage) => {
      storage.view = (answer) => ({
        ...answer,
        records: answer.records.filter((r) => r.seq !== 600),
      });
    };
    for (
      const [old, between, refused] of [
        [700, prune, /seq 501 \(deleted: records 501 to 700 are missing\)/],
        [0, hide600, /seq 600 \(deleted/],
        [0, (storage: RacingAuditStorage) => storage.edit(700, false), /seq 700 \(edited/],
      ] as const
    ) {
      const { service, lines, error } = await exported(old, between);
      assert.equal(error?.name, "AuditChainError");
      assert.match(error!.message, refused);
      const stop = Number(/seq (\d+)/.exec(error!.message)![1]);
      assert.equal(lines.filter((l) => l.type === "record").at(-1)!.seq, stop - 1);
      assert.ok(!lines.some((l) => l.type === "checkpoint" && l.seq >= stop - 1), "none signed");
      await service.close();
    }
  });

  it("prunes past a retention time and still verifies from the anchor", async () => {
    const { service, clocks } = auditedService();
    for (let i = 0; i < 4; i++) {
      await service.create({ tenantId: "t", name: `k${i}`, scopes: SCOPES });
      clocks.advance(DAY);
    }
    assert.equal(await service.pruneAuditLog("t", new Date(clocks.now - 2 * DAY)), 2);
    assert.deepEqual(await service.verifyAuditLog("t").then((a) => a.ok && a.checked), 2);
    // From a pruned record: from the first kept one, as an export does (pruned is not deleted).
    for (const fromSeq of [1, 2, 3]) {
      assert.deepEqual(
        await service.verifyAuditLog("t", { fromSeq }).then((a) => a.ok && a.checked),
        2,
      );
    }
    await assert.rejects(service.pruneAuditLog("t", new Date(Number.NaN)), TypeError);
    // Valid Dates out of the instants the service reads: the same TypeError, nothing pruned.
    for (const ms of [8.64e15, Date.parse("-000001-01-01T00:00:00Z")]) {
      await assert.rejects(service.pruneAuditLog("t", new Date(ms)), TypeError, String(ms));
    }
    assert.deepEqual(await service.verifyAuditLog("t").then((a) => a.ok && a.checked), 2);
  });

  it("never records a raw key, secret, hash or pepper", async () => {
    const { service, storage } = auditedService({ checkpointEvery: 2 });
    const created = await service.create({ tenantId: "t", name: "n", scopes: SCOPES });
    const rotated = await service.rotate(created.id);
    await service.revoke(rotated.id, { actor: "x" });
    const secrets = [created.key, rotated.key, PEPPER_1, CHECKPOINT_KEY];
    for (const id of [created.id, rotated.id]) {
      const record = (await storage.findById(id))!;
      secrets.push(record.hash, created.key.split("_").at(-1)!, rotated.key.split("_").at(-1)!);
    }
    const exported = (await collect(service.exportAuditLog("t"))).join("");
    const page = JSON.stringify(await service.auditLog("t", { limit: 100 }));
    for (const secret of secrets) {
      assert.ok(!exported.includes(secret), "the export holds no secret");
      assert.ok(!page.includes(secret), "the log holds no secret");
    }
  });

  it("throws a TypeError without the option", async () => {
    const { service } = makeService();
    await assert.rejects(service.auditLog("t"), /needs ApiKeysServiceOptions.audit/);
    await assert.rejects(collect(service.exportAuditLog("t")), TypeError);
  });

  it("counts records since the last checkpoint for at most 10,000 tenants: past that, the longest-counted is checkpointed as it is dropped (never left uncounted)", async () => {
    const { access, read } = twoRecordChains();
    const emitted: string[] = [];
    const log = new AuditLog(
      access,
      { checkpointKey: CHECKPOINT_KEY, checkpointEvery: 2, checkpointIntervalMs: 86_400_000 },
      () => new Date(0),
      (event) => {
        if (event.type === "api_key.audit_checkpoint") emitted.push(event.checkpoint.tenantId);
      },
      "audit",
    );
    log.appended("t0");
    for (let i = 1; i < 10_000; i++) log.appended(`t${i}`);
    await log.settled();
    assert.deepEqual(emitted, [], "10,000 tenants counted, none due");
    // t10000 drops t0, whose record is not checkpointed yet: t0 is checkpointed now.
    log.appended("t10000");
    await log.settled();
    assert.deepEqual(emitted, ["t0"]);
    // t0 again drops t1 (checkpointed as it goes); t0 counts from 1.
    log.appended("t0");
    await log.settled();
    assert.deepEqual(emitted, ["t0", "t1"]);
    // t10000 is still counted: its second record signs a checkpoint.
    log.appended("t10000");
    await log.settled();
    assert.deepEqual(emitted, ["t0", "t1", "t10000"]);
    assert.deepEqual(read.toSorted(), ["t0", "t1", "t10000"]);
    // 10,001 tenants writing in turn: each record drops a tenant, which is checkpointed (none
    // goes uncheckpointed for lack of room to count it).
    emitted.length = 0;
    for (let i = 2; i < 12; i++) log.appended(`u${i}`);
    await log.settled();
    assert.equal(emitted.length, 10);
  });

  it("remembers the last checkpoint it signed for at most 10,000 tenants: past that, the oldest is verified from the start again", async () => {
    const { log, read, readsAfter } = twoRecordChains();
    for (let i = 0; i <= 10_000; i++) await log.checkpoint(`t${i}`);
    read.length = 0;
    readsAfter.length = 0;
    for (const tenantId of ["t1", "t0", "t10000"]) await log.checkpoint(tenantId);
    // t0 was forgotten for t10000: from the start; the others from their checkpoint's record.
    assert.deepEqual(read, ["t1", "t0", "t10000"]);
    assert.deepEqual(readsAfter, [1, 0, 1]);
  });

  it("refusedVerifications: one record per key and hour with the refusals by code, actor system; off by default", async () => {
    const info = console.info;
    console.info = () => {};
    const make = (refusedVerifications?: boolean) =>
      makeService({
        audit: { checkpointKey: CHECKPOINT_KEY, refusedVerifications },
        usage: { flushIntervalMs: 3_600_000 },
      });
    try {
      for (const on of [true, false]) {
        const { service } = make(on ? true : undefined);
        const { id, key } = await service.create({ tenantId: "t", name: "ci", scopes: SCOPES });
        await service.verify(key);
        await service.revoke(id);
        for (let i = 0; i < 3; i++) await assert.rejects(service.verify(key));
        await service.close();
        const { records } = await service.auditLog("t");
        const refused = records.filter((r) => r.action === "key.verifications_refused");
        assert.deepEqual(
          refused.map((r) => [r.actor, r.outcome, r.keyId, r.changes]),
          on
            ? [["system", "refused", id, {
              hour: { before: null, after: "2030-01-01T00:00:00.000Z" },
              refused: { before: null, after: { api_key_revoked: 3 } },
            }]]
            : [],
        );
        assert.equal((await service.verifyAuditLog("t")).ok, true);
      }
      assert.throws(
        () => makeService({ audit: { checkpointKey: CHECKPOINT_KEY, refusedVerifications: true } }),
        /refusedVerifications needs/,
      );
      assert.throws(
        () =>
          makeService({
            audit: { checkpointKey: CHECKPOINT_KEY, refusedVerifications: "yes" as never },
          }),
        /refusedVerifications must be a boolean/,
      );
    } finally {
      console.info = info;
    }
  });
  it("close() waits for the records written in the background (a slow storage loses none)", async () => {
    const info = console.info;
    console.info = () => {};
    try {
      const storage = new InMemoryApiKeyStorage();
      const append = storage.appendAudit.bind(storage);
      storage.appendAudit = async (audit) => {
        await new Promise((resolve) => setTimeout(resolve, 50));
        return await append(audit);
      };
      const { service } = makeService({
        storage,
        audit: { checkpointKey: CHECKPOINT_KEY, refusedVerifications: true },
        usage: { flushIntervalMs: 3_600_000 },
      });
      const { id, key } = await service.create({ tenantId: "t", name: "ci", scopes: SCOPES });
      await service.revoke(id);
      await assert.rejects(service.verify(key));
      await service.close();
      const { records } = await service.auditLog("t");
      assert.deepEqual(
        records.toSorted((a, b) => a.seq - b.seq).map((r) => r.action),
        ["key.created", "key.revoked", "key.verifications_refused"],
      );
      assert.equal((await service.verifyAuditLog("t")).ok, true);
    } finally {
      console.info = info;
    }
  });
});

/**
 * An audit capability holding, for each tenant asked, a chain of two records;
 * it lists the tenant and `afterSeq` of each read.
 */
describe("api_keys/audit/_log.ts: writes outside the change's transaction", () => {
  /** One tenant's chain in memory; `fail` makes appends (or reads) reject while set. */
  function flakyAccess() {
    const rows: StoredAuditRecord[] = [];
    const fail = { append: false, reads: 0 };
    const access = {
      async append(a: AuditAppend): Promise<StoredAuditRecord> {
        if (fail.append) throw new Error("storage deadline exceeded");
        const prevHash = rows.at(-1)?.hash ?? GENESIS_HASH;
        const seq = rows.length + 1;
        const hash = await auditHash(prevHash, a.tenantId, seq, a.at, a.body);
        rows.push({ tenantId: a.tenantId, seq, at: a.at, body: a.body, prevHash, hash });
        return { ...rows.at(-1)! };
      },
      read(q: AuditReadQuery): Promise<AuditReadAnswer> {
        if (fail.reads > 0 && fail.reads--) return Promise.reject(new Error("stalled"));
        const kept = rows.filter((r) =>
          r.seq > (q.afterSeq ?? 0) && r.seq < (q.beforeSeq ?? Infinity)
        );
        const last = rows.at(-1);
        return Promise.resolve({
          records: (q.order === "desc" ? kept.reverse() : kept).slice(0, q.limit),
          state: {
            head: last === undefined ? null : { seq: last.seq, hash: last.hash },
            anchor: { seq: 1, prevHash: GENESIS_HASH },
          },
        });
      },
      prune: undefined,
    };
    const events: ApiKeyAuditCheckpointEvent[] = [];
    const log = new AuditLog(
      access,
      { checkpointKey: CHECKPOINT_KEY, checkpointEvery: 2 },
      () => new Date(0),
      (event) => {
        if (event.type === "api_key.audit_checkpoint") events.push(event);
      },
      "audit",
    );
    const exposed = (keyId: string) =>
      ({
        type: "api_key.exposed",
        at: new Date(0),
        keyId,
        tenantId: "t",
        prefix: "sk_x",
        environment: "live",
        source: "content",
        url: null,
      }) as const;
    const renamed = (actor: string) =>
      log.append(log.entry("t", "key.renamed", { actor }, "app", { id: "k", prefix: "p" }, {}));
    return { rows, fail, log, events, exposed, renamed };
  }

  /** What `run` logs with `console.warn`, `console.error` and `console.info`. */
  async function logged(run: () => Promise<void>): Promise<string[]> {
    const lines: string[] = [];
    const saved = [console.warn, console.error, console.info];
    console.warn = (line: string) => lines.push(`warn ${line}`);
    console.error = (line: string) => lines.push(`error ${line}`);
    console.info = (line: string) => lines.push(`info ${line}`);
    try {
      await run();
    } finally {
      [console.warn, console.error, console.info] = saved;
    }
    return lines;
  }

  it("a background record lost is warned about once per outage, not once per process", async () => {
    const { fail, log, exposed, rows } = flakyAccess();
    const lines = await logged(async () => {
      for (const outage of [["k1", "k2"], ["k3"]]) {
        fail.append = true;
        for (const keyId of outage) log.observe(exposed(keyId));
        await log.settled();
        fail.append = false;
        log.observe(exposed(`${outage[0]}-after`));
        await log.settled();
      }
    });
    assert.equal(rows.length, 2);
    assert.equal(lines.filter((line) => line.startsWith("warn ")).length, 2, lines.join("\n"));
    assert.match(lines[0], /^warn api-keys: audit failed \(Error\)/);
    assert.equal(lines.filter((line) => line.startsWith("info ")).length, 2, lines.join("\n"));
  });

  it("a chain an automatic checkpoint finds broken is logged each time it is found, after an outage too, a checkpoint due every checkpointEvery records still (not re-verified at each)", async () => {
    const { fail, log, rows, events, exposed, renamed } = flakyAccess();
    const lines = await logged(async () => {
      fail.append = true;
      log.observe(exposed("k1"));
      await log.settled();
      fail.append = false;
      await renamed("a");
      rows[0] = { ...rows[0], body: rows[0].body.replace('"actor":"a"', '"actor":"mallory"') };
      for (const actor of ["b", "c", "d", "e", "f", "g"]) {
        await renamed(actor);
        await log.settled();
      }
    });
    assert.deepEqual(events, []);
    // A checkpoint at records 2, 4 and 6 (checkpointEvery 2): each finds the chain broken.
    const broken = lines.filter((line) => line.startsWith("error "));
    assert.equal(broken.length, 3, lines.join("\n"));
    for (const line of broken) {
      assert.equal(
        line,
        'error api-keys: the audit checkpoint of tenant "t" found the chain broken: ' +
          "the audit chain does not verify at seq 1 (edited: the record's content does not match its hash)",
      );
    }
  });

  it("counts the records since the last checkpoint until one succeeds: a failed one is tried again at the next record", async () => {
    const { fail, log, events, renamed } = flakyAccess();
    await logged(async () => {
      fail.reads = 1;
      await renamed("a");
      await renamed("b");
      await log.settled();
      assert.deepEqual(events, []);
      await renamed("c");
      await log.settled();
    });
    assert.deepEqual(events.map((e) => e.checkpoint.seq), [3]);
    // Counted again from that checkpoint: the next one comes two records later.
    await renamed("d");
    await log.settled();
    assert.equal(events.length, 1);
    await renamed("e");
    await log.settled();
    assert.deepEqual(events.map((e) => e.checkpoint.seq), [3, 5]);
  });
});

function twoRecordChains() {
  const read: string[] = [];
  const readsAfter: number[] = [];
  const chains = new Map<string, Promise<StoredAuditRecord[]>>();
  const chainOf = async (tenantId: string) => {
    const records: StoredAuditRecord[] = [];
    let prevHash = GENESIS_HASH;
    for (const seq of [1, 2]) {
      const [at, body] = [new Date(0), "{}"];
      const hash = await auditHash(prevHash, tenantId, seq, at, body);
      records.push({ tenantId, seq, at, body, prevHash, hash });
      prevHash = hash;
    }
    return records;
  };
  const access = {
    append: () => Promise.reject(new Error("not used")),
    read: async ({ tenantId, order, afterSeq = 0 }: AuditReadQuery) => {
      read.push(tenantId);
      readsAfter.push(afterSeq);
      if (!chains.has(tenantId)) chains.set(tenantId, chainOf(tenantId));
      const records = await chains.get(tenantId)!;
      return {
        records: order === "asc" ? records.filter((r) => r.seq > afterSeq) : [],
        state: {
          head: { seq: 2, hash: records[1].hash },
          anchor: { seq: 1, prevHash: GENESIS_HASH },
        },
      };
    },
    prune: undefined,
  };
  // A log over them with the defaults, no events.
  const log = new AuditLog(
    access,
    { checkpointKey: CHECKPOINT_KEY },
    () => new Date(0),
    undefined,
    "audit",
  );
  return { access, read, readsAfter, log };
}

/** `value` with its object keys sorted (canonical JSON without dates). */
function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value).sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => [k, sortKeys(v)]),
  );
}
