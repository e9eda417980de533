import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { generateKey, type LeakReportRequest } from "../../../api_keys/mod.ts";
import {
  createPublicRevocationHandler,
  type PublicRevocationOptions,
} from "../../../api_keys/leaks/public_revocation.ts";
import {
  assertReportsRecordNoUse,
  breakChecksum,
  isPrefixLookup,
  makeService,
  overrideStorage,
  PEPPER_1,
  READ_ORDERS,
  spyStorage,
} from "../helpers.ts";
import { collectUnhandledRejections } from "../../reliability/harness.ts";
import { importNestarcKey } from "../verify/nestarc.ts";

/** Counts HMAC verifications (the hasher's real and dummy work) while `run` runs. */
async function countingHmacs<T>(run: () => Promise<T>): Promise<{ result: T; hmacs: number }> {
  const subtle = crypto.subtle;
  const original = subtle.verify;
  let hmacs = 0;
  subtle.verify = function (this: SubtleCrypto, ...args: Parameters<SubtleCrypto["verify"]>) {
    const algorithm = args[0];
    if ((typeof algorithm === "string" ? algorithm : algorithm.name) === "HMAC") hmacs++;
    return original.apply(this, args);
  } as SubtleCrypto["verify"];
  try {
    return { result: await run(), hmacs };
  } finally {
    subtle.verify = original;
  }
}

function setup(options: Partial<PublicRevocationOptions> = {}) {
  const log: { type: string }[] = [];
  const spied = spyStorage();
  const made = makeService({ storage: spied.storage, onEvent: (event) => void log.push(event) });
  const report = createPublicRevocationHandler({
    service: made.service,
    clock: made.clocks.clock,
    ...options,
  });
  return { ...made, log, calls: spied.calls, report };
}

const request = (body: string | Uint8Array, contentType?: string): LeakReportRequest => ({
  body,
  headers: (name) => name === "content-type" ? contentType : undefined,
});

describe("public revocation handler", () => {
  it("answers identically for existing, unknown and malformed keys, with the same verify work", async () => {
    const { report, service, calls, log } = setup();
    const { id, key } = await service.create({ tenantId: "t1", name: "k", scopes: READ_ORDERS });
    log.length = 0;
    const inputs: [string, LeakReportRequest][] = [
      ["existing", request(key)],
      ["existing as JSON", request(JSON.stringify({ key }), "application/json")],
      [
        "existing as a form",
        request(`key=${encodeURIComponent(key)}`, "application/x-www-form-urlencoded"),
      ],
      ["unknown", request(generateKey({ environment: "live" }).raw)],
      ["bad checksum", request(breakChecksum(generateKey({ environment: "live" }).raw))],
      ["other namespace", request(generateKey({ environment: "live", namespace: "zz" }).raw)],
      ["garbage", request("hello")],
      ["empty", request("")],
      ["bad JSON", request("{", "application/json")],
      ["JSON without key", request("[1]", "application/json")],
      ["oversized", request("x".repeat(100_000))],
      ["invalid UTF-8", request(new Uint8Array([0xff, 0xfe, 0x00]))],
      ["unreadable", { body: 42 as unknown as string, headers: () => undefined }],
    ];
    let expected: unknown;
    const work: Record<string, { lookups: number; hmacs: number; other: string[] }> = {};
    for (const [name, input] of inputs) {
      calls.length = 0;
      const { result, hmacs } = await countingHmacs(async () => {
        const response = await report(input);
        // answered before any verification work started
        assert.deepEqual(calls, [], name);
        await report.drain();
        return response;
      });
      expected ??= result;
      assert.deepEqual(result, expected, name);
      work[name] = {
        lookups: calls.filter((call) => isPrefixLookup(call)).length,
        hmacs,
        other: calls.filter((call) => !isPrefixLookup(call)),
      };
    }
    assert.deepEqual(expected, {
      status: 202,
      headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" },
      body: '{"success":true,"statusCode":202,"data":{"status":"received"}}',
    });
    for (const [name, counts] of Object.entries(work)) {
      assert.equal(counts.lookups, 1, `${name}: one prefix lookup`);
      assert.equal(counts.hmacs, 1, `${name}: one HMAC`);
    }
    // only the genuine key, once verified, is then revoked (after the answer)
    assert.ok(work.existing.other.includes("markRevokedIfActive"));
    for (const name of ["unknown", "bad checksum", "garbage", "oversized", "unreadable"]) {
      assert.deepEqual(work[name].other, [], name);
    }
    await assert.rejects(service.verify(key), { code: "api_key_revoked" });
    const relevant = log.filter((event) => event.type !== "api_key.auth_failed");
    assert.deepEqual(relevant.map((event) => event.type), ["api_key.exposed", "api_key.revoked"]);
    assert.deepEqual(relevant[0], {
      type: "api_key.exposed",
      at: new Date("2030-01-01T00:00:00.000Z"),
      keyId: id,
      tenantId: "t1",
      prefix: key.split("_")[2],
      environment: "live",
      source: "public_report",
      url: null,
    });
    assert.ok(!JSON.stringify(log).includes(key), "no raw key in events");
  });

  it("records no use of a reported key and no failure for other reports", async () => {
    const made = makeService({ emitUsageEvents: true });
    const report = createPublicRevocationHandler({ service: made.service });
    await assertReportsRecordNoUse(made, async (rawKey) => {
      await report(request(rawKey));
      await report.drain();
    });
  });

  it("revokes a key reported as JSON or as a form", async () => {
    for (
      const [body, type] of [[
        (k: string) => JSON.stringify({ key: k }),
        "application/json; charset=utf-8",
      ], [
        (k: string) => new URLSearchParams({ key: k }).toString(),
        "Application/X-WWW-Form-Urlencoded",
      ]] as const
    ) {
      const { report, service } = setup();
      const { key } = await service.create({ tenantId: "t1", name: "k", scopes: READ_ORDERS });
      await report(request(body(key), type));
      await report.drain();
      await assert.rejects(service.verify(key), { code: "api_key_revoked" });
    }
  });

  it("keeps at most maxQueued reports waiting and answers the rest the same", async () => {
    const { report, calls } = setup({ maxQueued: 2 });
    const responses = await Promise.all(
      Array.from({ length: 5 }, () => report(request(generateKey({ environment: "live" }).raw))),
    );
    assert.ok(responses.every((response) => response.status === 202));
    await report.drain();
    assert.equal(calls.filter((call) => isPrefixLookup(call)).length, 2);
    // room again once drained
    await report(request("x"));
    await report.drain();
    assert.equal(calls.filter((call) => isPrefixLookup(call)).length, 3);
  });

  it("reports storage failures to onError only, never to the reporter; an onError that throws or rejects changes nothing and leaves no unhandled rejection", async () => {
    const fails = [
      () => {
        throw new Error("the error handler fails too");
      },
      () => Promise.reject(new Error("the error handler fails too")),
    ];
    for (const fail of fails) {
      const errors: unknown[] = [];
      const { storage } = spyStorage();
      const made = makeService({
        storage: overrideStorage(storage, {
          findByPrefix: () => Promise.reject(new Error("down")),
        }),
      });
      const report = createPublicRevocationHandler({
        service: made.service,
        onError: (error) => {
          errors.push(error);
          return fail();
        },
      });
      const rejections = collectUnhandledRejections();
      try {
        const response = await report(request(generateKey({ environment: "live" }).raw));
        assert.equal(response.status, 202);
        await report.drain();
      } finally {
        await rejections.stop();
      }
      assert.equal(errors.length, 1);
      assert.equal((errors[0] as { code?: string }).code, "api_key_storage_unavailable");
      assert.deepEqual(rejections.reasons, [], "an unhandled rejection escaped");
    }
  });

  it("revokes a reported key of the service's legacy layout (nestarc-v0)", async () => {
    const log: { type: string }[] = [];
    const { service } = makeService({
      legacyKeyLayouts: ["nestarc-v0"],
      onEvent: (event) => void log.push(event),
    });
    const key = await importNestarcKey(service, PEPPER_1);
    const report = createPublicRevocationHandler({ service });
    log.length = 0;
    assert.equal((await report(request(key.raw))).status, 202);
    await report.drain();
    await assert.rejects(service.verify(key.raw), { code: "api_key_revoked" });
    assert.deepEqual(
      log.filter((event) => event.type !== "api_key.auth_failed").map((event) => event.type),
      ["api_key.exposed", "api_key.revoked"],
    );
  });

  it("deduplicates queued reports by key: repeats take no place in the queue", async () => {
    const { report, service, calls } = setup({ maxQueued: 3 });
    const junk = generateKey({ environment: "live" }).raw;
    const { key } = await service.create({ tenantId: "t1", name: "k", scopes: READ_ORDERS });
    calls.length = 0;
    for (let i = 0; i < 50; i++) await report(request(junk));
    for (let i = 0; i < 50; i++) await report(request(i % 2 ? "not a key" : `  ${junk}\n`));
    await report(request(JSON.stringify({ key }), "application/json"));
    assert.deepEqual(report.stats(), { queued: 3, received: 101, deduplicated: 98, dropped: 0 });
    await report.drain();
    // the junk key, the stand-in of "not a key", the genuine one
    assert.equal(calls.filter((call) => isPrefixLookup(call)).length, 3);
    await assert.rejects(service.verify(key), { code: "api_key_revoked" });
    assert.equal(report.stats().queued, 0);
  });

  it("reports each dropped report to onDropped and in stats(), never with key material", async () => {
    const drops: unknown[] = [];
    const { report, service } = setup({ maxQueued: 1, onDropped: (drop) => void drops.push(drop) });
    const first = await service.create({ tenantId: "t1", name: "a", scopes: READ_ORDERS });
    const second = await service.create({ tenantId: "t1", name: "b", scopes: READ_ORDERS });
    assert.equal((await report(request(first.key))).status, 202);
    assert.equal((await report(request(second.key))).status, 202);
    assert.deepEqual(drops, [{
      type: "api_key.public_report_dropped",
      at: new Date("2030-01-01T00:00:00.000Z"),
      queued: 1,
    }]);
    assert.ok(!JSON.stringify(drops).includes(second.key.split("_")[2]));
    assert.deepEqual(report.stats(), { queued: 1, received: 2, deduplicated: 0, dropped: 1 });
    await report.drain();
    await assert.rejects(service.verify(first.key), { code: "api_key_revoked" });
    assert.equal((await service.verify(second.key)).keyId, second.id);
  });

  it("contains a throwing onDropped", async () => {
    const { report, service } = setup({
      maxQueued: 1,
      onDropped: () => {
        throw new Error("sink down");
      },
      onDroppedError: () => {},
    });
    const { key } = await service.create({ tenantId: "t1", name: "a", scopes: READ_ORDERS });
    await report(request(key));
    assert.equal((await report(request(generateKey({ environment: "live" }).raw))).status, 202);
    await report.drain();
    assert.equal(report.stats().dropped, 1);
  });

  it("a clock failing a dropped report's time (anything but a valid Date, or a throw) goes to onError; the answer stays 202", async () => {
    for (
      const answer of [() => new Date(NaN), () => 0, () => {
        throw new Error("clock down");
      }]
    ) {
      const drops: unknown[] = [];
      const errors: unknown[] = [];
      const { report, service } = setup({
        maxQueued: 1,
        clock: answer as () => Date,
        onDropped: (drop) => void drops.push(drop),
        onError: (error) => void errors.push(error),
      });
      const { key } = await service.create({ tenantId: "t1", name: "a", scopes: READ_ORDERS });
      assert.equal((await report(request(key))).status, 202);
      assert.equal((await report(request(generateKey({ environment: "live" }).raw))).status, 202);
      assert.deepEqual(drops, []);
      assert.equal(errors.length, 1);
      assert.match(
        String(errors[0]),
        /PublicRevocationOptions\.clock must answer a valid Date|clock down/,
      );
      assert.equal(report.stats().dropped, 1);
      await report.drain();
    }
  });

  it("validates its options", () => {
    const { service } = makeService();
    for (
      const options of [
        undefined,
        {},
        { service: { verify() {} } },
        { service, maxQueued: 0 },
        { service, maxBodyBytes: Infinity },
        { service, onError: "log" },
        { service, onDropped: "log" },
        { service, onDroppedError: 1 },
        { service, clock: 1 },
      ]
    ) {
      assert.throws(() => createPublicRevocationHandler(options as never), TypeError);
    }
  });
});
