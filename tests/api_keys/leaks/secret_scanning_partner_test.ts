import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import {
  type ApiKeyExposedEvent,
  type ApiKeysServiceOptions,
  generateKey,
  InMemoryApiKeyStorage,
  type LeakReportResponse,
} from "../../../api_keys/mod.ts";
import {
  createSecretScanningPartnerHandler,
  SECRET_SCANNING_MAX_TOKENS,
  type SecretScanningPartnerOptions,
} from "../../../api_keys/leaks/secret_scanning_partner.ts";
import { createSigner, GITHUB_SAMPLE } from "./github_signer.ts";
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
import { importNestarcKey } from "../verify/nestarc.ts";

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
const SAMPLE_KEYS = [{
  key_identifier: GITHUB_SAMPLE.key_identifier,
  key: GITHUB_SAMPLE.public_key_pem,
}];

/** A service, a local signer registered as GitHub's key, and a handler over both. */
async function setup(
  options: Partial<SecretScanningPartnerOptions> = {},
  serviceOptions: Partial<ApiKeysServiceOptions> = {},
) {
  const log: { type: string }[] = [];
  const { storage, ...rest } = serviceOptions;
  const spied = spyStorage(storage);
  const made = makeService({
    storage: spied.storage,
    onEvent: (event) => void log.push(event),
    ...rest,
  });
  const signer = await createSigner();
  const handle = createSecretScanningPartnerHandler({
    service: made.service,
    publicKeys: [
      ...SAMPLE_KEYS,
      { key_identifier: signer.keyIdentifier, key: signer.pem, is_current: true },
    ],
    clock: made.clocks.clock,
    ...options,
  });
  /** Posts `matches` (or a raw body) signed by the local signer. */
  const post = async (
    matches: unknown,
    headers: Record<string, string> = {},
  ): Promise<LeakReportResponse> => {
    const body = typeof matches === "string" || matches instanceof Uint8Array
      ? matches
      : JSON.stringify(matches);
    const signed: Record<string, string> = {
      "github-public-key-identifier": signer.keyIdentifier,
      "github-public-key-signature": await signer.sign(body),
      ...headers,
    };
    const bytes = typeof body === "string" ? new TextEncoder().encode(body) : body;
    return handle({ body: bytes, headers: (name) => signed[name] });
  };
  const newKey = async (tenantId = "t1", environment: "live" | "test" = "live") => {
    const created = await made.service.create({
      tenantId,
      name: "k",
      scopes: READ_ORDERS,
      environment,
    });
    return created;
  };
  return { ...made, log, calls: spied.calls, signer, handle, post, newKey };
}

const match = (token: string, extra: Record<string, string> = {}) => ({
  token,
  type: "saferoute_api_key",
  url: "https://github.com/octo/repo/blob/abc/.env",
  source: "content",
  ...extra,
});

describe("secret-scanning partner handler", () => {
  it("accepts GitHub's published sample and answers [] (feedback off by default)", async () => {
    const { handle, calls } = await setup();
    const headers: Record<string, string> = {
      "github-public-key-identifier": GITHUB_SAMPLE.key_identifier,
      "github-public-key-signature": GITHUB_SAMPLE.signature,
    };
    const response = await handle({
      body: GITHUB_SAMPLE.payload,
      headers: (name) => headers[name],
    });
    assert.equal(response.status, 200);
    assert.equal(response.body, "[]");
    assert.equal(response.headers["content-type"], "application/json; charset=utf-8");
    assert.deepEqual(calls, [], "a token that is not a key of ours costs no storage call");
  });

  it("answers the sample's feedback with token_hash and false_positive", async () => {
    const { handle } = await setup({ feedback: true });
    const headers: Record<string, string> = {
      "github-public-key-identifier": GITHUB_SAMPLE.key_identifier,
      "github-public-key-signature": GITHUB_SAMPLE.signature,
    };
    const response = await handle({
      body: new TextEncoder().encode(GITHUB_SAMPLE.payload),
      headers: (name) => headers[name],
    });
    assert.deepEqual(JSON.parse(response.body), [
      { token_hash: sha256("some_token"), token_type: "some_type", label: "false_positive" },
    ]);
  });

  it("records no use of a reported key and no failure for other tokens", async () => {
    const made = await setup({}, { emitUsageEvents: true });
    await assertReportsRecordNoUse(
      { ...made, events: made.log },
      async (rawKey) => assert.equal((await made.post([match(rawKey)])).status, 200),
    );
  });

  it("refuses a tampered body, a wrong or unknown key id and a missing or bad signature", async () => {
    const { handle, signer, calls } = await setup();
    const body = JSON.stringify([match("x")]);
    const good = {
      "github-public-key-identifier": signer.keyIdentifier,
      "github-public-key-signature": await signer.sign(body),
    };
    const cases: [string, string, Record<string, string>][] = [
      ["tampered body", body.replace('"x"', '"y"'), good],
      ["extra byte", body + " ", good],
      ["wrong key id", body, {
        ...good,
        "github-public-key-identifier": GITHUB_SAMPLE.key_identifier,
      }],
      ["unknown key id", body, { ...good, "github-public-key-identifier": "no-such-key" }],
      ["no key id", body, { "github-public-key-signature": good["github-public-key-signature"] }],
      ["no signature", body, { "github-public-key-identifier": signer.keyIdentifier }],
      ["garbage signature", body, { ...good, "github-public-key-signature": "bm9wZQ==" }],
      ["sample signature", body, {
        ...good,
        "github-public-key-signature": GITHUB_SAMPLE.signature,
      }],
      ["huge key id", body, { ...good, "github-public-key-identifier": "k".repeat(10_000) }],
    ];
    for (const [name, sent, headers] of cases) {
      const response = await handle({ body: sent, headers: (header) => headers[header] });
      assert.equal(response.status, 401, name);
      assert.equal(JSON.parse(response.body).error.code, "secret_scanning_signature_invalid", name);
    }
    const ok = await handle({ body, headers: (header) => good[header as keyof typeof good] });
    assert.equal(ok.status, 200);
    assert.deepEqual(calls, []);
  });

  it("revokes each reported key that verifies: api_key.exposed, then api_key.revoked", async () => {
    const { post, newKey, service, log, calls } = await setup({ feedback: true });
    const first = await newKey("t1", "live");
    const second = await newKey("t2", "test");
    log.length = 0;
    calls.length = 0;
    const unknown = generateKey({ environment: "live" }).raw;
    const otherNamespace = generateKey({ environment: "live", namespace: "other" }).raw;
    const matches = [
      match(first.key),
      match(breakChecksum(second.key)),
      match(second.key, { source: "commit", url: "" }),
      match(otherNamespace),
      match(unknown),
      match(first.key, { url: "https://github.com/elsewhere" }),
    ];
    const response = await post(matches);
    assert.equal(response.status, 200);
    const exposedFirst: ApiKeyExposedEvent = {
      type: "api_key.exposed",
      at: new Date("2030-01-01T00:00:00.000Z"),
      keyId: first.id,
      tenantId: "t1",
      prefix: first.key.split("_")[2],
      environment: "live",
      source: "content",
      url: "https://github.com/octo/repo/blob/abc/.env",
    };
    // per key, api_key.exposed comes right before its api_key.revoked (keys run concurrently)
    const relevant = log.filter((event) =>
      event.type !== "api_key.auth_failed"
    ) as (ApiKeyExposedEvent | { type: string; keyId: string })[];
    for (const { id } of [first, second]) {
      const types = relevant.filter((event) => event.keyId === id).map((event) => event.type);
      assert.deepEqual(types, ["api_key.exposed", "api_key.revoked"]);
    }
    assert.equal(relevant.length, 4);
    const exposed = (id: string) =>
      relevant.find((event) => event.keyId === id && event.type === "api_key.exposed");
    assert.deepEqual(exposed(first.id), exposedFirst);
    assert.deepEqual(exposed(second.id), {
      ...exposedFirst,
      keyId: second.id,
      tenantId: "t2",
      prefix: second.key.split("_")[2],
      environment: "test",
      source: "commit",
      url: null,
    });
    // the bad checksum and the other namespace never reached storage; the unknown key did once
    assert.equal(calls.filter((call) => isPrefixLookup(call)).length, 3);
    for (const { key } of [first, second]) {
      await assert.rejects(service.verify(key), { code: "api_key_revoked" });
    }
    assert.deepEqual(JSON.parse(response.body), [
      { token_hash: sha256(first.key), token_type: "saferoute_api_key", label: "true_positive" },
      {
        token_hash: sha256(breakChecksum(second.key)),
        token_type: "saferoute_api_key",
        label: "false_positive",
      },
      { token_hash: sha256(second.key), token_type: "saferoute_api_key", label: "true_positive" },
      {
        token_hash: sha256(otherNamespace),
        token_type: "saferoute_api_key",
        label: "false_positive",
      },
      { token_hash: sha256(unknown), token_type: "saferoute_api_key", label: "false_positive" },
    ]);
    for (const text of [response.body, JSON.stringify(log)]) {
      assert.ok(!text.includes(first.key) && !text.includes(second.key), "no raw key");
      assert.doesNotMatch(text, /token_raw/);
    }
  });

  it("revokes a reported key of the service's legacy layout (nestarc-v0)", async () => {
    const { post, service, log } = await setup({ feedback: true }, {
      legacyKeyLayouts: ["nestarc-v0"],
    });
    const key = await importNestarcKey(service, PEPPER_1);
    log.length = 0;
    const response = await post([match(key.raw)]);
    assert.equal(response.status, 200);
    assert.equal(JSON.parse(response.body)[0].label, "true_positive");
    await assert.rejects(service.verify(key.raw), { code: "api_key_revoked" });
    assert.deepEqual(
      log.filter((event) => event.type !== "api_key.auth_failed").map((event) => event.type),
      ["api_key.exposed", "api_key.revoked"],
    );
  });

  it("accepts an identical replay: 200 again, no second revocation or event", async () => {
    const { post, newKey, log } = await setup({ feedback: true });
    const { key } = await newKey();
    const body = JSON.stringify([match(key)]);
    const first = await post(body);
    const count = log.filter((event) => event.type !== "api_key.auth_failed").length;
    const replay = await post(body);
    assert.equal(replay.status, 200);
    assert.equal(replay.body, first.body);
    assert.equal(JSON.parse(replay.body)[0].label, "true_positive");
    assert.equal(log.filter((event) => event.type !== "api_key.auth_failed").length, count);
  });

  it("labels an expired key true_positive without revoking it", async () => {
    const { post, service, clocks, log } = await setup({ feedback: true });
    const { key } = await service.create({
      tenantId: "t1",
      name: "k",
      scopes: READ_ORDERS,
      expiresAt: new Date(clocks.now + 1_000),
    });
    clocks.advance(2_000);
    log.length = 0;
    const response = await post([match(key)]);
    assert.equal(JSON.parse(response.body)[0].label, "true_positive");
    assert.deepEqual(log.filter((event) => event.type !== "api_key.auth_failed"), []);
  });

  it("bounds the request: body size, token count, payload shape", async () => {
    const { post, handle } = await setup({ maxBodyBytes: 8_192, maxTokens: 3 });
    const signed = (name: string) => name.startsWith("github-public-key-") ? "x" : undefined;
    const tooBig = await handle({ body: "x".repeat(8_193), headers: signed });
    assert.equal(tooBig.status, 413);
    // Unsigned: refused by its headers before its body counts (a binding need not read it).
    const unsigned = await handle({ body: "x".repeat(8_193), headers: () => undefined });
    assert.equal(unsigned.status, 401);
    assert.equal(handle.refuse?.(() => undefined)?.status, 401);
    assert.equal(handle.refuse?.(signed), undefined);
    const tooMany = await post([match("a"), match("b"), match("c"), match("d")]);
    assert.equal(tooMany.status, 413);
    assert.equal(JSON.parse(tooMany.body).error.code, "secret_scanning_payload_too_large");
    assert.equal((await post([match("a"), match("b"), match("c")])).status, 200);
    for (
      const bad of [
        "not json",
        "{}",
        '"token"',
        "[1]",
        "[null]",
        JSON.stringify([{ type: "x" }]),
        JSON.stringify([{ token: 5, type: "x" }]),
      ]
    ) {
      const response = await post(bad);
      assert.equal(response.status, 400, bad);
      assert.equal(JSON.parse(response.body).error.code, "secret_scanning_payload_invalid");
    }
    const invalidUtf8 = await post(new Uint8Array([0x5b, 0x22, 0xff, 0x22, 0x5d]));
    assert.equal(invalidUtf8.status, 400);
    assert.equal(SECRET_SCANNING_MAX_TOKENS, 1_000);
  });

  it("one entry's over-long or odd url, source or type never fails the batch: bounded, not echoed", async () => {
    const { post, newKey, log } = await setup({ feedback: true });
    const exposed: ApiKeyExposedEvent[] = [];
    const a = await newKey("t1");
    const b = await newKey("t2");
    const c = await newKey("t3");
    const response = await post([
      match(a.key),
      match(b.key, { url: "u".repeat(4_097), source: "s".repeat(65), type: "t".repeat(300) }),
      { token: c.key, type: 5, url: 5, source: ["x"] },
    ]);
    assert.equal(response.status, 200);
    log.forEach((event) =>
      event.type === "api_key.exposed" && exposed.push(event as ApiKeyExposedEvent)
    );
    const byKey = new Map(exposed.map((event) => [event.keyId, event]));
    assert.equal(byKey.get(a.id)!.url, "https://github.com/octo/repo/blob/abc/.env");
    assert.deepEqual([byKey.get(b.id)!.url, byKey.get(b.id)!.source], [null, "unknown"]);
    assert.deepEqual([byKey.get(c.id)!.url, byKey.get(c.id)!.source], [null, "unknown"]);
    const feedback = JSON.parse(response.body) as { token_type: string | null }[];
    assert.deepEqual(feedback.map((entry) => entry.token_type), [
      "saferoute_api_key",
      "t".repeat(256),
      null,
    ]);
  });

  it("a source holding U+0000 or a lone surrogate (which the audit log cannot store) reads as unknown", async () => {
    const { post, newKey, log } = await setup();
    const a = await newKey("t1");
    const b = await newKey("t2");
    const c = await newKey("t3");
    const response = await post([
      match(a.key, { source: "content\u0000" }),
      match(b.key, { source: "commit\ud800" }),
      match(c.key, { source: "café 🚀" }),
    ]);
    assert.equal(response.status, 200);
    const sources = new Map(
      log.filter((event) => event.type === "api_key.exposed").map((event) => {
        const exposed = event as ApiKeyExposedEvent;
        return [exposed.keyId, exposed.source];
      }),
    );
    assert.deepEqual([sources.get(a.id), sources.get(b.id), sources.get(c.id)], [
      "unknown",
      "unknown",
      "café 🚀",
    ]);
  });

  it("a revoke that commits after the storage deadline: 503, then api_key.exposed once; a retry adds nothing", async () => {
    const inner = new InMemoryApiKeyStorage();
    let release!: () => void;
    const open = new Promise<void>((resolve) => release = resolve);
    const storage = Object.assign(overrideStorage(inner, {}), {
      markRevokedIfActive: async (...args: Parameters<typeof inner.markRevokedIfActive>) => {
        await open;
        return inner.markRevokedIfActive(...args);
      },
    });
    const exposed: ApiKeyExposedEvent[] = [];
    const { post, newKey, log } = await setup(
      { onExposed: (event) => void exposed.push(event), feedback: true },
      { storage, storageTimeoutMs: 30 },
    );
    const { key, id } = await newKey();
    log.length = 0;
    const first = await post([match(key)]);
    assert.equal(first.status, 503);
    assert.equal(log.length, 0);
    release();
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(log.map((event) => event.type), ["api_key.exposed", "api_key.revoked"]);
    assert.deepEqual(exposed.map((event) => event.keyId), [id]);
    const retry = await post([match(key)]);
    assert.equal(retry.status, 200);
    assert.equal(JSON.parse(retry.body)[0].label, "true_positive");
    assert.equal(log.length, 2);
    assert.equal(exposed.length, 1);
  });

  it("answers 503 when storage fails, so GitHub retries", async () => {
    const { storage } = spyStorage();
    const failing = overrideStorage(storage, {
      findByPrefix: () => Promise.reject(new Error("db down")),
    });
    const { post } = await setup({}, { storage: failing });
    const response = await post([match(generateKey({ environment: "live" }).raw)]);
    assert.equal(response.status, 503);
    assert.equal(JSON.parse(response.body).error.code, "secret_scanning_incomplete");
    assert.doesNotMatch(response.body, /db down/);
  });

  it("tells the app of a report it could not process: onError gets the storage's error; without it one console warning (its name only), then silence", async () => {
    const { storage } = spyStorage();
    const failing = overrideStorage(storage, {
      findByPrefix: () => Promise.reject(new Error("db down")),
    });
    const errors: unknown[] = [];
    const told = await setup({ onError: (error) => void errors.push(error) }, { storage: failing });
    assert.equal((await told.post([match(generateKey({ environment: "live" }).raw)])).status, 503);
    assert.equal(errors.length, 1);
    assert.match(String(errors[0]), /ApiKeyStorageError/);
    const warned: string[] = [];
    const warn = console.warn;
    console.warn = (line: string) => void warned.push(line);
    try {
      const quiet = await setup({}, { storage: failing });
      for (let i = 0; i < 2; i++) {
        await quiet.post([match(generateKey({ environment: "live" }).raw)]);
      }
    } finally {
      console.warn = warn;
    }
    const lines = warned.filter((line) => line.includes("secret scanning report"));
    assert.equal(lines.length, 1, warned.join("\n"));
    assert.match(lines[0], /failed \(ApiKeyStorageError\); further are not logged$/);
    assert.doesNotMatch(lines[0], /db down/);
  });

  it("answers 503 at the deadline, and tells onError", async () => {
    const { storage } = spyStorage();
    const hanging = overrideStorage(storage, {
      findByPrefix: () => new Promise(() => {}),
    });
    const errors: unknown[] = [];
    const { post } = await setup(
      { deadlineMs: 30, onError: (error) => void errors.push(error) },
      { storage: hanging, storageTimeoutMs: 60 },
    );
    const response = await post([match(generateKey({ environment: "live" }).raw)]);
    assert.equal(response.status, 503);
    assert.match(String(errors[0]), /1 of 1 token\(s\) not processed within deadlineMs \(30 ms\)/);
    await new Promise((resolve) => setTimeout(resolve, 80)); // let the storage deadline pass
  });

  it("answers 503 when the public keys cannot be had", async () => {
    const { service } = makeService();
    const handle = createSecretScanningPartnerHandler({
      service,
      publicKeys: { resolve: () => Promise.reject(new Error("github down")) },
    });
    const response = await handle({
      body: GITHUB_SAMPLE.payload,
      headers: (name) =>
        name === "github-public-key-identifier"
          ? GITHUB_SAMPLE.key_identifier
          : GITHUB_SAMPLE.signature,
    });
    assert.equal(response.status, 503);
    assert.equal(JSON.parse(response.body).error.code, "secret_scanning_keys_unavailable");
  });

  it("still revokes when onExposed throws or rejects", async () => {
    for (
      const onExposed of [() => {
        throw new Error("sink");
      }, () => Promise.reject(new Error("sink"))]
    ) {
      const errors: unknown[] = [];
      const { post, newKey, service } = await setup({
        onExposed,
        onExposedError: (error) => void errors.push(error),
      });
      const { key } = await newKey();
      assert.equal((await post([match(key)])).status, 200);
      await assert.rejects(service.verify(key), { code: "api_key_revoked" });
      await new Promise((resolve) => setTimeout(resolve, 0));
      assert.equal(errors.length, 1);
    }
  });

  it("validates its options", () => {
    const { service } = makeService();
    const bad: unknown[] = [
      undefined,
      { publicKeys: SAMPLE_KEYS },
      { service: {}, publicKeys: SAMPLE_KEYS },
      { service },
      { service, publicKeys: "keys" },
      { service, publicKeys: [{ key_identifier: "", key: "x" }] },
      { service, publicKeys: SAMPLE_KEYS, feedback: "yes" },
      { service, publicKeys: SAMPLE_KEYS, maxTokens: 0 },
      { service, publicKeys: SAMPLE_KEYS, concurrency: 1.5 },
      { service, publicKeys: SAMPLE_KEYS, onExposed: "log" },
    ];
    for (const options of bad) {
      assert.throws(() => createSecretScanningPartnerHandler(options as never), TypeError);
    }
  });

  it("refuses a deadlineMs a timer cannot arm (past 2147483647 ms it would fire at once: every report 503)", () => {
    const { service } = makeService();
    for (const deadlineMs of [2 ** 31, 30 * 86_400_000]) {
      assert.throws(
        () => createSecretScanningPartnerHandler({ service, publicKeys: SAMPLE_KEYS, deadlineMs }),
        /^TypeError: SecretScanningPartnerOptions\.deadlineMs .*2147483647/,
      );
    }
    createSecretScanningPartnerHandler({
      service,
      publicKeys: SAMPLE_KEYS,
      deadlineMs: 2 ** 31 - 1,
    });
  });
});
