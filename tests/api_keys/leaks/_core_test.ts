/** What both leaked-key handlers share: option checks, verify-then-revoke, responses. */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  bodyBytes,
  compileLeakCore,
  errorResponse,
  optionalFunction,
  positiveInteger,
  revokeExposedKey,
  timerMs,
} from "../../../api_keys/leaks/_core.ts";
import { type ApiKeyStorage, generateKey, InMemoryApiKeyStorage } from "../../../api_keys/mod.ts";
import { makeService, overrideStorage, READ_ORDERS } from "../helpers.ts";
import { eventually } from "../../eventually.ts";

/** `inner` without its capabilities, `findById` (read by revoke) slowed so reports overlap. */
function slowRevokes(inner: InMemoryApiKeyStorage): ApiKeyStorage {
  return overrideStorage(inner, {
    findById: async (id: string) => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      return inner.findById(id);
    },
  });
}

/**
 * A key reported once on a storage without its capabilities whose first `markRevoked` waits for
 * `settle()`, then `lands` (writes) or `fails`: that report has failed at the storage deadline;
 * `writes()` counts the `markRevoked` calls.
 */
async function reportedPastDeadline(then: "lands" | "fails") {
  const inner = new InMemoryApiKeyStorage();
  let settle!: () => void;
  const gate = new Promise<void>((resolve) => settle = resolve);
  let writes = 0;
  const storage = overrideStorage(inner, {
    markRevoked: async (...args: Parameters<InMemoryApiKeyStorage["markRevoked"]>) => {
      if (writes++ === 0) {
        await gate;
        if (then === "fails") throw new Error("storage down");
      }
      return inner.markRevoked(...args);
    },
  });
  const { service, events } = makeService({ storage, cache: false, storageTimeoutMs: 30 });
  const { key } = await service.create({ tenantId: "t1", name: "k", scopes: READ_ORDERS });
  events.length = 0;
  const core = compileLeakCore({ service }, "O");
  await assert.rejects(revokeExposedKey(core, key, "content", null), UNAVAILABLE);
  // GitHub's retry, or a public report, before the write settles: the key is still active.
  await assert.rejects(revokeExposedKey(core, key, "public_report", null), UNAVAILABLE);
  return { core, key, events, writes: () => writes, settle };
}

/** A report's failure on a storage failure (the handlers answer 503). */
const UNAVAILABLE = /API key storage is unavailable/;

describe("leak core", () => {
  it("checks options, naming them", () => {
    assert.equal(positiveInteger(undefined, 7, "n"), 7);
    assert.equal(positiveInteger(3, 7, "n"), 3);
    for (const bad of [0, -1, 1.5, "3"]) {
      assert.throws(() => positiveInteger(bad, 7, "n"), /^TypeError: n /);
    }
    assert.equal(positiveInteger(9, 7, "n", 9), 9);
    assert.throws(() => positiveInteger(10, 7, "n", 9), /^TypeError: n must be at most 9$/);
    assert.equal(timerMs(undefined, 7, "t"), 7);
    assert.equal(timerMs(2 ** 31 - 1, 7, "t"), 2 ** 31 - 1);
    assert.throws(() => timerMs(2 ** 31, 7, "t"), /^TypeError: t must be at most 2147483647$/);
    optionalFunction(undefined, "f");
    assert.throws(() => optionalFunction(1, "f"), /f must be a function/);
    assert.throws(() => compileLeakCore(null as never, "Opts"), /Opts must be an object/);
    assert.throws(() => compileLeakCore({ service: {} } as never, "Opts"), TypeError);
  });

  it("revokes a reported key once, emitting api_key.exposed before api_key.revoked", async () => {
    const { service, events } = makeService();
    const exposed: unknown[] = [];
    const core = compileLeakCore({ service, onExposed: (event) => void exposed.push(event) }, "O");
    const { id, key } = await service.create({ tenantId: "t1", name: "k", scopes: READ_ORDERS });
    events.length = 0;
    assert.equal(await revokeExposedKey(core, key, "content", "https://example.com/x"), "revoked");
    assert.deepEqual(events.map((event) => event.type), ["api_key.exposed", "api_key.revoked"]);
    assert.equal(exposed.length, 1);
    assert.deepEqual(
      { ...(exposed[0] as object), at: undefined },
      {
        type: "api_key.exposed",
        at: undefined,
        keyId: id,
        tenantId: "t1",
        prefix: (exposed[0] as { prefix: string }).prefix,
        environment: "live",
        source: "content",
        url: "https://example.com/x",
      },
    );
    assert.equal(await revokeExposedKey(core, key, "content", null), "known");
    const unknown = generateKey({ environment: "live" }).raw;
    assert.equal(await revokeExposedKey(core, unknown, "content", null), "unknown");
  });

  it("two reports of one key in flight on two instances: api_key.exposed once, from the one that revoked (markRevokedIfActive)", async () => {
    const inner = new InMemoryApiKeyStorage();
    const storage = {
      ...slowRevokes(inner),
      markRevokedIfActive: inner.markRevokedIfActive.bind(inner),
    } as ApiKeyStorage;
    const one = makeService({ storage, cache: false });
    const two = makeService({ storage, cache: false });
    const { key } = await one.service.create({ tenantId: "t1", name: "k", scopes: READ_ORDERS });
    one.events.length = 0;
    const outcomes = await Promise.all([
      revokeExposedKey(compileLeakCore({ service: one.service }, "O"), key, "content", null),
      revokeExposedKey(compileLeakCore({ service: two.service }, "O"), key, "public_report", null),
    ]);
    assert.deepEqual([...outcomes].sort(), ["known", "revoked"]);
    const types = [...one.events, ...two.events].map((event) => event.type);
    assert.deepEqual(types, ["api_key.exposed", "api_key.revoked"]);
    const winner = outcomes[0] === "revoked" ? one : two;
    assert.deepEqual(winner.events.map((event) => event.type), types);
  });

  it("two reports of one key in flight on a storage without markRevokedIfActive: api_key.exposed once (an in-process claim)", async () => {
    const { service, events } = makeService({
      storage: slowRevokes(new InMemoryApiKeyStorage()),
      cache: false,
    });
    const { key } = await service.create({ tenantId: "t1", name: "k", scopes: READ_ORDERS });
    events.length = 0;
    const partner = compileLeakCore({ service }, "O");
    const publicReports = compileLeakCore({ service }, "O");
    const outcomes = await Promise.all([
      revokeExposedKey(partner, key, "content", null),
      revokeExposedKey(publicReports, key, "public_report", null),
      revokeExposedKey(partner, key, "commit", null),
    ]);
    assert.deepEqual([...outcomes].sort(), ["known", "known", "revoked"]);
    assert.deepEqual(events.map((event) => event.type), ["api_key.exposed", "api_key.revoked"]);
  });

  it("a report meeting another's revoke in flight shares its outcome: its failure fails both (retried), then a report revokes", async () => {
    const inner = new InMemoryApiKeyStorage();
    let failNext = true;
    const storage = overrideStorage(inner, {
      markRevoked: async (
        ...args: Parameters<InMemoryApiKeyStorage["markRevoked"]>
      ) => {
        await new Promise((resolve) => setTimeout(resolve, 20));
        if (failNext) {
          failNext = false;
          throw new Error("storage down");
        }
        return inner.markRevoked(...args);
      },
    });
    const { service, events } = makeService({ storage, cache: false });
    const { key } = await service.create({ tenantId: "t1", name: "k", scopes: READ_ORDERS });
    events.length = 0;
    const core = compileLeakCore({ service }, "O");
    const outcomes = await Promise.allSettled([
      revokeExposedKey(core, key, "public_report", null),
      revokeExposedKey(core, key, "content", null), // GitHub's report, while the first one runs
    ]);
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ["rejected", "rejected"],
      "no report is answered as handled while the key stays active",
    );
    assert.equal(events.length, 0);
    assert.equal(await revokeExposedKey(core, key, "content", null), "revoked"); // GitHub retries
    assert.deepEqual(events.map((event) => event.type), ["api_key.exposed", "api_key.revoked"]);
  });

  it("a revoke whose write lands past the storage deadline keeps its claim until then: a report meanwhile shares its 503 and api_key.exposed is emitted once (storage without markRevokedIfActive)", async () => {
    const { core, key, events, writes, settle } = await reportedPastDeadline("lands");
    assert.equal(writes(), 1, "no second revoke while the first one's write may still land");
    settle();
    await eventually(() => events.length === 2, "the late write's events");
    assert.equal(await revokeExposedKey(core, key, "content", null), "known");
    assert.deepEqual(events.map((event) => event.type), ["api_key.exposed", "api_key.revoked"]);
  });

  it("a revoke whose write fails past the storage deadline gives its claim up then: the next report revokes", async () => {
    const { core, key, events, writes, settle } = await reportedPastDeadline("fails");
    assert.equal(writes(), 1);
    settle();
    let outcome: string | undefined;
    await eventually(async () => {
      outcome = await revokeExposedKey(core, key, "content", null).catch(() => undefined);
      return outcome !== undefined;
    }, "a report after the late failure");
    assert.equal(outcome, "revoked");
    assert.equal(writes(), 2);
    assert.deepEqual(events.map((event) => event.type), ["api_key.exposed", "api_key.revoked"]);
  });

  it("an injected clock answering anything but a valid Date fails the report closed, as a throwing one: nothing revoked, no event", async () => {
    const broken: [string, () => unknown][] = [
      ["Invalid Date", () => new Date(NaN)],
      ["a number", () => Date.UTC(2030, 0, 1)],
      ["a string", () => "2030-01-01T00:00:00.000Z"],
      ["a throw", () => {
        throw new Error("clock down");
      }],
    ];
    for (const [name, answer] of broken) {
      const { service, events } = makeService();
      const exposed: unknown[] = [];
      let clock = answer;
      const core = compileLeakCore({
        service,
        clock: () => clock() as Date,
        onExposed: (event) => void exposed.push(event),
      }, "O");
      const { id, key } = await service.create({ tenantId: "t1", name: "k", scopes: READ_ORDERS });
      events.length = 0;
      await assert.rejects(
        revokeExposedKey(core, key, "content", null),
        name === "a throw" ? /clock down/ : /^TypeError: O\.clock must answer a valid Date$/,
        name,
      );
      assert.deepEqual([events, exposed], [[], []], name);
      assert.equal((await service.verify(key)).keyId, id, `${name}: the key is still active`);
      clock = () => new Date("2030-01-02T00:00:00.000Z");
      assert.equal(await revokeExposedKey(core, key, "content", null), "revoked", name);
      assert.deepEqual(events.map((event) => [event.type, event.at]), [
        ["api_key.exposed", new Date("2030-01-02T00:00:00.000Z")],
        ["api_key.revoked", new Date("2030-01-01T00:00:00.000Z")],
      ], name);
    }
  });

  it("bounds bodies before copying and answers errors in the envelope's shape", () => {
    assert.deepEqual(bodyBytes("abc", 3), new TextEncoder().encode("abc"));
    assert.equal(bodyBytes("abcd", 3), null);
    assert.equal(bodyBytes("éé", 3), null);
    assert.equal(bodyBytes(new Uint8Array(4), 3), null);
    assert.throws(() => bodyBytes(42 as never, 3), TypeError);
    const response = errorResponse(422, "bad_report", "Bad report");
    assert.equal(response.status, 422);
    assert.equal(response.headers["cache-control"], "no-store");
    assert.deepEqual(JSON.parse(response.body), {
      success: false,
      statusCode: 422,
      error: { code: "bad_report", message: "Bad report" },
    });
  });
});
