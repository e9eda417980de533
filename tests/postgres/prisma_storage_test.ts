/**
 * `PrismaApiKeyStorage` on a real PostgreSQL through Prisma Client 7 and
 * `@prisma/adapter-pg`: the storage contract suite, then races that only a
 * real database can show. Skips without `DATABASE_URL`; fails instead under
 * `CI=true`.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  type ApiKeyEvent,
  type ApiKeyRecord,
  ApiKeysService,
  type PrismaApiKeyDelegate,
  PrismaApiKeyStorage,
  runApiKeyStorageContract,
} from "../../api_keys/mod.ts";
import { createPrismaClient, databaseReady, probeDatabase } from "./prisma_client.ts";
import { createApiKeysAdminHandler } from "../../api_keys/admin/mod.ts";
import { spyCalls } from "../api_keys/helpers.ts";
import { storedRecord } from "../api_keys/storage/stored_record.ts";
import { assertAdminReadsByLookups } from "../api_keys/admin/lookups.ts";

const url = Deno.env.get("DATABASE_URL");
const unavailable = await probeDatabase(url);
const PEPPERS = { 1: "postgres-suite-pepper-0123456789abcdef" };

if (databaseReady("PrismaApiKeyStorage on PostgreSQL", unavailable)) {
  const prisma = await createPrismaClient(url!);
  const reset = async () => {
    await prisma.$executeRawUnsafe('TRUNCATE TABLE "api_keys"');
  };
  const freshStorage = async () => {
    await reset();
    return new PrismaApiKeyStorage(prisma);
  };
  const service = (storage: PrismaApiKeyStorage) =>
    new ApiKeysService({
      peppers: PEPPERS,
      storage,
      cache: false,
      ttlPolicy: { allowNeverExpires: true },
    });

  /** A storage over the client without `$transaction`: `rotate` then runs step by step. */
  const freshStepwiseStorage = async (apiKey: PrismaApiKeyDelegate = prisma.apiKey) => {
    await reset();
    return new PrismaApiKeyStorage({ apiKey });
  };

  after(async () => {
    await reset();
    await prisma.$disconnect();
  });

  describe("PrismaApiKeyStorage contract on PostgreSQL", () => {
    runApiKeyStorageContract(freshStorage, it);
  });

  describe("PrismaApiKeyStorage contract on PostgreSQL with storesLayout (migration 0006)", () => {
    runApiKeyStorageContract(async () => {
      await reset();
      return new PrismaApiKeyStorage(prisma, { storesLayout: true });
    }, it);
  });

  describe("PrismaApiKeyStorage contract on PostgreSQL with storesRateLimits (migration 0008)", () => {
    runApiKeyStorageContract(async () => {
      await reset();
      return new PrismaApiKeyStorage(prisma, { storesRateLimits: true });
    }, it);
  });

  describe("PrismaApiKeyStorage contract on PostgreSQL with storesRateLimits and storesRateLimitKeyId (migrations 0008, 0014)", () => {
    runApiKeyStorageContract(async () => {
      await reset();
      return new PrismaApiKeyStorage(prisma, {
        storesRateLimits: true,
        storesRateLimitKeyId: true,
      });
    }, it);
  });

  describe("PrismaApiKeyStorage contract on PostgreSQL with storesCredits (migration 0011)", () => {
    runApiKeyStorageContract(async () => {
      await reset();
      return new PrismaApiKeyStorage(prisma, { storesCredits: true });
    }, it);
  });

  describe("PrismaApiKeyStorage contract on PostgreSQL with usage (migration 0010)", () => {
    runApiKeyStorageContract(async () => {
      await reset();
      await prisma.$executeRawUnsafe('TRUNCATE TABLE "api_key_usage"');
      return new PrismaApiKeyStorage(prisma, { usage: prisma });
    }, it);
  });

  describe("PrismaApiKeyStorage contract on PostgreSQL with usage and usageBatches (migrations 0010, 0013)", () => {
    runApiKeyStorageContract(async () => {
      await reset();
      await prisma.$executeRawUnsafe('TRUNCATE TABLE "api_key_usage", "api_key_usage_batches"');
      return new PrismaApiKeyStorage(prisma, { usage: prisma, usageBatches: true });
    }, it);
  });

  describe("PrismaApiKeyStorage contract on PostgreSQL without $transaction", () => {
    runApiKeyStorageContract(() => freshStepwiseStorage(), it);
  });

  describe("PrismaApiKeyStorage without $transaction on PostgreSQL", () => {
    it("a failing insert leaves the old key as it was", async () => {
      const failingCreate: PrismaApiKeyDelegate = {
        create: () => Promise.reject(new Error("insert failed")),
        findMany: (args) => prisma.apiKey.findMany(args),
        findUnique: (args) => prisma.apiKey.findUnique(args),
        update: (args) => prisma.apiKey.update(args),
      };
      const keys = service(await freshStepwiseStorage());
      const { id, key } = await keys.create({
        tenantId: "t-insert",
        name: "kept",
        scopes: [{ resource: "orders", level: "read" }],
      });
      const broken = service(new PrismaApiKeyStorage({ apiKey: failingCreate }));
      await assert.rejects(broken.rotate(id), { code: "api_key_storage_unavailable" });
      const records = await keys.list("t-insert", { includeRevoked: true });
      assert.deepEqual(records.map((r) => [r.id, r.rotatedAt, r.replacedByKeyId]), [[
        id,
        null,
        null,
      ]]);
      assert.equal((await keys.verify(key)).keyId, id);
    });

    it("20 concurrent rotations: one success; the losers leave nothing usable", async () => {
      const keys = service(await freshStepwiseStorage());
      const { id } = await keys.create({
        tenantId: "t-stepwise",
        name: "rotated",
        scopes: [{ resource: "orders", level: "read" }],
      });
      const settled = await Promise.allSettled(
        Array.from({ length: 20 }, () => keys.rotate(id, { gracePeriodMs: 60_000 })),
      );
      const won = settled.filter((r) => r.status === "fulfilled");
      assert.equal(won.length, 1);
      for (const failure of settled.filter((r) => r.status === "rejected")) {
        assert.equal((failure.reason as { code?: string }).code, "api_key_not_rotatable");
      }
      const winner = (won[0] as PromiseFulfilledResult<{ id: string }>).value.id;
      const listed = (await keys.list("t-stepwise")).map((r) => r.id).sort();
      assert.deepEqual(listed, [id, winner].sort(), "only the old key and the winner are active");
      assert.equal(
        (await keys.list("t-stepwise", { includeRevoked: true })).find((r) => r.id === id)
          ?.replacedByKeyId,
        winner,
      );
    });
  });

  describe("PrismaApiKeyStorage concurrency on PostgreSQL", () => {
    it("20 concurrent rotations of one key: one success, 19 api_key_not_rotatable", async () => {
      const storage = await freshStorage();
      const keys = service(storage);
      const { id } = await keys.create({
        tenantId: "t-rotate",
        name: "rotated",
        scopes: [{ resource: "orders", level: "read" }],
      });

      const settled = await Promise.allSettled(
        Array.from({ length: 20 }, () => keys.rotate(id, { gracePeriodMs: 60_000 })),
      );

      const won = settled.filter((r) => r.status === "fulfilled");
      const lost = settled.filter((r): r is PromiseRejectedResult => r.status === "rejected");
      assert.equal(won.length, 1);
      assert.equal(lost.length, 19);
      for (const failure of lost) {
        assert.equal((failure.reason as { code?: string }).code, "api_key_not_rotatable");
      }
      const records = await storage.listByTenant("t-rotate", { includeRevoked: true });
      assert.equal(records.length, 2, "the old record and exactly one new record");
      const old = records.find((r) => r.id === id)!;
      const successor = records.find((r) => r.id !== id)!;
      assert.equal(old.replacedByKeyId, successor.id);
      assert.notEqual(old.rotatedAt, null);
      assert.equal(successor.rotatedAt, null);
      assert.equal(successor.replacedByKeyId, null);
    });

    it("revoke racing rotate ends revoked-without-successor or rotated-then-revoked", async () => {
      const storage = await freshStorage();
      const keys = service(storage);
      for (let round = 0; round < 20; round++) {
        const tenantId = `t-race-${round}`;
        const { id } = await keys.create({
          tenantId,
          name: "raced",
          scopes: [{ resource: "orders", level: "write" }],
        });
        const [rotation, revocation] = await Promise.allSettled([
          keys.rotate(id),
          keys.revoke(id),
        ]);
        assert.equal(revocation.status, "fulfilled", "revoke succeeds in both orders");
        const records = await storage.listByTenant(tenantId, { includeRevoked: true });
        const old = records.find((r) => r.id === id) as ApiKeyRecord;
        assert.notEqual(old.revokedAt, null, "the old key ends revoked");
        if (rotation.status === "rejected") {
          assert.equal((rotation.reason as { code?: string }).code, "api_key_not_rotatable");
          assert.equal(records.length, 1, "no successor when the revoke won");
          assert.equal(old.rotatedAt, null);
          assert.equal(old.replacedByKeyId, null);
        } else {
          assert.equal(records.length, 2, "exactly one successor when the rotate won");
          const successor = records.find((r) => r.id !== id)!;
          assert.equal(successor.id, rotation.value.id);
          assert.equal(old.replacedByKeyId, successor.id, "successor only with the old marked");
          assert.notEqual(old.rotatedAt, null);
        }
      }
    });

    it("20 concurrent revokes of one key: one api_key.revoked event, its time stored", async () => {
      const storage = await freshStorage();
      const events: ApiKeyEvent[] = [];
      const keys = new ApiKeysService({
        peppers: PEPPERS,
        storage,
        cache: false,
        onEvent: (event) => {
          events.push(event);
        },
      });
      const { id } = await keys.create({
        tenantId: "t-revoke",
        name: "revoked",
        scopes: [{ resource: "orders", level: "read" }],
      });
      await Promise.all(Array.from({ length: 20 }, () => keys.revoke(id)));
      const revoked = events.filter((event) => event.type === "api_key.revoked");
      assert.equal(revoked.length, 1);
      const record = await storage.findById(id);
      assert.equal(record?.revokedAt?.getTime(), revoked[0].at.getTime());
    });

    it("an expiry PostgreSQL holds past what a Date can (infinity) counts as expired in hashReport and the admin pages too, as verify answers", async () => {
      const storage = await freshStorage();
      const keys = service(storage);
      const scopes = [{ resource: "orders", level: "read" as const }];
      const { id, key } = await keys.create({ tenantId: "t-inf", name: "n", scopes });
      await keys.create({ tenantId: "t-inf", name: "other", scopes });
      await prisma.$executeRawUnsafe(
        `UPDATE api_keys SET expires_at = 'infinity' WHERE id = $1`,
        id,
      );
      await assert.rejects(keys.verify(key), { code: "api_key_expired" });
      assert.equal((await keys.hashReport()).usable, 1);
      // The admin pages: expired, never active (its page read back as out of its own filter).
      const page = (status: "active" | "expired" | "all") =>
        storage.listPageByTenant!("t-inf", {
          limit: 10,
          after: null,
          q: null,
          status,
          environment: null,
          sort: "created_desc",
          now: new Date(),
        }).then(({ records }) => records.map((record) => record.name).sort());
      assert.deepEqual(
        [await page("active"), await page("expired"), await page("all")],
        [["other"], ["n"], ["n", "other"]],
      );
    });

    it("1,000 concurrent creates for one tenant get 1,000 distinct prefixes", async () => {
      const storage = await freshStorage();
      const keys = service(storage);
      const results = await Promise.all(
        Array.from({ length: 1_000 }, (_, i) =>
          keys.create({
            tenantId: "t-bulk",
            name: `bulk ${i}`,
            scopes: [{ resource: "orders", level: "read" }],
          })),
      );
      assert.equal(new Set(results.map((r) => r.id)).size, 1_000);
      const records = await storage.listByTenant("t-bulk");
      assert.equal(records.length, 1_000);
      assert.equal(new Set(records.map((r) => r.prefix)).size, 1_000);
      for (const result of results) {
        const record = records.find((r) => r.id === result.id);
        assert.ok(record !== undefined && result.key.includes(record.prefix));
      }
    });
  });

  describe("text PostgreSQL cannot store or a log line would split, on PostgreSQL", () => {
    it("a tenant id or createdBy with NUL, a line break or over 200 characters is a 400 naming the field, never a 503; lookups too", async () => {
      const storage = await freshStorage();
      const keys = service(storage);
      const base = {
        tenantId: "t-text",
        name: "n",
        scopes: [{ resource: "orders", level: "read" as const }],
      };
      for (
        const [input, field] of [
          [{ tenantId: "t-text\u0000" }, "tenantId"],
          [{ tenantId: "t-text\n1" }, "tenantId"],
          [{ createdBy: "a\u0000b" }, "createdBy"],
          [{ createdBy: "alice\nFAKE api_key.revoked" }, "createdBy"],
          [{ createdBy: "x".repeat(1_000_000) }, "createdBy"],
          [{ name: "a\u2028b" }, "name"],
        ] as const
      ) {
        await assert.rejects(keys.create({ ...base, ...input }), {
          name: "ApiKeyValidationError",
          field,
          httpStatus: 400,
        }, field);
      }
      const { id } = await keys.create({ ...base, createdBy: "x".repeat(200) });
      for (
        const call of [
          () => keys.list("t-text\u0000"),
          () => keys.listSummaries("t-text\u0000"),
          () => keys.revokeForTenant("t-text\u0000", id),
          () => keys.rotateForTenant("t-text\u0000", id),
        ]
      ) {
        await assert.rejects(call(), { name: "ApiKeyValidationError", field: "tenantId" });
      }
      const [record] = await keys.list("t-text");
      assert.equal(record.createdBy, "x".repeat(200));
    });

    it("a key id PostgreSQL cannot hold (NUL, a lone surrogate) is an unknown key, never a 503", async () => {
      const storage = await freshStorage();
      const keys = service(storage);
      for (const id of ["k\u0000", "k\uD800"]) {
        for (
          const call of [
            () => keys.revoke(id),
            () => keys.rotate(id),
            () => keys.revokeForTenant("t-text", id),
            () => keys.rotateForTenant("t-text", id),
          ]
        ) {
          await assert.rejects(call(), { code: "api_key_record_not_found" }, JSON.stringify(id));
        }
      }
    });
  });

  describe("the admin routes' pages on PostgreSQL (migration 0016)", () => {
    it("GET /keys walks 60 keys by cursor in every order, each page one findMany and one lookup, writing nothing", async () => {
      await reset();
      const { spied: apiKey, calls } = spyCalls<PrismaApiKeyDelegate>(prisma.apiKey);
      const storage = new PrismaApiKeyStorage({ apiKey });
      const keys = service(storage);
      for (let i = 0; i < 60; i++) {
        await keys.create({
          tenantId: "pages",
          name: `key ${String(i).padStart(2, "0")}`,
          scopes: [{ resource: "projects", level: "read" }],
          environment: i % 2 === 0 ? "live" : "test",
        });
      }
      await keys.create({
        tenantId: "pages-other",
        name: "key 00",
        scopes: [{ resource: "projects", level: "read" }],
      });
      const handle = createApiKeysAdminHandler<null>({
        service: keys,
        scopes: ["projects:read"],
        tenantOf: () => "pages",
        canManage: () => true,
        policy: () => null,
      });
      const page = async (params: Record<string, string>) => {
        const answer = (await handle({
          method: "GET",
          path: "/keys",
          query: (name) => params[name] ?? null,
          headers: () => null,
          body: null,
        }, null))!;
        assert.equal(answer.status, 200, answer.body);
        return JSON.parse(answer.body) as { keys: { name: string }[]; nextCursor: string | null };
      };
      for (const sort of ["created_desc", "created_asc", "name_asc", "last_used_desc"]) {
        calls.length = 0;
        const names: string[] = [];
        let cursor = "";
        let pages = 0;
        do {
          const answer = await page({ sort, limit: "25", cursor });
          names.push(...answer.keys.map((key) => key.name));
          cursor = answer.nextCursor ?? "";
          pages++;
        } while (cursor !== "");
        assert.equal(pages, 3, sort);
        assert.equal(new Set(names).size, 60, sort);
        if (sort === "name_asc") assert.deepEqual(names, [...names].sort(), sort);
        assert.ok(calls.every((call) => call === "findMany"), `${sort}: ${calls}`);
        // last_used_desc reads the used keys, then the never used ones.
        assert.ok(calls.length <= pages * 3, `${sort}: ${calls.length} calls`);
      }
      const live = await page({ environment: "live", q: "KEY 1", limit: "100" });
      assert.deepEqual(
        live.keys.map((key) => key.name).sort(),
        ["key 10", "key 12", "key 14", "key 16", "key 18"],
      );
    });
  });

  describe("instants and statuses of the admin routes' pages on PostgreSQL", () => {
    const scopes = [{ resource: "projects", level: "read" as const }];
    /** `GET /keys` of `tenant` with `params` through an admin handler over `keys` (its `onError`). */
    const getKeys = async (
      keys: ApiKeysService,
      tenant: string,
      params: Record<string, string>,
      onError?: (error: unknown) => void,
    ) => {
      const handle = createApiKeysAdminHandler<null>({
        service: keys,
        scopes: ["projects:read"],
        tenantOf: () => tenant,
        canManage: () => true,
        policy: () => null,
        onError,
      });
      return (await handle({
        method: "GET",
        path: "/keys",
        query: (name) => params[name] ?? null,
        headers: () => null,
        body: null,
      }, null))!;
    };
    /** A cursor of `GET /keys` at `position` (base64url of its JSON). */
    const cursorOf = (position: unknown[]) =>
      btoa(JSON.stringify(position))
        .replaceAll("+", "-").replaceAll("/", "_").replaceAll("=", "");

    it("GET /keys with a forged cursor dated out of the instants the service reads is the 400 of a bad cursor, never 503 (22009)", async () => {
      const keys = service(new PrismaApiKeyStorage(prisma));
      const tenant = `pg-cursor-${crypto.randomUUID()}`;
      await keys.create({ tenantId: tenant, name: "k", scopes });
      const fine = await getKeys(keys, tenant, {
        cursor: cursorOf(["created_desc", "k", "2100-01-01T00:00:00.000Z"]),
      });
      assert.equal(fine.status, 200, fine.body);
      for (const value of ["-010000-01-01T00:00:00.000Z", "+010000-01-01T00:00:00.000Z"]) {
        const answer = await getKeys(keys, tenant, {
          cursor: cursorOf(["created_desc", "k", value]),
        });
        assert.equal(answer.status, 400, `${value}: ${answer.body}`);
        assert.match(answer.body, /"field":"cursor"/, value);
      }
      await keys.close();
    });

    it("GET /keys with q, or a cursor's id or name, holding U+0000 (PostgreSQL refuses it: 22021) is a 400 naming it, never a 503 nor an onError", async () => {
      const keys = service(new PrismaApiKeyStorage(prisma));
      const tenant = `pg-nul-${crypto.randomUUID()}`;
      await keys.create({ tenantId: tenant, name: "k", scopes });
      const errors: unknown[] = [];
      const get = (params: Record<string, string>) =>
        getKeys(keys, tenant, params, (error) => errors.push(error));
      const fine = await get({
        q: "k",
        sort: "name_asc",
        cursor: cursorOf(["name_asc", "a", "a"]),
      });
      assert.equal(fine.status, 200, fine.body);
      for (const bad of ["a\u0000b", "a\uD800b"]) {
        for (
          const [params, field] of [
            [{ q: bad }, "q"],
            [{ cursor: cursorOf(["created_desc", bad, "2020-01-01T00:00:00.000Z"]) }, "cursor"],
            [{ sort: "name_asc", cursor: cursorOf(["name_asc", "k", bad]) }, "cursor"],
            [{ sort: "name_asc", cursor: cursorOf(["name_asc", bad, "k"]) }, "cursor"],
          ] as const
        ) {
          const answer = await get(params);
          assert.equal(answer.status, 400, `${JSON.stringify(params)}: ${answer.body}`);
          assert.match(answer.body, new RegExp(`"field":"${field}"`), JSON.stringify(params));
        }
      }
      assert.deepEqual(errors, []);
      await keys.close();
    });

    it("a key rotated without grace is expired on an instance whose clock is 5 s behind: listSummaries and GET /keys?status= agree with verify", async () => {
      const T = Date.parse("2030-01-01T00:00:00.000Z");
      const storage = new PrismaApiKeyStorage(prisma);
      const at = (offsetMs: number) =>
        new ApiKeysService({
          peppers: PEPPERS,
          storage,
          cache: false,
          clock: () => new Date(T + offsetMs),
        });
      const ahead = at(0);
      const behind = at(-5_000);
      const tenant = `pg-skew-${crypto.randomUUID()}`;
      const { id, key } = await ahead.create({ tenantId: tenant, name: "old", scopes });
      await ahead.rotate(id, { gracePeriodMs: 0 });
      await assert.rejects(behind.verify(key), { code: "api_key_expired" });
      const listed = (await behind.listSummaries(tenant)).find((summary) => summary.id === id);
      assert.equal(listed?.status, "expired");
      const names = async (status: string) => {
        const answer = await getKeys(behind, tenant, { status });
        assert.equal(answer.status, 200, answer.body);
        return (JSON.parse(answer.body) as { keys: { id: string; status: string }[] }).keys
          .map((k) => `${k.id === id ? "old" : "new"} ${k.status}`);
      };
      assert.deepEqual(await names("expired"), ["old expired"]);
      assert.deepEqual(await names("rotating"), []);
      assert.deepEqual(await names("active"), ["new active"]);
      await ahead.close();
      await behind.close();
    });
  });

  describe("the admin routes' lookups on PostgreSQL (migration 0018)", () => {
    it("GET /keys, read, rename, revoke and rotate never list the tenant; without the lookups, the same answers", async () => {
      await reset();
      await assertAdminReadsByLookups(new PrismaApiKeyStorage(prisma, { storesCredits: true }));
    });

    it("PATCH /keys/:id with expectedName: two tabs at once, one renames, the other 409; another tenant's key 404", async () => {
      const keys = service(new PrismaApiKeyStorage(prisma));
      const tenantId = `rename-${crypto.randomUUID()}`;
      const scopes = [{ resource: "projects", level: "read" as const }];
      const { id } = await keys.create({ tenantId, name: "shown", scopes });
      const theirs = await keys.create({ tenantId: `${tenantId}-other`, name: "shown", scopes });
      const handle = createApiKeysAdminHandler<null>({
        service: keys,
        scopes: ["projects:read"],
        tenantOf: () => tenantId,
        canManage: () => true,
        policy: () => null,
      });
      const patch = (keyId: string, body: unknown) =>
        handle({
          method: "PATCH",
          path: `/keys/${keyId}`,
          query: () => null,
          headers: (name) => name === "x-requested-with" ? "api-keys-manager" : null,
          body: JSON.stringify(body),
        }, null);
      const answers = await Promise.all(
        ["tab 1", "tab 2"].map((name) => patch(id, { name, expectedName: "shown" })),
      );
      assert.deepEqual(answers.map((a) => a!.status).sort(), [200, 409]);
      const won = JSON.parse(answers.find((a) => a!.status === 200)!.body).name;
      assert.equal((await keys.listSummaries(tenantId))[0].name, won);
      const foreign = await patch(theirs.id, { name: "mine", expectedName: "shown" });
      assert.equal(foreign!.status, 404);
      assert.equal((await keys.listSummaries(`${tenantId}-other`))[0].name, "shown");
    });

    it("findManyByIds is one findMany: of 100 ids, only the tenant's rows, revoked ones too, as findById reads them", async () => {
      await reset();
      const { spied: apiKey, calls } = spyCalls<PrismaApiKeyDelegate>(prisma.apiKey);
      const storage = new PrismaApiKeyStorage({ apiKey });
      const at = new Date("2030-01-01T00:00:00.000Z");
      for (let i = 0; i < 60; i++) {
        await storage.insert(storedRecord({
          id: `many-${i}`,
          tenantId: i % 2 === 0 ? "many" : "many-other",
          prefix: `ManyPrefix${String(i).padStart(2, "0")}`,
          revokedAt: i % 4 === 0 ? at : null,
          createdAt: new Date(at.getTime() + i),
        }));
      }
      // 60 stored ids, in reverse, and 40 unknown ones.
      const ids = [
        ...Array.from({ length: 60 }, (_, i) => `many-${59 - i}`),
        ...Array.from({ length: 40 }, (_, i) => `none-${i}`),
      ];
      calls.length = 0;
      const found = await storage.findManyByIds!("many", ids);
      assert.deepEqual(calls, ["findMany"], "one read");
      const even = Array.from({ length: 30 }, (_, i) => `many-${2 * i}`);
      assert.deepEqual(found.map((record) => record.id).sort(), [...even].sort());
      for (const record of found) assert.deepEqual(record, await storage.findById(record.id));
      assert.deepEqual(await storage.findManyByIds!("many-none", ids), []);
    });

    it("findTenantPool is one SELECT on the index of 0018 and one findUnique; findByReplacement one findMany; setTenantPool one UPDATE", async () => {
      await reset();
      const { spied: apiKey, calls } = spyCalls<PrismaApiKeyDelegate>(prisma.apiKey);
      const raw: string[] = [];
      const client = {
        apiKey,
        $queryRawUnsafe: (query: string, ...values: unknown[]) => {
          raw.push(query);
          return prisma.$queryRawUnsafe(query, ...values);
        },
      };
      const storage = new PrismaApiKeyStorage(client, { storesCredits: true });
      const updatedAt = new Date("2030-01-01T00:00:00.000Z");
      for (let i = 0; i < 50; i++) {
        await storage.insert({
          id: `pool-${i}`,
          tenantId: "pool",
          name: `key ${i}`,
          environment: "live",
          prefix: `PoolPrefix${String(i).padStart(2, "0")}`,
          hash: "A".repeat(43),
          pepperVersion: 1,
          scopes: ["projects:read"],
          lastUsedAt: null,
          expiresAt: null,
          revokedAt: null,
          createdBy: null,
          createdAt: new Date(updatedAt.getTime() + i),
          replacedByKeyId: i === 7 ? "pool-8" : null,
          credits: {
            remaining: i,
            updatedAt: new Date(updatedAt.getTime() + (i === 20 ? 10_000 : i % 3)),
            sharedBy: "tenant",
          },
        });
      }
      calls.length = 0;
      assert.equal((await storage.findTenantPool!("pool"))?.id, "pool-20");
      assert.equal(await storage.findTenantPool!("pool-none"), null);
      assert.equal((await storage.findByReplacement("pool", "pool-8"))?.id, "pool-7");
      assert.equal(await storage.findByReplacement("pool-other", "pool-8"), null);
      assert.deepEqual(calls, ["findUnique", "findMany", "findMany"]);
      assert.equal(raw.length, 2);
      // The planner reads one row of the index: with sequential scans and sorts off (the table is
      // small, and its statistics may predate these rows), a plan with a Sort or another index
      // means the index does not answer the query in its order.
      await prisma.$executeRawUnsafe("ANALYZE api_keys");
      const plan = await prisma.$transaction!(async (tx) => {
        const sql = tx as unknown as typeof prisma;
        await sql.$executeRawUnsafe("SET LOCAL enable_seqscan = off");
        await sql.$executeRawUnsafe("SET LOCAL enable_sort = off");
        return await sql.$queryRawUnsafe(`EXPLAIN ${raw[0].replace("$1", "'pool'")}`);
      }) as { "QUERY PLAN": string }[];
      const text = plan.map((row) => row["QUERY PLAN"]).join("\n");
      assert.match(text, /Index Scan using api_keys_tenant_id_pool_updated_at_idx/, text);
      assert.doesNotMatch(text, /Sort/, text);
      // A write-back of the pool: every copy in one statement, the rest of each record kept.
      const at = new Date("2030-02-01T00:00:00.000Z");
      const prefixes = await storage.setTenantPool!("pool", 5, at);
      assert.equal(prefixes.length, 50);
      assert.deepEqual(await storage.setTenantPool!("pool-none", 5, at), []);
      const read = await storage.findById("pool-3");
      assert.deepEqual(read?.credits, { remaining: 5, updatedAt: at, sharedBy: "tenant" });
      assert.equal(read?.replacedByKeyId, null);
      // Every copy alike: the newest record.
      assert.equal((await storage.findTenantPool!("pool"))?.id, "pool-49");
    });
  });
}
