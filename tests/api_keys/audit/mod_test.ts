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
  type AuditPage,
  createApiKeysAdminHandler,
} from "../../../api_keys/admin/mod.ts";

const CHECKPOINT_KEY = "an-audit-key-of-at-least-thirty-two-bytes";
const PEPPERS = { 1: "a-pepper-of-at-least-thirty-two-bytes" };

interface Caller {
  tenant: string;
  user: string;
}

function setup(withAudit = true) {
  const info = console.info;
  console.info = () => {};
  const service = new ApiKeysService({
    peppers: PEPPERS,
    storage: new InMemoryApiKeyStorage(),
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
    policy: () => null,
  });
  const call = async (
    method: string,
    path: string,
    caller: Caller,
    options: { body?: unknown; query?: Record<string, string> } = {},
  ) => {
    const answer = await handle({
      method,
      path,
      query: (name) => options.query?.[name] ?? null,
      headers: (name) => name.toLowerCase() === "x-requested-with" ? "api-keys-manager" : null,
      body: options.body === undefined ? null : JSON.stringify(options.body),
    }, caller);
    return { status: answer!.status, json: JSON.parse(answer!.body) };
  };
  return { service, call, decisions, deny: () => allowAudit = false };
}

describe("api_keys/audit/mod.ts", () => {
  it("exports the chain's functions and the action list", () => {
    assert.equal(typeof audit.verifyAuditChain, "function");
    assert.equal(typeof audit.signCheckpoint, "function");
    assert.equal(audit.GENESIS_HASH, "0".repeat(64));
    assert.ok(audit.AUDIT_ACTIONS.includes("key.created"));
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
    assert.equal((await service.verifyAuditLog("acme")).ok, true);
  });

  it("GET /audit is refused by canManage, and 501 without the audit option", async () => {
    const { call, deny } = setup();
    deny();
    assert.equal((await call("GET", "/audit", { tenant: "acme", user: "a" })).status, 403);
    const without = setup(false);
    assert.equal((await without.call("GET", "/audit", { tenant: "acme", user: "a" })).status, 501);
  });
});
