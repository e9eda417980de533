/**
 * The audit capability of `PrismaApiKeyStorage` on a real PostgreSQL
 * (migration 0017): the storage contract, one statement added per audited
 * change inside its transaction, a failed change leaving no record, and
 * tampering by the database owner (UPDATE, DELETE, an inserted row, a
 * swapped pair, a truncated tail, a last row re-hashed) each found and named,
 * a chain rewritten after a checkpoint neither signed nor exported again
 * (also from a later record), a range to `toSeq` reaching it (record
 * `toSeq + 1` linking to it), no false alarm from appends during a verify or
 * a checkpoint, concurrent renames recorded with the names they replaced;
 * pruning keeps the chain verifiable, two prunes at once never moving the
 * anchor back; a read answers its records and the head of one snapshot,
 * also when another connection commits an append or a prune during it; a
 * leak report's unstorable `source` recorded as "unknown".
 * Skips without `DATABASE_URL`; fails under `CI=true`.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  ApiKeysService,
  type ApiKeysServiceOptions,
  PrismaApiKeyStorage,
  runApiKeyStorageContract,
} from "../../api_keys/mod.ts";
import {
  auditHash,
  canonicalJson,
  signCheckpoint,
  verifyAuditChain,
} from "../../api_keys/audit/chain.ts";
import { serviceHooks } from "../../api_keys/_service_hooks.ts";
import type { AuditAppend, AuditReadQuery, AuditVerification } from "../../api_keys/audit/types.ts";
import { storedRecord } from "../api_keys/storage/stored_record.ts";
import { createPrismaClient, databaseReady, probeDatabase } from "./prisma_client.ts";
import pg from "pg";
import { createSecretScanningPartnerHandler } from "../../api_keys/leaks/mod.ts";
import { createSigner } from "../api_keys/leaks/github_signer.ts";
import { PRUNE_AUDIT_SQL, readAuditParams, readAuditSql } from "../../api_keys/audit/_sql.ts";

const url = Deno.env.get("DATABASE_URL");
const unavailable = await probeDatabase(url);
const SECRET = "an-audit-key-of-at-least-thirty-two-bytes";

if (databaseReady("the audit log on PostgreSQL", unavailable)) {
  const prisma = await createPrismaClient(url!);
  const storage = new PrismaApiKeyStorage(prisma, { audit: prisma });
  after(() => prisma.$disconnect());

  const entry = (tenantId: string, keyId: string, action = "key.created"): AuditAppend => ({
    tenantId,
    body: canonicalJson({ v: 1, action, actor: "pg", keyId, changes: {} }),
    at: new Date(),
    keyId,
    actor: "pg",
    action: action as AuditAppend["action"],
  });
  /** A tenant with `n` records. */
  const chainOf = async (n: number): Promise<string> => {
    const tenantId = `pg-audit-${crypto.randomUUID()}`;
    for (let i = 1; i <= n; i++) await storage.appendAudit!(entry(tenantId, `k${i}`));
    return tenantId;
  };
  const verify = async (tenantId: string, checkpoint?: { seq: number; hash: string }) => {
    const { records, state } = await storage.readAudit!({ tenantId, order: "asc", limit: 1_000 });
    return await verifyAuditChain(records, { tenantId, ...state, checkpoint });
  };
  const problem = (answer: AuditVerification) =>
    answer.ok ? "ok" : `${answer.problem} ${answer.seq}`;
  const sql = (query: string, ...values: unknown[]) => prisma.$executeRawUnsafe(query, ...values);
  /**
   * Waits until a session waits on a lock of the backend `pid` (and `also()` holds), within 10 s
   * (`what` names the wait in the failure).
   */
  const blockedBy = async (pid: number, what: string, also = () => true) => {
    const until = Date.now() + 10_000;
    for (;;) {
      const [{ n }] = await prisma.$queryRawUnsafe(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1::int = ANY(pg_blocking_pids(pid))",
        pid,
      ) as { n: number }[];
      if (n > 0 && also()) return;
      assert.ok(Date.now() < until, what);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  };
  /** Edits record 3 of `tenantId` (its `k3` made `k9`) with its hash recomputed, its row only. */
  const editThird = async (tenantId: string) => {
    const { records } = await storage.readAudit!({ tenantId, order: "asc", limit: 100 });
    const third = records[2];
    const body = third.body.replace("k3", "k9");
    await sql(
      "UPDATE api_key_audit SET body = $2, hash = $3 WHERE tenant_id = $1 AND seq = 3",
      tenantId,
      body,
      await auditHash(third.prevHash, tenantId, 3, third.at, body),
    );
  };
  /** A stored record of `tenantId` with a fresh id and prefix. */
  const sample = (tenantId: string) => {
    const id = crypto.randomUUID();
    return storedRecord({ id, tenantId, prefix: id.replaceAll("-", "").slice(0, 12) });
  };

  const PEPPER = "postgres-audit-pepper-0123456789abcdef";
  /** A service over `storage` (or `options.storage`) with the audit log, its start-up line silenced. */
  const auditedService = (options: Partial<ApiKeysServiceOptions> = {}) => {
    const info = console.info;
    console.info = () => {};
    try {
      return new ApiKeysService({
        peppers: { 1: PEPPER },
        storage,
        cache: false,
        ...options,
        audit: { checkpointKey: SECRET, ...options.audit },
      });
    } finally {
      console.info = info;
    }
  };

  describe("the audit capability of PrismaApiKeyStorage on PostgreSQL", () => {
    runApiKeyStorageContract(async () => {
      await sql('TRUNCATE TABLE "api_keys", "api_key_audit", "api_key_audit_heads"');
      return new PrismaApiKeyStorage(prisma, { audit: prisma });
    }, it);

    it("an audited create or revoke sends one statement more, inside the change's transaction", async () => {
      const sent: string[] = [];
      const counted = (target: object, label: string) =>
        new Proxy(target, {
          get(object, name) {
            const value = Reflect.get(object, name);
            if (typeof value !== "function") return value;
            return (...args: unknown[]) => {
              sent.push(`${label}.${String(name)}`);
              return value.apply(object, args);
            };
          },
        });
      const client = {
        apiKey: counted(prisma.apiKey, "apiKey"),
        $transaction: <T>(fn: (tx: never) => Promise<T>) =>
          prisma.$transaction!((tx) =>
            fn(
              {
                apiKey: counted(tx.apiKey, "apiKey"),
                $queryRawUnsafe: (counted(tx, "tx") as typeof prisma).$queryRawUnsafe,
              } as never,
            )
          ),
        $queryRawUnsafe: prisma.$queryRawUnsafe.bind(prisma),
        $executeRawUnsafe: prisma.$executeRawUnsafe.bind(prisma),
      };
      const audited = new PrismaApiKeyStorage(client as never, { audit: client });
      const plain = new PrismaApiKeyStorage(client as never);
      const tenantId = `pg-audit-${crypto.randomUUID()}`;
      const [a, b] = [sample(tenantId), sample(tenantId)];
      await plain.insert(a);
      await plain.markRevokedIfActive(a.id, new Date());
      const unaudited = sent.splice(0);
      await audited.insert(b, entry(tenantId, b.id));
      await audited.markRevokedIfActive(b.id, new Date(), entry(tenantId, b.id, "key.revoked"));
      assert.deepEqual(unaudited, ["apiKey.create", "apiKey.update"]);
      assert.deepEqual(sent, [
        "apiKey.create",
        "tx.$queryRawUnsafe",
        "apiKey.update",
        "tx.$queryRawUnsafe",
      ]);
      assert.equal(problem(await verify(tenantId)), "ok");
    });

    it("a change whose transaction fails leaves no record (and no gap)", async () => {
      const tenantId = await chainOf(1);
      const key = sample(tenantId);
      await storage.insert(key, entry(tenantId, key.id));
      const clash = { ...sample(tenantId), prefix: key.prefix };
      await assert.rejects(storage.insert(clash, entry(tenantId, clash.id)));
      await storage.appendAudit!(entry(tenantId, "after"));
      const { records } = await storage.readAudit!({ tenantId, order: "asc", limit: 100 });
      assert.deepEqual(records.map((r) => JSON.parse(r.body).keyId), ["k1", key.id, "after"]);
      assert.deepEqual(records.map((r) => r.seq), [1, 2, 3]);
    });

    it("finds and names an UPDATE, a DELETE, an inserted row and a swapped pair", async () => {
      const edited = await chainOf(5);
      await sql(
        `UPDATE api_key_audit SET body = replace(body, 'k3', 'k9') WHERE tenant_id = $1 AND seq = 3`,
        edited,
      );
      assert.equal(problem(await verify(edited)), "edited 3");

      const deleted = await chainOf(5);
      await sql("DELETE FROM api_key_audit WHERE tenant_id = $1 AND seq = 2", deleted);
      assert.equal(problem(await verify(deleted)), "deleted 2");

      const inserted = await chainOf(3);
      await sql(
        `INSERT INTO api_key_audit (tenant_id, seq, at, body, prev_hash, hash)
         SELECT tenant_id, 4, at, body, hash, hash FROM api_key_audit WHERE tenant_id = $1 AND seq = 3`,
        inserted,
      );
      assert.equal(problem(await verify(inserted)), "inserted 4");

      const swapped = await chainOf(5);
      await sql(
        // Through seqs far above the chain's (migration 0028 refuses a seq below 1).
        `UPDATE api_key_audit SET seq = CASE seq WHEN 2 THEN 1000003 ELSE 1000002 END
         WHERE tenant_id = $1 AND seq IN (2, 3)`,
        swapped,
      );
      await sql(
        "UPDATE api_key_audit SET seq = seq - 1000000 WHERE tenant_id = $1 AND seq > 1000000",
        swapped,
      );
      assert.equal(problem(await verify(swapped)), "reordered 2");
    });

    it("finds a truncated tail against the head, and against a checkpoint when the head is rewritten too", async () => {
      const tenantId = await chainOf(6);
      const { records } = await storage.readAudit!({ tenantId, order: "asc", limit: 100 });
      const checkpoint = await signCheckpoint(SECRET, tenantId, 6, records[5].hash, new Date());
      await sql("DELETE FROM api_key_audit WHERE tenant_id = $1 AND seq > 4", tenantId);
      assert.equal(problem(await verify(tenantId)), "truncated 5");
      await sql(
        "UPDATE api_key_audit_heads SET seq = 4, hash = $2 WHERE tenant_id = $1",
        tenantId,
        records[3].hash,
      );
      assert.equal(problem(await verify(tenantId)), "ok", "without a checkpoint nothing shows");
      assert.equal(problem(await verify(tenantId, checkpoint)), "truncated 5");
    });

    it("through the service: a failed rotation leaves no record; no record or export holds a secret", async () => {
      const service = auditedService({ audit: { checkpointKey: SECRET, checkpointEvery: 2 } });
      const tenantId = `pg-audit-${crypto.randomUUID()}`;
      const scopes = [{ resource: "orders", level: "read" as const }];
      const created = await service.create({ tenantId, name: "n", scopes }, { actor: "alice" });
      const rotated = await service.rotate(created.id, { gracePeriodMs: 60_000 });
      await assert.rejects(service.rotate(created.id), { code: "api_key_not_rotatable" });
      await service.revokeForTenant(tenantId, rotated.id, { actor: "bob" });
      const page = await service.auditLog(tenantId, { limit: 100 });
      assert.deepEqual(page.records.map((r) => [r.seq, r.action, r.actor]), [
        [3, "key.revoked", "bob"],
        [2, "key.rotated", "app"],
        [1, "key.created", "alice"],
      ]);
      const lines: string[] = [];
      for await (const line of service.exportAuditLog(tenantId)) lines.push(line);
      const secrets = [created.key, rotated.key, PEPPER, SECRET];
      for (const id of [created.id, rotated.id]) secrets.push((await storage.findById(id))!.hash);
      const { records } = await storage.readAudit!({ tenantId, order: "asc", limit: 100 });
      const everything = JSON.stringify([page, records]) + lines.join("");
      for (const secret of secrets) assert.ok(!everything.includes(secret), "no secret recorded");
      assert.equal((await service.verifyAuditLog(tenantId)).ok, true);
    });

    it("the head's hash: a last row edited with its hash recomputed, the heads row left, is edited", async () => {
      const tenantId = await chainOf(3);
      await editThird(tenantId);
      assert.equal(problem(await verify(tenantId)), "edited 3");
    });

    it("through the service: a row edited into a form no writer makes (a hash in upper case, a prev_hash with a space, at infinity, the head's hash in upper case) is named edited, never a storage outage; the automatic checkpoint logs the chain broken", async () => {
      const service = auditedService({ audit: { checkpointKey: SECRET, checkpointEvery: 1 } });
      const scopes = [{ resource: "orders", level: "read" as const }];
      const edits = [
        ["api_key_audit", "hash = upper(hash)", "edited 2"],
        ["api_key_audit", "prev_hash = prev_hash || ' '", "edited 2"],
        ["api_key_audit", "at = 'infinity'", "edited 2"],
        ["api_key_audit_heads", "hash = upper(hash)", "edited 3"],
      ];
      const logged: string[] = [];
      const { error, warn } = console;
      console.error = console.warn = (line: string) => void logged.push(line);
      try {
        for (const [table, set, named] of edits) {
          const tenantId = await chainOf(3);
          await sql(
            `UPDATE ${table} SET ${set} WHERE tenant_id = $1${
              table === "api_key_audit" ? " AND seq = 2" : ""
            }`,
            tenantId,
          );
          assert.equal(problem(await service.verifyAuditLog(tenantId)), named, set);
          await assert.rejects(service.auditCheckpoint(tenantId), { name: "AuditChainError" }, set);
          const page = service.auditLog(tenantId, { limit: 5 });
          if (set.startsWith("at")) {
            // The record cannot be shown: the page names it, as verify does.
            await assert.rejects(page, {
              name: "AuditChainError",
              message: /seq 2 \(edited: the record's time cannot be read\)/,
            });
          } else assert.equal((await page).records.length, 3, set);
          logged.length = 0;
          await service.create({ tenantId, name: "k4", scopes }); // its record: a checkpoint
          await service.close(); // waits for it
          assert.ok(logged.some((line) => line.includes("found the chain broken")), set);
          assert.ok(!logged.some((line) => line.includes("audit failed")), set);
        }
      } finally {
        Object.assign(console, { error, warn });
        await service.close();
      }
    });

    it("through the service: a rotate committing after storageTimeoutMs (the old key's row locked elsewhere) answers 503, then emits api_key.rotated once as it lands, the audit holding key.rotated once; the new key rotates for a secret", async () => {
      const events: string[] = [];
      const service = auditedService({
        storageTimeoutMs: 300,
        onEvent: (event) => void events.push(event.type),
      });
      const tenantId = `pg-audit-${crypto.randomUUID()}`;
      const scopes = [{ resource: "orders", level: "read" as const }];
      const { id } = await service.create({ tenantId, name: "n", scopes });
      const locker = new pg.Client({ connectionString: url });
      await locker.connect();
      try {
        await locker.query("BEGIN");
        await locker.query("SELECT 1 FROM api_keys WHERE id = $1 FOR UPDATE", [id]);
        events.length = 0;
        await assert.rejects(service.rotate(id, { gracePeriodMs: 60_000 }), {
          name: "ApiKeyStorageError",
        });
        assert.deepEqual(events, []);
        await locker.query("COMMIT"); // the rotation commits now, late
      } finally {
        await locker.end();
      }
      for (let i = 0; i < 100 && events.length === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.deepEqual(events, ["api_key.rotated"]);
      const page = await service.auditLog(tenantId, { limit: 10 });
      assert.deepEqual(page.records.map((r) => r.action), ["key.rotated", "key.created"]);
      const successor = (await service.list(tenantId)).find((k) => k.id !== id)!;
      const again = await service.rotate(successor.id);
      assert.equal((await service.verify(again.key)).keyId, again.id);
      await service.close();
    });

    it("through the service: appends during a verify of several pages raise no alarm; a row past the head is inserted", async () => {
      const service = auditedService({
        audit: { checkpointKey: SECRET, checkpointEvery: 100_000 },
      });
      const tenantId = `pg-audit-${crypto.randomUUID()}`;
      const rows = Array.from({ length: 1_100 }, (_, i) => i + 1);
      // 1,100 records (three pages) written by the SQL function in one statement.
      await sql(
        "SELECT api_key_audit_append($1::text, b) FROM unnest($2::text[]) AS b",
        tenantId,
        rows.map((n) => canonicalJson({ v: 1, action: "key.created", actor: "pg", n })),
      );
      // Each verify runs beside appends on other connections.
      for (let round = 0; round < 5; round++) {
        const [answer] = await Promise.all([
          service.verifyAuditLog(tenantId),
          (async () => {
            for (let i = 0; i < 5; i++) {
              await storage.appendAudit!(entry(tenantId, `r${round}.${i}`));
            }
          })(),
        ]);
        assert.equal(problem(answer), "ok", `round ${round}`);
      }
      const { head } = (await storage.readAudit!({ tenantId, order: "desc", limit: 1 })).state;
      await sql(
        `INSERT INTO api_key_audit (tenant_id, seq, at, body, prev_hash, hash)
         SELECT tenant_id, seq + 1, at, body, hash, hash FROM api_key_audit WHERE tenant_id = $1 AND seq = $2`,
        tenantId,
        head!.seq,
      );
      assert.equal(problem(await service.verifyAuditLog(tenantId)), `inserted ${head!.seq + 1}`);
      await service.close();
    });

    it("through the service: pruneAuditLog before a valid Date out of the instants the service reads is a TypeError, never a storage error (22008); nothing pruned", async () => {
      const service = auditedService();
      const tenantId = `pg-audit-${crypto.randomUUID()}`;
      await service.create({ tenantId, name: "a", scopes: [{ resource: "o", level: "read" }] });
      for (const ms of [8.64e15, Date.parse("-000001-01-01T00:00:00Z")]) {
        await assert.rejects(service.pruneAuditLog(tenantId, new Date(ms)), TypeError, String(ms));
      }
      assert.equal((await service.auditLog(tenantId)).records.length, 1);
      await service.close();
    });

    it("through the service: renames of one key at once record the names each replaced", async () => {
      const service = auditedService();
      const tenantId = `pg-audit-${crypto.randomUUID()}`;
      const scopes = [{ resource: "orders", level: "read" as const }];
      const { id } = await service.create({ tenantId, name: "a", scopes });
      const hooks = serviceHooks(service)!;
      await Promise.all(
        ["b", "c", "d", "e"].map((name) => hooks.renameForTenant!(tenantId, id, name)),
      );
      const { records } = await service.auditLog(tenantId, { action: "key.renamed" });
      const steps = records.reverse().map((r) =>
        r.changes.name as { before: string; after: string }
      );
      assert.equal(steps.length, 4);
      assert.equal(steps[0].before, "a");
      for (let i = 1; i < steps.length; i++) {
        assert.equal(steps[i].before, steps[i - 1].after, JSON.stringify(steps));
      }
      assert.equal(steps[3].after, (await storage.findById(id))!.name);
      await service.close();
    });

    it("refused-verification aggregates: one record per key and hour in the chain, filtered by action", async () => {
      const service = auditedService({
        storage: new PrismaApiKeyStorage(prisma, { audit: prisma, usage: prisma }),
        usage: { flushIntervalMs: 3_600_000 },
        audit: { checkpointKey: SECRET, refusedVerifications: true },
      });
      const tenantId = `pg-audit-${crypto.randomUUID()}`;
      const scopes = [{ resource: "orders", level: "read" as const }];
      const { id, key } = await service.create({ tenantId, name: "n", scopes });
      await service.revoke(id);
      for (let i = 0; i < 4; i++) await assert.rejects(service.verify(key));
      await service.close();
      let page;
      for (let i = 0; i < 50; i++) {
        page = await service.auditLog(tenantId, { action: "key.verifications_refused" });
        if (page.records.length > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.deepEqual(page!.records.map((r) => [r.seq, r.keyId, r.outcome, r.changes.refused]), [
        [3, id, "refused", { before: null, after: { api_key_revoked: 4 } }],
      ]);
      assert.equal((await service.verifyAuditLog(tenantId)).ok, true);
    });

    it("through the service: a chain rewritten in SQL after a checkpoint (every hash and the head row) is not signed again; checkpoints beside appends are never refused", async () => {
      const service = auditedService({ audit: { checkpointKey: SECRET, checkpointEvery: 2 } });
      const tenantId = await chainOf(4);
      assert.equal((await service.auditCheckpoint(tenantId))?.seq, 4);
      // The database owner rewrites records 2 to 4 from an edited record 2, hashes recomputed.
      const { records } = await storage.readAudit!({ tenantId, order: "asc", limit: 100 });
      let prevHash = records[0].hash;
      for (const record of records.slice(1)) {
        const body = record.seq === 2 ? record.body.replace("k2", "k9") : record.body;
        const hash = await auditHash(prevHash, tenantId, record.seq, record.at, body);
        await sql(
          "UPDATE api_key_audit SET body = $3, prev_hash = $4, hash = $5 WHERE tenant_id = $1 AND seq = $2",
          tenantId,
          record.seq,
          body,
          prevHash,
          hash,
        );
        prevHash = hash;
      }
      await sql(
        "UPDATE api_key_audit_heads SET hash = $2 WHERE tenant_id = $1",
        tenantId,
        prevHash,
      );
      assert.equal(problem(await service.verifyAuditLog(tenantId)), "ok", "consistent on its own");
      const refused =
        /does not verify at seq 4 \(edited: the record's hash is not the checkpoint's\)/;
      await assert.rejects(service.auditCheckpoint(tenantId), refused);
      const lines: string[] = [];
      await assert.rejects(async () => {
        for await (const line of service.exportAuditLog(tenantId)) lines.push(line);
      }, refused);
      assert.ok(!lines.some((line) => line.includes('"checkpoint"') && line.includes('"seq":4')));
      await service.close();
      // Appends on other connections during each checkpoint: by an instance that remembers its
      // last one, and by new ones verifying from the anchor.
      const other = await chainOf(1_100);
      const kept = auditedService();
      for (let round = 0; round < 4; round++) {
        for (const signer of [kept, auditedService()]) {
          const [checkpoint] = await Promise.all([
            signer.auditCheckpoint(other),
            (async () => {
              for (let i = 0; i < 5; i++) {
                await storage.appendAudit!(entry(other, `r${round}.${i}`));
              }
            })(),
          ]);
          assert.ok(checkpoint !== null && checkpoint.seq >= 1_100, `round ${round}`);
          if (signer !== kept) await signer.close();
        }
      }
      await kept.close();
    });

    it("through the service: an export or a verify from past a checkpoint walks from it (a rewrite behind it refused); a range to toSeq must reach it", async () => {
      const service = auditedService({ audit: { checkpointKey: SECRET, checkpointEvery: 1_000 } });
      const tenantId = await chainOf(4);
      const kept = (await service.auditCheckpoint(tenantId))!;
      for (let i = 5; i <= 8; i++) await storage.appendAudit!(entry(tenantId, `k${i}`));
      // The database owner rewrites records 2 to 8 from an edited record 2, and the head row.
      const { records } = await storage.readAudit!({ tenantId, order: "asc", limit: 100 });
      let prevHash = records[0].hash;
      for (const record of records.slice(1)) {
        const body = record.seq === 2 ? record.body.replace("k2", "k9") : record.body;
        const hash = await auditHash(prevHash, tenantId, record.seq, record.at, body);
        await sql(
          "UPDATE api_key_audit SET body = $3, prev_hash = $4, hash = $5 WHERE tenant_id = $1 AND seq = $2",
          tenantId,
          record.seq,
          body,
          prevHash,
          hash,
        );
        prevHash = hash;
      }
      await sql(
        "UPDATE api_key_audit_heads SET hash = $2 WHERE tenant_id = $1",
        tenantId,
        prevHash,
      );
      const lines: string[] = [];
      await assert.rejects(async () => {
        for await (const line of service.exportAuditLog(tenantId, 6)) lines.push(line);
      }, /does not verify at seq 4 \(edited: the record's hash is not the checkpoint's\)/);
      assert.deepEqual(lines, []);
      const from6 = await service.verifyAuditLog(tenantId, { fromSeq: 6, checkpoint: kept });
      assert.equal(problem(from6), "edited 4");
      const stringly = { ...kept, seq: String(kept.seq) as unknown as number };
      const refused = await service.verifyAuditLog(tenantId, { checkpoint: stringly });
      assert.equal(!refused.ok && refused.problem, "checkpoint_invalid");
      // Records 7 and 8 deleted, the heads row (8) left: a range to 6, 7 or 8 finds them missing
      // (to 6: record 7 must link to record 6).
      const cut = await chainOf(8);
      await sql("DELETE FROM api_key_audit WHERE tenant_id = $1 AND seq >= 7", cut);
      const answers = [undefined, 8, 7, 6].map((toSeq) =>
        service.verifyAuditLog(cut, toSeq === undefined ? {} : { toSeq })
      );
      assert.deepEqual((await Promise.all(answers)).map(problem), [
        "truncated 7",
        "truncated 7",
        "truncated 7",
        "truncated 7",
      ]);
      await service.close();
    });

    it("readAudit reads the records and the head in one statement: an append or a prune committed by another connection during the read never splits them", async () => {
      // Statements sent by the storage's audit client, each with whether it has settled.
      const sent: { sql: string; settled: boolean }[] = [];
      const client = {
        $queryRawUnsafe: (query: string, ...values: unknown[]) => {
          const statement = { sql: query, settled: false };
          sent.push(statement);
          const answer = prisma.$queryRawUnsafe(query, ...values);
          answer.then(() => statement.settled = true, () => statement.settled = true);
          return answer;
        },
        $executeRawUnsafe: prisma.$executeRawUnsafe.bind(prisma),
      };
      const counted = new PrismaApiKeyStorage(prisma, { audit: client });
      for (const change of ["append", "prune"] as const) {
        const tenantId = await chainOf(4);
        sent.length = 0;
        // Another connection takes the heads table: a read of the heads row waits for its commit.
        const other = new pg.Client({ connectionString: url });
        await other.connect();
        try {
          const { rows: [{ pid }] } = await other.query("SELECT pg_backend_pid() AS pid");
          await other.query("BEGIN");
          await other.query("LOCK TABLE api_key_audit_heads IN ACCESS EXCLUSIVE MODE");
          const reading = counted.readAudit!({ tenantId, order: "asc", limit: 100 });
          // Until the read waits on the lock and every statement of it not reading the heads
          // row has answered (two statements: the records read before the change commits).
          await blockedBy(
            pid,
            "the read never waited on the heads table",
            () => !sent.some((s) => !s.settled && !s.sql.includes("api_key_audit_heads")),
          );
          if (change === "append") {
            await other.query(
              "SELECT api_key_audit_append($1::text, $2::text)",
              [tenantId, entry(tenantId, "k5").body],
            );
          } else {
            await other.query(PRUNE_AUDIT_SQL, [tenantId, new Date(Date.now() + 60_000)]);
          }
          await other.query("COMMIT");
          const { records, state } = await reading;
          const answer = await verifyAuditChain(records, { tenantId, ...state });
          assert.equal(problem(answer), "ok", `${change}: ${JSON.stringify(state)}`);
          assert.equal(sent.length, 1, `${change}: one statement`);
        } finally {
          await other.end();
        }
      }
    });

    it("through the service: an export meeting a real prune between its pages goes on when the prune dropped only records it emitted, and stops (deleted) when it dropped one it had not reached", async () => {
      for (const [old, refused] of [[300, undefined], [600, /seq 501 \(deleted/]] as const) {
        const tenantId = `pg-audit-${crypto.randomUUID()}`;
        const append = (from: number, to: number) =>
          sql(
            "SELECT api_key_audit_append($1::text, b) FROM unnest($2::text[]) AS b",
            tenantId,
            Array.from({ length: to - from }, (_, i) =>
              canonicalJson({ v: 1, action: "key.created", actor: "pg", n: from + i })),
          );
        // Records 1 to `old`, then (a few ms later by the database clock) the rest up to 1,100.
        await append(0, old);
        await new Promise((resolve) => setTimeout(resolve, 10));
        await append(old, 1_100);
        const [{ at }] = await prisma.$queryRawUnsafe(
          "SELECT at FROM api_key_audit WHERE tenant_id = $1 AND seq = $2",
          tenantId,
          old + 1,
        ) as { at: Date }[];
        // The storage's audit client prunes before `old + 1` as the export reads its second page.
        let reads = 0;
        const client = {
          $queryRawUnsafe: async (query: string, ...values: unknown[]) => {
            if (query.includes("api_key_audit_heads") && values[0] === tenantId && ++reads === 2) {
              await storage.pruneAudit!(tenantId, at);
            }
            return await prisma.$queryRawUnsafe(query, ...values);
          },
          $executeRawUnsafe: prisma.$executeRawUnsafe.bind(prisma),
        };
        const service = auditedService({
          storage: new PrismaApiKeyStorage(prisma, { audit: client }),
          audit: { checkpointKey: SECRET, checkpointEvery: 100 },
        });
        const lines: { type: string; seq: number; prevHash?: string; hash: string }[] = [];
        const error = await (async () => {
          for await (const line of service.exportAuditLog(tenantId)) lines.push(JSON.parse(line));
        })().then(() => undefined, (error: Error) => error);
        const records = lines.filter((l) => l.type === "record");
        if (refused === undefined) {
          assert.equal(error, undefined, String(error?.message));
          assert.deepEqual(
            records.map((r) => r.seq),
            Array.from({ length: 1_100 }, (_, i) => i + 1),
          );
          assert.ok(records.every((r, i) => i === 0 || r.prevHash === records[i - 1].hash));
          assert.deepEqual([lines.at(-1)!.type, lines.at(-1)!.seq], ["checkpoint", 1_100]);
        } else {
          assert.equal(error?.name, "AuditChainError");
          assert.match(error!.message, refused);
          assert.equal(records.at(-1)!.seq, 500);
          assert.ok(!lines.some((l) => l.type === "checkpoint" && l.seq >= 500), "none signed");
        }
        const { state } = await storage.readAudit!({ tenantId, order: "desc", limit: 1 });
        assert.equal(state.anchor.seq, old + 1, "the prune landed between the pages");
        assert.equal(problem(await service.verifyAuditLog(tenantId)), "ok");
        await service.close();
      }
    });

    it("through the service: NUL or a lone surrogate in an actor or a key name is refused before PostgreSQL (whose jsonb refuses them); other text is stored and verifies", async () => {
      const service = auditedService();
      const tenantId = `pg-audit-${crypto.randomUUID()}`;
      const scopes = [{ resource: "orders", level: "read" as const }];
      const { id, key } = await service.create({ tenantId, name: "zoë 🚀", scopes }, {
        actor: "zoë 🚀",
      });
      for (const actor of ["mallory\u0000", "mallory\ud800"]) {
        await assert.rejects(service.revokeForTenant(tenantId, id, { actor }), TypeError);
      }
      await assert.rejects(service.create({ tenantId, name: "deploy \ud83d", scopes }), {
        code: "api_key_invalid_input",
        field: "name",
      });
      assert.equal((await service.verify(key)).keyId, id);
      await service.revokeForTenant(tenantId, id, { actor: "bob" });
      assert.equal((await service.verifyAuditLog(tenantId)).ok, true);
      await service.close();
    });

    it("migration 0028 refuses a row at seq 0 or below (which verify, a checkpoint and an export would read first); applied again, it changes nothing and waits for no append", async () => {
      const schema = `audit_seq_${crypto.randomUUID().replaceAll("-", "")}`;
      const client = new pg.Client({ connectionString: url });
      const writer = new pg.Client({ connectionString: url });
      await client.connect();
      await writer.connect();
      const migration = (name: string) =>
        Deno.readTextFile(
          new URL(`../../prisma/migrations/${name}/migration.sql`, import.meta.url),
        );
      const constraint = async () =>
        (await client.query(
          "SELECT oid, convalidated FROM pg_constraint " +
            "WHERE conrelid = 'api_key_audit'::regclass AND conname = 'api_key_audit_seq_positive'",
        )).rows;
      const insert = (db: pg.Client, tenant: string, seq: number) =>
        db.query(
          "INSERT INTO api_key_audit (tenant_id, seq, at, body, prev_hash, hash) " +
            "VALUES ($1, $2, now(), '{}', repeat('0', 64), repeat('a', 64))",
          [tenant, seq],
        );
      try {
        await client.query(`CREATE SCHEMA ${schema}; SET search_path TO ${schema}`);
        await client.query(await migration("0017_api_key_audit"));
        await client.query(await migration("0028_audit_seq_positive"));
        const [added] = await constraint();
        assert.equal(added.convalidated, true);
        // An append left open: a re-run that took a lock blocking writes would wait for it.
        await writer.query(`SET search_path TO ${schema}; BEGIN`);
        await insert(writer, "w", 1);
        await client.query("SET lock_timeout = '2s'");
        await client.query(await migration("0028_audit_seq_positive"));
        await client.query("RESET lock_timeout");
        await writer.query("ROLLBACK");
        assert.deepEqual(await constraint(), [added], "the constraint is the one added first");
        for (const seq of [0, -1]) {
          await assert.rejects(insert(client, "t", seq), { code: "23514" });
        }
        await insert(client, "t", 1);
      } finally {
        await writer.end();
        await client.query(`DROP SCHEMA ${schema} CASCADE`);
        await client.end();
      }
    });

    it("migration 0028 on a table holding a row at seq 0 fails; once that row is gone, applied again it validates the constraint", async () => {
      const schema = `audit_seq_${crypto.randomUUID().replaceAll("-", "")}`;
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      const sql = await Deno.readTextFile(
        new URL("../../prisma/migrations/0028_audit_seq_positive/migration.sql", import.meta.url),
      );
      try {
        await client.query(`CREATE SCHEMA ${schema}; SET search_path TO ${schema}`);
        await client.query(
          await Deno.readTextFile(
            new URL("../../prisma/migrations/0017_api_key_audit/migration.sql", import.meta.url),
          ),
        );
        await client.query(
          "INSERT INTO api_key_audit (tenant_id, seq, at, body, prev_hash, hash) " +
            "VALUES ('t', 0, now(), '{}', repeat('0', 64), repeat('a', 64))",
        );
        await assert.rejects(client.query(sql), { code: "23514" });
        await client.query("DELETE FROM api_key_audit WHERE seq < 1");
        await client.query(sql);
        const { rows } = await client.query(
          "SELECT convalidated FROM pg_constraint " +
            "WHERE conrelid = 'api_key_audit'::regclass AND conname = 'api_key_audit_seq_positive'",
        );
        assert.deepEqual(rows, [{ convalidated: true }]);
      } finally {
        await client.query(`DROP SCHEMA ${schema} CASCADE`);
        await client.end();
      }
    });

    it("migration 0030: a page filtered by actor or by action reads its index, not the tenant's whole chain", async () => {
      const schema = `audit_filters_${crypto.randomUUID().replaceAll("-", "")}`;
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      const migration = async (name: string) =>
        await client.query(
          await Deno.readTextFile(
            new URL(`../../prisma/migrations/${name}/migration.sql`, import.meta.url),
          ),
        );
      try {
        await client.query(`CREATE SCHEMA ${schema}; SET search_path TO ${schema}`);
        await migration("0017_api_key_audit");
        await migration("0030_api_key_audit_filters");
        await client.query(
          "INSERT INTO api_key_audit (tenant_id, seq, at, body, prev_hash, hash) " +
            "SELECT 't', i, now(), json_build_object('v', 1, 'action', 'key.renamed', " +
            "'actor', 'app', 'keyId', 'k' || (i % 50))::text, repeat('0', 64), repeat('0', 64) " +
            "FROM generate_series(1, 20000) i",
        );
        await client.query("ANALYZE api_key_audit");
        const plan = async (filter: Pick<AuditReadQuery, "actor" | "action">) =>
          (await client.query(
            `EXPLAIN (COSTS OFF) ${readAuditSql("desc")}`,
            readAuditParams({ tenantId: "t", order: "desc", limit: 26, ...filter }),
          )).rows.map((row) => row["QUERY PLAN"]).join("\n");
        assert.match(await plan({ actor: "nobody" }), /api_key_audit_tenant_id_actor_seq_idx/);
        assert.match(
          await plan({ action: "key.exposed" }),
          /api_key_audit_tenant_id_action_seq_idx/,
        );
        // Applied again, it changes nothing.
        await migration("0030_api_key_audit_filters");
      } finally {
        await client.query(`DROP SCHEMA ${schema} CASCADE`);
        await client.end();
      }
    });

    it("through the service: two prunes at once never move the anchor back (an earlier cutoff committing after a later one leaves the later one's anchor); the chain verifies and is signed", async () => {
      const service = auditedService();
      // Records a few ms apart: a cutoff read as a Date (milliseconds) falls between two of them.
      const tenantId = `pg-audit-${crypto.randomUUID()}`;
      for (let i = 1; i <= 6; i++) {
        await storage.appendAudit!(entry(tenantId, `k${i}`));
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      const rows = await prisma.$queryRawUnsafe(
        "SELECT seq::int AS seq, at FROM api_key_audit WHERE tenant_id = $1 ORDER BY seq",
        tenantId,
      ) as { seq: number; at: Date }[];
      const at = (seq: number) => rows.find((r) => r.seq === seq)!.at;
      // Instance A prunes before record 5 in a transaction held open; B prunes before record 3.
      const a = new pg.Client({ connectionString: url });
      await a.connect();
      try {
        const { rows: [{ pid }] } = await a.query("SELECT pg_backend_pid() AS pid");
        await a.query("BEGIN");
        assert.equal((await a.query(PRUNE_AUDIT_SQL, [tenantId, at(5)])).rows[0].n, 4);
        const b = service.pruneAuditLog(tenantId, at(3));
        await blockedBy(pid, "B's prune never waited on A's");
        await a.query("COMMIT");
        assert.equal(await b, 0);
      } finally {
        await a.end();
      }
      const { state } = await storage.readAudit!({ tenantId, order: "desc", limit: 1 });
      assert.deepEqual([state.anchor.seq, state.head?.seq], [5, 6]);
      assert.equal(problem(await service.verifyAuditLog(tenantId)), "ok");
      assert.equal((await service.auditCheckpoint(tenantId))?.seq, 6);
      await service.close();
    });

    it("through the service: a range to toSeq before the head finds its last record edited with its hash recomputed (the next record's link), without answering the next record", async () => {
      const service = auditedService();
      const tenantId = await chainOf(6);
      await editThird(tenantId);
      const ranges = [{}, { toSeq: 3 }, { fromSeq: 2, toSeq: 3 }, { fromSeq: 3, toSeq: 3 }];
      const answers = await Promise.all(ranges.map((r) => service.verifyAuditLog(tenantId, r)));
      assert.deepEqual(answers.map(problem), ["edited 3", "edited 3", "edited 3", "edited 3"]);
      const two = await service.verifyAuditLog(tenantId, { toSeq: 2 });
      assert.deepEqual(two.ok && [two.checked, two.head?.seq], [2, 2]);
      await service.close();
    });

    it("through the service: a GitHub report whose source holds U+0000 or a lone surrogate is recorded (key.exposed, source unknown), not lost to jsonb", async () => {
      const service = auditedService();
      const signer = await createSigner();
      const handle = createSecretScanningPartnerHandler({
        service,
        publicKeys: [{ key_identifier: signer.keyIdentifier, key: signer.pem, is_current: true }],
      });
      for (const source of ["content\u0000", "content\ud800"]) {
        const tenantId = `pg-audit-${crypto.randomUUID()}`;
        const scopes = [{ resource: "orders", level: "read" as const }];
        const { key, id } = await service.create({ tenantId, name: "ci", scopes });
        const body = JSON.stringify([{
          token: key,
          type: "x",
          url: "https://github.com/o/r",
          source,
        }]);
        const headers: Record<string, string> = {
          "github-public-key-identifier": signer.keyIdentifier,
          "github-public-key-signature": await signer.sign(body),
        };
        const response = await handle({
          body: new TextEncoder().encode(body),
          headers: (name) => headers[name],
        });
        assert.equal(response.status, 200);
        // key.exposed is written in the background: wait for it.
        const until = Date.now() + 10_000;
        let exposed;
        while (exposed === undefined) {
          ({ records: [exposed] } = await service.auditLog(tenantId, { action: "key.exposed" }));
          if (exposed !== undefined) break;
          assert.ok(Date.now() < until, `${JSON.stringify(source)}: no key.exposed record`);
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        assert.deepEqual([exposed.keyId, exposed.changes.source], [id, {
          before: null,
          after: "unknown",
        }]);
        assert.equal(problem(await service.verifyAuditLog(tenantId)), "ok");
      }
      await service.close();
    });

    it("pruning keeps the chain verifiable from its anchor; a deleted first record is still found", async () => {
      const tenantId = await chainOf(4);
      assert.equal(await storage.pruneAudit!(tenantId, new Date(Date.now() + 60_000)), 3);
      await storage.appendAudit!(entry(tenantId, "k5"));
      assert.equal(problem(await verify(tenantId)), "ok");
      await sql("DELETE FROM api_key_audit WHERE tenant_id = $1 AND seq = 4", tenantId);
      assert.equal(problem(await verify(tenantId)), "deleted 4");
    });

    it("in a session whose time zone is not UTC: a record's time is read as written, the chain verifies, a window and a prune cut at the instants given", async () => {
      // @prisma/adapter-pg sends a Date without its offset and reads a timestamptz as UTC wall time.
      const zoned = new URL(url!);
      zoned.searchParams.set("options", "-c timezone=Pacific/Honolulu");
      const prisma = await createPrismaClient(zoned.href);
      try {
        const local = new PrismaApiKeyStorage(prisma, { audit: prisma });
        const tenantId = `pg-audit-zone-${crypto.randomUUID()}`;
        const before = Date.now();
        const first = await local.appendAudit!(entry(tenantId, "k1"));
        await local.appendAudit!(entry(tenantId, "k2"));
        const after = Date.now();
        assert.ok(
          first.at.getTime() >= before - 1_000 && first.at.getTime() <= after + 1_000,
          `appended at ${first.at.toISOString()}, between ${before} and ${after}`,
        );
        const { records, state } = await local.readAudit!({ tenantId, order: "asc", limit: 10 });
        assert.deepEqual(records[0].at, first.at);
        assert.equal(problem(await verifyAuditChain(records, { tenantId, ...state })), "ok");
        const at = records[0].at.getTime();
        const window = { tenantId, order: "asc" as const, limit: 10 };
        const inWindow = await local.readAudit!({
          ...window,
          from: new Date(at),
          to: new Date(at + 1),
        });
        assert.deepEqual(inWindow.records.map((r) => r.seq), [1]);
        assert.equal(await local.pruneAudit!(tenantId, new Date(at)), 0, "nothing before it");
        assert.equal(await local.pruneAudit!(tenantId, new Date(after + 1_000)), 1);
      } finally {
        await prisma.$disconnect();
      }
    });
  });
}
