/**
 * `./api-keys/audit` end to end: its exports, and the admin route `GET
 * /audit` (tenant-bound, gated by `canManage` with action `audit`, a cursor)
 * over a service whose admin routes pass `actorOf(request)` as the actor.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import * as audit from "../../../api_keys/audit/mod.ts";
import { ApiKeysService, InMemoryApiKeyStorage } from "../../../api_keys/mod.ts";
import {
  type AdminAction,
  type ApiKeysAdminOptions,
  type AuditPage,
  createApiKeysAdminHandler,
} from "../../../api_keys/admin/mod.ts";

const CHECKPOINT_KEY = "an-audit-key-of-at-least-thirty-two-bytes";
const PEPPERS = { 1: "a-pepper-of-at-least-thirty-two-bytes" };

interface Caller {
  tenant: string;
  user: string;
}

function setup(
  withAudit = true,
  policy: ApiKeysAdminOptions<Caller>["policy"] = () => null,
  storage: InMemoryApiKeyStorage = new InMemoryApiKeyStorage(),
) {
  const info = console.info;
  console.info = () => {};
  const service = new ApiKeysService({
    peppers: PEPPERS,
    storage,
    ...(withAudit ? { audit: { checkpointKey: CHECKPOINT_KEY } } : {}),
  });
  console.info = info;
  const decisions: AdminAction[] = [];
  let allowAudit = true;
  const handle = createApiKeysAdminHandler<Caller>({
    service,
    scopes: ["projects:read"],
    tenantOf: (caller) => caller.tenant,
    actorOf: (caller) => caller.user,
    canManage: (_caller, action) => {
      decisions.push(action);
      return action !== "audit" || allowAudit;
    },
    policy,
  });
  const call = async (
    method: string,
    path: string,
    caller: Caller,
    options: { body?: unknown; query?: Record<string, string>; csrf?: boolean } = {},
  ) => {
    const answer = await handle({
      method,
      path,
      query: (name) => options.query?.[name] ?? null,
      headers: (name) =>
        name.toLowerCase() === "x-requested-with" && options.csrf !== false
          ? "api-keys-manager"
          : null,
      body: options.body === undefined ? null : JSON.stringify(options.body),
    }, caller);
    return { status: answer!.status, json: JSON.parse(answer!.body) };
  };
  return { service, handle, call, decisions, deny: () => allowAudit = false };
}

describe("api_keys/audit/mod.ts", () => {
  it("records the first writes of a new service, made before its audit and usage code has loaded", async () => {
    const info = console.info;
    console.info = () => {};
    const service = new ApiKeysService({
      peppers: PEPPERS,
      storage: new InMemoryApiKeyStorage(),
      audit: { checkpointKey: CHECKPOINT_KEY },
      usage: true,
    });
    console.info = info;
    // No ready(), no await between the constructor and the writes: each waits for the load.
    const scope = { resource: "orders", level: "read" } as const;
    const { key, id } = await service.create({ tenantId: "t1", name: "ci", scopes: [scope] });
    await service.authorize(key, { requiredScope: scope });
    await service.revoke(id);
    const actions = (await service.auditLog("t1")).records.map((r) => r.action);
    assert.deepEqual(actions, ["key.revoked", "key.created"]);
    assert.equal((await service.verifyAuditLog("t1")).ok, true);
    await service.close();
    const now = new Date();
    const to = new Date(now.getTime() + 3_600_000);
    const usage = await service.usage("t1", { from: now, to, granularity: "hour" });
    assert.equal(usage[0]?.accepted, 1);
  });

  it("exports the chain's functions and the action list", () => {
    assert.equal(typeof audit.verifyAuditChain, "function");
    assert.equal(typeof audit.signCheckpoint, "function");
    assert.equal(audit.GENESIS_HASH, "0".repeat(64));
    assert.ok(audit.AUDIT_ACTIONS.includes("key.created"));
  });

  it("storedAuditRecord turns an export's record lines into what verifyAuditChain takes (null for a checkpoint line)", async () => {
    const { service } = setup();
    const { id } = await service.create({
      tenantId: "acme",
      name: "ci",
      scopes: [{ resource: "orders", level: "read" }],
    });
    await service.revoke(id, { actor: "bob" });
    const lines: string[] = [];
    for await (const line of service.exportAuditLog("acme")) lines.push(line);
    const records = lines.map((line) => audit.storedAuditRecord(line));
    assert.equal(records.at(-1), null, "the last line is a checkpoint");
    const kept = records.filter((r) => r !== null);
    assert.equal(kept.length, 2);
    assert.deepEqual(await audit.verifyAuditChain(kept, { tenantId: "acme" }), {
      ok: true,
      checked: 2,
      head: { seq: 2, hash: kept[1].hash },
    });
    // A parsed line is taken as well; an edited one is found.
    const parsed = JSON.parse(lines[1].replace('"actor":"bob"', '"actor":"eve"'));
    const edited = [kept[0], audit.storedAuditRecord(parsed)!];
    const answer = await audit.verifyAuditChain(edited, { tenantId: "acme" });
    assert.deepEqual(answer.ok ? undefined : [answer.problem, answer.seq], ["edited", 2]);
    for (const line of ["{}", "[1]", '{"type":"record","seq":"1"}', "not json"]) {
      assert.throws(
        () => audit.storedAuditRecord(line),
        line === "not json" ? SyntaxError : TypeError,
      );
    }
    await service.close();
  });

  it("verifyAuditExport verifies the service's export, from fromSeq too, with its checkpointKey only", async () => {
    const { service } = setup();
    const scopes = [{ resource: "orders", level: "read" as const }];
    for (let i = 0; i < 3; i++) {
      const { id } = await service.create({ tenantId: "acme", name: `k${i}`, scopes });
      await service.revoke(id, { actor: "bob" });
    }
    // for await, not Array.fromAsync: the suite also runs on Node 20, which lacks it.
    const lines: string[] = [];
    for await (const line of service.exportAuditLog("acme")) lines.push(line);
    const expected = { tenantId: "acme", checkpointKey: CHECKPOINT_KEY };
    const whole = await audit.verifyAuditExport(lines, expected);
    assert.deepEqual(whole.ok && whole.checked, 6);
    const fromFour: string[] = [];
    for await (const line of service.exportAuditLog("acme", 4)) fromFour.push(line);
    const part = await audit.verifyAuditExport(fromFour, { ...expected, fromSeq: 4 });
    assert.deepEqual(part.ok && part.checked, 3);
    const cut = await audit.verifyAuditExport(lines.slice(0, -2), expected);
    assert.equal(cut.ok, false);
    const elsewhere = await audit.verifyAuditExport(lines, {
      ...expected,
      checkpointKey: `${CHECKPOINT_KEY}-elsewhere`,
    });
    assert.equal(elsewhere.ok ? "ok" : elsewhere.problem, "checkpoint_invalid");
    await service.close();
  });

  it("GET /audit answers the tenant's records by the routes' actors, newest first, with a cursor", async () => {
    const { service, call, decisions } = setup();
    const alice = { tenant: "acme", user: "alice@acme" };
    const created = await call("POST", "/keys", alice, {
      body: { name: "ci", scopes: ["projects:read"], environment: "live" },
    });
    assert.equal(created.status, 201, JSON.stringify(created.json));
    const id = created.json.record.id as string;
    await call("PATCH", `/keys/${id}`, { tenant: "acme", user: "bob@acme" }, {
      body: { name: "ci-renamed" },
    });
    await call("DELETE", `/keys/${id}`, { tenant: "acme", user: "carol@acme" });
    await service.create({
      tenantId: "other",
      name: "theirs",
      scopes: [{ resource: "projects", level: "read" }],
    });

    const first = await call("GET", "/audit", alice, { query: { limit: "2" } });
    assert.equal(first.status, 200);
    const page = first.json as AuditPage;
    assert.deepEqual(page.records.map((r) => [r.action, r.actor, r.keyId]), [
      ["key.revoked", "carol@acme", id],
      ["key.renamed", "bob@acme", id],
    ]);
    assert.deepEqual(page.records[1].changes.name, { before: "ci", after: "ci-renamed" });
    assert.equal(decisions.at(-1), "audit");
    const rest = await call("GET", "/audit", alice, {
      query: { limit: "2", cursor: page.nextCursor! },
    });
    assert.deepEqual(rest.json.records.map((r: { actor: string }) => r.actor), ["alice@acme"]);
    assert.equal(rest.json.nextCursor, null);
    const ofAction = await call("GET", "/audit", alice, { query: { action: "key.renamed" } });
    assert.equal(ofAction.json.records.length, 1);
    const theirs = await call("GET", "/audit", { tenant: "other", user: "eve" });
    assert.deepEqual(theirs.json.records.map((r: { tenantId: string }) => r.tenantId), ["other"]);
    const bad = await call("GET", "/audit", alice, { query: { cursor: "nope" } });
    assert.equal(bad.status, 400);
    assert.equal(bad.json.field ?? bad.json.details?.field ?? "cursor", "cursor");
    const badTime = await call("GET", "/audit", alice, { query: { from: "yesterday" } });
    assert.equal(badTime.status, 400);
    // The strict rules of the other routes: GET /keys's limit, the ISO 8601 instant of the usage window.
    for (
      const query of [
        { limit: "0x19" } as Record<string, string>,
        { limit: "1e1" },
        { limit: " 7 " },
        { limit: "101" },
        { from: "+275760-09-13T00:00:00.000Z" },
        { to: "-271821-04-20T00:00:00.000Z" },
        { from: "Tue, 01 Dec 2026" },
        { to: "2026-12-01" },
      ]
    ) {
      const loose = await call("GET", "/audit", alice, { query });
      assert.equal(loose.status, 400, JSON.stringify(query));
      assert.equal(loose.json.error.details.field, Object.keys(query)[0], JSON.stringify(query));
    }
    const strict = await call("GET", "/audit", alice, {
      query: { limit: "7", from: "2020-01-01T00:00:00Z", to: "9999-12-31T00:00:00+01:00" },
    });
    assert.equal(strict.json.records.length, 3);
    assert.equal((await service.verifyAuditLog("acme")).ok, true);
  });

  /** The admin routes of `setup()`, a key of acme named "a", and bob of acme. */
  async function keyNamedA() {
    const { service, call } = setup();
    const key = await service.create({
      tenantId: "acme",
      name: "a",
      scopes: [{ resource: "projects", level: "read" }],
    });
    return { service, call, key, bob: { tenant: "acme", user: "bob@acme" } };
  }

  it("two renames of one key at once record the names each replaced (a to b, then b to c, not a twice)", async () => {
    const { service, call, key, bob } = await keyNamedA();
    const answers = await Promise.all(
      ["b", "c", "d"].map((name) => call("PATCH", `/keys/${key.id}`, bob, { body: { name } })),
    );
    assert.deepEqual(answers.map((a) => a.status), [200, 200, 200]);
    const { records } = await service.auditLog("acme", { action: "key.renamed" });
    const steps = records.reverse().map((r) => r.changes.name as { before: string; after: string });
    assert.equal(steps[0].before, "a");
    for (let i = 1; i < steps.length; i++) {
      assert.equal(steps[i].before, steps[i - 1].after, JSON.stringify(steps));
    }
    const { name } = (await call("GET", `/keys/${key.id}`, bob)).json;
    assert.equal(steps.at(-1)!.after, name, "the last record's after is the stored name");
  });

  it("two tabs renaming one key with expectedName: one renames (recorded a to b), the other is a 409 recording nothing", async () => {
    const { service, call, key, bob } = await keyNamedA();
    const answers = await Promise.all(
      ["b", "c"].map((name) =>
        call("PATCH", `/keys/${key.id}`, bob, { body: { name, expectedName: "a" } })
      ),
    );
    assert.deepEqual(answers.map((a) => a.status).sort(), [200, 409]);
    const won = answers.find((a) => a.status === 200)!.json.name;
    assert.equal(answers.find((a) => a.status === 409)!.json.error.code, "api_key_name_changed");
    const { records } = await service.auditLog("acme", { action: "key.renamed" });
    assert.deepEqual(records.map((r) => [r.actor, r.changes]), [
      ["bob@acme", { name: { before: "a", after: won } }],
    ]);
    assert.equal((await service.verifyAuditLog("acme")).ok, true);
  });

  it("a rename whose key is renamed again before each of 5 tries is a 503, recording nothing", async () => {
    /** Reads every key under a name it no longer has (another rename always came between). */
    class Renamed extends InMemoryApiKeyStorage {
      tries = 0;
      override async findById(id: string) {
        const record = await super.findById(id);
        return record === null ? null : { ...record, name: `stale ${this.tries}` };
      }
      override replaceNameForTenant(tenantId: string, id: string, expected: string, name: string) {
        this.tries++;
        return super.replaceNameForTenant(tenantId, id, expected, name);
      }
    }
    const storage = new Renamed();
    const { service, call } = setup(true, () => null, storage);
    const key = await service.create({
      tenantId: "acme",
      name: "a",
      scopes: [{ resource: "projects", level: "read" }],
    });
    const bob = { tenant: "acme", user: "bob@acme" };
    const error = console.error;
    const logged: unknown[][] = [];
    console.error = (...args: unknown[]) => logged.push(args);
    const answer = await call("PATCH", `/keys/${key.id}`, bob, { body: { name: "b" } })
      .finally(() => console.error = error);
    assert.equal(answer.status, 503);
    assert.equal(logged.length, 1, "the handler's default onError logs it once");
    assert.equal(storage.tries, 5);
    assert.equal((await service.auditLog("acme", { action: "key.renamed" })).records.length, 0);
  });

  it("GET /audit is refused by canManage, and 501 without the audit option", async () => {
    const { call, deny } = setup();
    deny();
    assert.equal((await call("GET", "/audit", { tenant: "acme", user: "a" })).status, 403);
    const without = setup(false);
    assert.equal((await without.call("GET", "/audit", { tenant: "acme", user: "a" })).status, 501);
  });

  it("records an escalation refused by the admin routes (actor from actorOf, what was asked), and only counts CSRF refusals", async () => {
    const { service, handle, call } = setup(
      true,
      ({ action }) =>
        action === "revoke" || action === "create" ? { scopes: ["projects:write"] } : null,
    );
    const mallory = { tenant: "acme", user: "mallory@acme" };
    const key = await service.create({
      tenantId: "acme",
      name: "ci",
      scopes: [{ resource: "projects", level: "read" }],
    });
    const revoke = await call("DELETE", `/keys/${key.id}`, mallory);
    assert.equal(revoke.status, 403);
    assert.equal(revoke.json.error.code, "api_key_escalation_refused");
    const create = await call("POST", "/keys", mallory, {
      body: { name: "x", scopes: ["projects:read"] },
    });
    assert.equal(create.status, 403);
    const { records } = await service.auditLog("acme");
    const { prefix } = (await service.listSummaries("acme")).find((k) => k.id === key.id)!;
    const refused = records.filter((r) => r.action === "key.escalation_refused");
    assert.deepEqual(
      refused.map((r) => [r.actor, r.outcome, r.keyId, r.prefix, r.changes]),
      [
        ["mallory@acme", "refused", null, null, {
          asked: { before: null, after: "create" },
          exceeds: { before: null, after: { scopes: ["projects:write"] } },
        }],
        ["mallory@acme", "refused", key.id, prefix, {
          asked: { before: null, after: "revoke" },
          exceeds: { before: null, after: { scopes: ["projects:write"] } },
        }],
      ],
    );
    assert.equal((await service.verify(key.key)).keyId, key.id);

    assert.equal(handle.csrfRefused, 0);
    const csrf = await call("DELETE", `/keys/${key.id}`, mallory, { csrf: false });
    assert.equal(csrf.status, 403);
    assert.equal(csrf.json.error.code, "csrf_refused");
    assert.equal(handle.csrfRefused, 1);
    assert.equal((await service.auditLog("acme")).records.length, records.length);
    assert.equal((await service.verifyAuditLog("acme")).ok, true);
  });

  it("without the audit option, a refused escalation is answered the same and nothing is recorded", async () => {
    const { service, call } = setup(false, () => ({ scopes: ["projects:write"] }));
    const key = await service.create({
      tenantId: "acme",
      name: "ci",
      scopes: [{ resource: "projects", level: "read" }],
    });
    const revoke = await call("DELETE", `/keys/${key.id}`, { tenant: "acme", user: "m" });
    assert.equal(revoke.status, 403);
    assert.equal(revoke.json.error.code, "api_key_escalation_refused");
  });

  it("GET /config's can.audit: true with the audit option and canManage's yes, false without the option", async () => {
    const caller = { tenant: "acme", user: "a" };
    const { call, deny } = setup();
    assert.equal((await call("GET", "/config", caller)).json.can.audit, true);
    deny();
    assert.equal((await call("GET", "/config", caller)).json.can.audit, false);
    const without = setup(false);
    assert.equal((await without.call("GET", "/config", caller)).json.can.audit, false);
  });
});
