/**
 * `PrismaApiKeyStorage.rotate` over a client without `$transaction`: the new
 * row is inserted first, then the old one is marked with a conditional update;
 * when that update fails or loses, the new row (whose raw key was never handed
 * out) is marked revoked. A delegate fails at each step here, the
 * compensation included, and `list` shows what is left.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  ApiKeyOperationError,
  type ApiKeyRecord,
  ApiKeyStorageError,
  PrismaApiKeyStorage,
} from "../../api_keys/mod.ts";
import { fakePrismaClient } from "./fake_prisma.ts";
import { makeService, READ_ORDERS, rejection } from "./helpers.ts";

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
