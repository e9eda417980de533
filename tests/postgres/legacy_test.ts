/**
 * Bring your keys on a real PostgreSQL through Prisma Client 7 (migration
 * 0003 applied): records made by the legacy algorithms verify; under 50
 * concurrent verifies a record is upgraded exactly once, then verifies under
 * the new scheme; a hash changed underneath is left alone; retired pepper
 * versions with records left refuse to start; the import (API and CLI) is
 * idempotent and reports conflicts. Skips without `DATABASE_URL`; fails
 * instead under `CI=true`.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  ApiKeysService,
  type ApiKeysServiceOptions,
  type ImportApiKeyRecord,
  PrismaApiKeyStorage,
} from "../../api_keys/mod.ts";
import { createPrismaClient, databaseReady, probeDatabase } from "./prisma_client.ts";
import { nestarcHash, nestarcKey, plainSha256 } from "../api_keys/verify/nestarc.ts";
import { exportFile, runImport } from "../scripts/import_keys_cli.ts";
import { cleanImport } from "../api_keys/helpers.ts";
import { crc32Ascii } from "../../api_keys/key_format.ts";
import { encodeBase62Fixed } from "../../api_keys/_base62.ts";

const url = Deno.env.get("DATABASE_URL");
const unavailable = await probeDatabase(url);
const PEPPER_1 = "postgres-legacy-pepper-one-0123456789ab";
const PEPPER_2 = "postgres-legacy-pepper-two-0123456789ab";
const LEGACY = { legacyKeyLayouts: ["nestarc-v0" as const] };

if (databaseReady("legacy keys on PostgreSQL", unavailable)) {
  const prisma = await createPrismaClient(url!);
  const reset = () => prisma.$executeRawUnsafe('TRUNCATE TABLE "api_keys"');
  const service = (storage: PrismaApiKeyStorage, options: Partial<ApiKeysServiceOptions> = {}) =>
    new ApiKeysService({ peppers: { 1: PEPPER_1 }, storage, cache: false, ...LEGACY, ...options });
  /** The row of `id` as PostgreSQL has it. */
  const row = async (id: string) =>
    ((await prisma.apiKey.findUnique({ where: { id } })) as Record<string, unknown> | null)!;
  /** Lets the detached upgrades run (real round trips). */
  const settle = async (done: () => boolean | Promise<boolean>) => {
    for (let i = 0; i < 200 && !(await done()); i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };

  /** A nestarc export of `count` keys (sha256-pepper, pepper 1). */
  const nestarcExport = (count: number) => {
    const keys = Array.from({ length: count }, () => nestarcKey("ak"));
    const rows: ImportApiKeyRecord[] = keys.map((key, i) => ({
      id: `pg-${i}-${key.prefix}`,
      tenantId: "t-pg",
      name: `nestarc ${i}`,
      environment: key.environment,
      prefix: key.prefix,
      hash: nestarcHash(key.secret, PEPPER_1),
      hashScheme: "sha256-pepper",
      pepperVersion: 1,
      scopes: ["orders:read"],
      createdAt: "2029-01-01T00:00:00.000Z",
    }));
    return { keys, rows };
  };

  after(async () => {
    await reset();
    await prisma.$disconnect();
  });

  describe("legacy keys on PostgreSQL", () => {
    it("imported sha256-pepper and sha256 records verify with their legacy keys", async () => {
      await reset();
      const storage = new PrismaApiKeyStorage(prisma);
      const { keys, rows } = nestarcExport(2);
      const plain = nestarcKey("ak", "test");
      rows.push({
        ...rows[0],
        id: "pg-plain",
        environment: "test",
        prefix: plain.prefix,
        hash: plainSha256(plain.secret),
        hashScheme: "sha256",
        pepperVersion: 0,
      });
      const keysService = service(storage, { peppers: { 1: PEPPER_1, 2: PEPPER_2 } });
      const result = await keysService.importKeys(rows);
      assert.deepEqual(result, cleanImport({ imported: 3 }));
      assert.equal((await row("pg-plain")).hashScheme, "sha256");
      const checking = service(storage, {
        peppers: { 1: PEPPER_1, 2: PEPPER_2 },
        currentPepperVersion: 1,
      });
      for (const [i, key] of keys.entries()) {
        assert.equal((await checking.verify(key.raw)).keyId, rows[i].id);
      }
      assert.equal((await checking.verify(plain.raw)).keyId, "pg-plain");
    });

    it("with storesLayout, a legacy key verifies only in its layout, also after its upgrade", async () => {
      await reset();
      const storage = new PrismaApiKeyStorage(prisma, { storesLayout: true });
      const { keys, rows } = nestarcExport(1);
      const upgrading = service(storage, { peppers: { 1: PEPPER_1, 2: PEPPER_2 } });
      await upgrading.importKeys(rows);
      assert.equal((await row(rows[0].id!)).layout, "nestarc-v0");
      const crc = (raw: string) => raw + encodeBase62Fixed(crc32Ascii(raw), 6);
      await assert.rejects(upgrading.verify(crc(keys[0].raw)), { code: "api_key_invalid" });
      assert.equal((await upgrading.verify(keys[0].raw)).keyId, rows[0].id);
      await settle(async () => (await row(rows[0].id!)).hashScheme === "hmac-sha256");
      assert.equal((await row(rows[0].id!)).layout, "nestarc-v0");
      const fresh = service(new PrismaApiKeyStorage(prisma, { storesLayout: true }), {
        peppers: { 2: PEPPER_2 },
      });
      assert.equal((await fresh.verify(keys[0].raw)).keyId, rows[0].id);
      await assert.rejects(fresh.verify(crc(keys[0].raw)), { code: "api_key_invalid" });
      const { key } = await fresh.create({
        tenantId: "t1",
        name: "new",
        scopes: [{ resource: "orders", level: "read" }],
      });
      assert.equal((await fresh.verify(key)).tenantId, "t1");
      await assert.rejects(fresh.verify(key.slice(0, -6)), { code: "api_key_invalid" });
    });

    it("under 50 concurrent verifies a record is upgraded exactly once, then verifies under the new scheme", async () => {
      await reset();
      const storage = new PrismaApiKeyStorage(prisma);
      const { keys, rows } = nestarcExport(1);
      await service(storage).importKeys(rows);
      const answers: boolean[] = [];
      const replaceHash = storage.replaceHash.bind(storage);
      storage.replaceHash = async (...args) => {
        const answer = await replaceHash(...args);
        answers.push(answer);
        return answer;
      };
      const upgrading = service(storage, { peppers: { 1: PEPPER_1, 2: PEPPER_2 } });
      const contexts = await Promise.all(
        Array.from({ length: 50 }, () => upgrading.verify(keys[0].raw)),
      );
      assert.ok(contexts.every((context) => context.keyId === rows[0].id));
      await settle(() => answers.length > 0);
      assert.deepEqual(answers, [true]);
      const upgraded = await row(rows[0].id!);
      assert.deepEqual([upgraded.hashScheme, upgraded.pepperVersion], ["hmac-sha256", 2]);
      assert.match(upgraded.hash as string, /^[A-Za-z0-9_-]{43}$/);
      // Another instance, with only the new pepper: the record verifies under the new scheme.
      const fresh = service(new PrismaApiKeyStorage(prisma), { peppers: { 2: PEPPER_2 } });
      assert.equal((await fresh.verify(keys[0].raw)).keyId, rows[0].id);
      const report = await fresh.hashReport();
      assert.deepEqual(report.counts, [{ hashScheme: "hmac-sha256", pepperVersion: 2, count: 1 }]);
      assert.equal(report.toUpgrade, 0);
    });

    it("a record whose hash changed underneath the upgrade is left alone", async () => {
      await reset();
      const storage = new PrismaApiKeyStorage(prisma);
      const { keys, rows } = nestarcExport(1);
      await service(storage).importKeys(rows);
      const changed = "c".repeat(64);
      const replaceHash = storage.replaceHash.bind(storage);
      let answer: boolean | undefined;
      storage.replaceHash = async (...args) => {
        // Another process changes the hash between this verify's read and its upgrade.
        await prisma.apiKey.update({ where: { id: args[0] }, data: { hash: changed } });
        answer = await replaceHash(...args);
        return answer;
      };
      const events: string[] = [];
      const upgrading = service(storage, {
        peppers: { 1: PEPPER_1, 2: PEPPER_2 },
        onEvent: (event) => void events.push(event.type),
      });
      await upgrading.verify(keys[0].raw);
      await settle(() => answer !== undefined);
      assert.equal(answer, false);
      const kept = await row(rows[0].id!);
      assert.deepEqual([kept.hash, kept.hashScheme, kept.pepperVersion], [
        changed,
        "sha256-pepper",
        1,
      ]);
      assert.ok(!events.includes("api_key.rehash_failed"));
    });

    it("retiredPepperVersions with usable records left refuses to start, naming the count", async () => {
      await reset();
      const storage = new PrismaApiKeyStorage(prisma);
      const { keys, rows } = nestarcExport(3);
      await service(storage, { peppers: { 1: PEPPER_1, 2: PEPPER_2 } }).importKeys(rows);
      const start = () =>
        service(new PrismaApiKeyStorage(prisma), {
          peppers: { 2: PEPPER_2 },
          retiredPepperVersions: [1],
        }).ready();
      await assert.rejects(
        start(),
        /refusing to start: 3 usable API keys still need a retired hash \(3 on pepper version 1 \(sha256-pepper\)\)/,
      );
      await prisma.apiKey.update({ where: { id: rows[0].id! }, data: { revokedAt: new Date() } });
      const upgrading = service(storage, { peppers: { 1: PEPPER_1, 2: PEPPER_2 } });
      await upgrading.verify(keys[1].raw);
      await settle(async () => (await row(rows[1].id!)).hashScheme === "hmac-sha256");
      await assert.rejects(start(), /refusing to start: 1 usable API key still needs/);
      await upgrading.verify(keys[2].raw);
      await settle(async () => (await row(rows[2].id!)).hashScheme === "hmac-sha256");
      await start();
    });

    it("the import is idempotent on re-run and reports conflicts (API)", async () => {
      await reset();
      const storage = new PrismaApiKeyStorage(prisma);
      const { rows } = nestarcExport(5);
      const events: string[] = [];
      const importer = service(storage, { onEvent: (event) => void events.push(event.type) });
      assert.equal((await importer.importKeys(rows)).imported, 5);
      assert.equal(events.filter((type) => type === "api_key.created").length, 5);
      events.length = 0;
      const other = { ...rows[3], id: "pg-other", hash: "d".repeat(64) };
      const again = await importer.importKeys([...rows, other]);
      assert.equal(again.imported, 0);
      assert.equal(again.skipped, 5);
      assert.deepEqual(again.conflicts, [{
        index: 5,
        prefix: rows[3].prefix,
        message: "the prefix holds another key (a different hash)",
      }]);
      assert.deepEqual(events, []);
      const count = await prisma.apiKey.findMany({ where: {}, orderBy: [{ id: "asc" }] });
      assert.equal(count.length, 5);
    });

    it("the CLI imports into PostgreSQL with DATABASE_URL, idempotent on re-run", async () => {
      await reset();
      const { keys, path } = exportFile(3, PEPPER_1);
      const env = { API_KEY_PEPPERS: JSON.stringify({ 1: PEPPER_1 }), DATABASE_URL: url! };
      const args = ["--jsonl", path, "--legacy-key-layout", "nestarc-v0"];
      const first = await runImport(args, env);
      assert.equal(first.code, 0, first.stderr);
      assert.deepEqual(JSON.parse(first.stdout), {
        dryRun: false,
        imported: 3,
        skipped: 0,
        revoked: 0,
        conflicts: 0,
        errors: 0,
      });
      const second = await runImport(args, env);
      assert.equal(JSON.parse(second.stdout).skipped, 3);
      const verifier = service(new PrismaApiKeyStorage(prisma));
      assert.equal((await verifier.verify(keys[1].raw)).tenantId, "t-cli");
      // Each key keeps its layout: an app with storesLayout: true accepts it.
      const stored = await prisma.apiKey.findMany({ where: {}, orderBy: [{ id: "asc" }] });
      assert.deepEqual(stored.map((r) => (r as { layout?: unknown }).layout), [
        "nestarc-v0",
        "nestarc-v0",
        "nestarc-v0",
      ]);
      const strict = service(new PrismaApiKeyStorage(prisma, { storesLayout: true }));
      assert.equal((await strict.verify(keys[0].raw)).tenantId, "t-cli");
      // The old system revoked a key since: a re-run revokes it here.
      const lines = Deno.readTextFileSync(path).trimEnd().split("\n");
      lines[2] = JSON.stringify({ ...JSON.parse(lines[2]), revokedAt: "2029-11-30T00:00:00.000Z" });
      Deno.writeTextFileSync(path, lines.join("\n") + "\n");
      const third = await runImport(args, env);
      assert.equal(third.code, 0, third.stderr);
      assert.deepEqual(
        [JSON.parse(third.stdout).skipped, JSON.parse(third.stdout).revoked],
        [2, 1],
      );
      await assert.rejects(strict.verify(keys[2].raw), { code: "api_key_revoked" });
      Deno.removeSync(path);
    });

    it("the CLI refuses a session not in UTC (every instant would be stored moved); with TimeZone=UTC it imports them exact", async () => {
      await reset();
      const { keys, path } = exportFile(1, PEPPER_1);
      const [line] = Deno.readTextFileSync(path).split("\n");
      const expiresAt = "2031-06-01T12:00:00.000Z";
      Deno.writeTextFileSync(path, JSON.stringify({ ...JSON.parse(line), expiresAt }) + "\n");
      const args = ["--jsonl", path, "--legacy-key-layout", "nestarc-v0"];
      // A role or database whose default zone is not UTC, as PGOPTIONS sets it here.
      const env = {
        API_KEY_PEPPERS: JSON.stringify({ 1: PEPPER_1 }),
        DATABASE_URL: url!,
        PGOPTIONS: "-c TimeZone=America/New_York",
      };
      const refused = await runImport(args, env);
      assert.equal(refused.code, 2, refused.stderr);
      assert.match(refused.stderr, /time zone is America\/New_York, not UTC/);
      assert.match(refused.stderr, /nothing was imported/);
      assert.equal(await prisma.apiKey.findUnique({ where: { prefix: keys[0].prefix } }), null);
      const utc = new URL(url!);
      utc.searchParams.set("options", "-c TimeZone=UTC");
      const run = await runImport(args, { ...env, DATABASE_URL: utc.href });
      assert.equal(run.code, 0, run.stderr);
      const [stored] = await prisma.$queryRawUnsafe(
        "SELECT (extract(epoch FROM expires_at) * 1000)::float8 AS at FROM api_keys WHERE prefix = $1",
        keys[0].prefix,
      ) as { at: number }[];
      assert.equal(stored.at, Date.parse(expiresAt));
      Deno.removeSync(path);
    });

    it("the CLI imports into the schema DATABASE_URL names (?schema=, as prisma migrate deploy)", async () => {
      const schema = `import_${crypto.randomUUID().replaceAll("-", "")}`;
      // The table as the migrations made it, in a schema of this test's own.
      await prisma.$executeRawUnsafe(`CREATE SCHEMA ${schema}`);
      try {
        await prisma.$executeRawUnsafe(
          `CREATE TABLE ${schema}.api_keys (LIKE api_keys INCLUDING ALL)`,
        );
        const { keys, path } = exportFile(2, PEPPER_1);
        const inSchema = new URL(url!);
        inSchema.searchParams.set("schema", schema);
        const run = await runImport(["--jsonl", path, "--legacy-key-layout", "nestarc-v0"], {
          API_KEY_PEPPERS: JSON.stringify({ 1: PEPPER_1 }),
          DATABASE_URL: inSchema.href,
        });
        assert.equal(run.code, 0, run.stderr);
        assert.equal(JSON.parse(run.stdout).imported, 2);
        const layouts = await prisma.$queryRawUnsafe(
          `SELECT layout FROM ${schema}.api_keys`,
        ) as { layout: string }[];
        assert.deepEqual(layouts.map((r) => r.layout), ["nestarc-v0", "nestarc-v0"]);
        assert.equal(
          await prisma.apiKey.findUnique({ where: { prefix: keys[0].prefix } }),
          null,
          "none in the default schema",
        );
        Deno.removeSync(path);
      } finally {
        await prisma.$executeRawUnsafe(`DROP SCHEMA ${schema} CASCADE`);
      }
    });
  });
}
