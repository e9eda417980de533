/**
 * `ApiKeysService.authorizeRequest`: the header rules and the authorization
 * in one call, with the precise code and the original reason of each failure;
 * and what the construction warns of.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ApiKeyError, ApiKeyStorageError } from "../../api_keys/errors.ts";
import { generateKey, LEGACY_KEY_LAYOUTS } from "../../api_keys/key_format.ts";
import { InMemoryApiKeyStorage } from "../../api_keys/storage/in_memory.ts";
import { ApiKeysService } from "../../api_keys/service.ts";
import type { AuthorizeOptions } from "../../api_keys/types.ts";
import { makeService, overrideStorage, PEPPER_1, READ_ORDERS, rejection } from "./helpers.ts";

/** A header reader over Fetch `Headers`, as a Deno or Workers server has them. */
function fetchHeaders(init: HeadersInit) {
  const headers = new Headers(init);
  const asked: string[] = [];
  return {
    asked,
    read: (name: string) => {
      asked.push(name);
      return headers.get(name);
    },
  };
}

describe("ApiKeysService.authorizeRequest", () => {
  it("authorizes the key of X-API-Key or of Authorization: Bearer, read by lower-case name", async () => {
    const { service, events } = makeService({ emitUsageEvents: true });
    const { id, key } = await service.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
    const requirements = { requiredScope: { resource: "orders", level: "read" as const } };
    for (
      const init of [{ "X-API-Key": key }, { Authorization: `Bearer ${key}` }] as HeadersInit[]
    ) {
      const headers = fetchHeaders(init);
      const context = await service.authorizeRequest(headers.read, requirements);
      assert.equal(context.keyId, id);
      assert.ok(Object.isFrozen(context));
      assert.deepEqual(headers.asked.sort(), ["authorization", "x-api-key"]);
    }
    assert.equal(events.filter((e) => e.type === "api_key.used").length, 2);
  });

  it("answers api_key_missing when no header carries a key", async () => {
    const { service, authFailures, metrics } = makeService();
    const jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1In0.c2ln";
    for (
      const init of [{}, { Authorization: `Bearer ${jwt}` }, { "X-API-Key": "  " }] as HeadersInit[]
    ) {
      const error = await rejection(service.authorizeRequest(fetchHeaders(init).read));
      assert.ok(error instanceof ApiKeyError);
      assert.equal(error.code, "api_key_missing");
    }
    assert.deepEqual(authFailures, Array(3).fill([null, "api_key_missing"]));
    assert.deepEqual(metrics, [], "no verification ran");
  });

  it("refuses malformed headers as api_key_malformed, keeping the rule's reason, reported once", async () => {
    const storage = new InMemoryApiKeyStorage();
    const lookups: string[] = [];
    const peek = storage.peekByPrefix.bind(storage);
    storage.peekByPrefix = (prefix) => {
      lookups.push(prefix);
      return peek(prefix);
    };
    const { service, authFailures, metrics, events } = makeService({ storage });
    const { key } = await service.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
    const other = generateKey({ environment: "live" }).raw;
    const cases: [Record<string, string>, string][] = [
      [
        { "X-API-Key": key, Authorization: `Bearer ${other}` },
        "X-API-Key and Authorization carry different keys",
      ],
      [{ "X-API-Key": `${key}, ${other}` }, "X-API-Key has several values"],
      [{ Authorization: `Bearer ${key}, Bearer ${other}` }, "Authorization has several keys"],
      [{ "X-API-Key": "k".repeat(74) }, "X-API-Key is too long"],
    ];
    for (const [init, reason] of cases) {
      const error = await rejection(service.authorizeRequest(fetchHeaders(init).read));
      assert.ok(error instanceof ApiKeyError);
      assert.equal(error.code, "api_key_malformed");
      assert.equal(error.httpStatus, 401);
      assert.equal(error.reason, reason);
      for (const secret of [key, other]) {
        assert.ok(!`${error.message} ${error.reason} ${JSON.stringify(error)}`.includes(secret));
      }
    }
    assert.deepEqual(authFailures, Array(4).fill([null, "api_key_malformed"]));
    assert.deepEqual(
      metrics.map((m) => [m.outcome, m.environment]),
      Array(4).fill(["malformed", undefined]),
    );
    assert.equal(events.filter((e) => e.type === "api_key.auth_failed").length, 4);
    assert.deepEqual(lookups, [], "no storage lookup");
  });

  it("checks the IP allowlist, then the environment, then the scope, with the precise code", async () => {
    const { service, authFailures } = makeService();
    const { key } = await service.create({
      tenantId: "t",
      name: "n",
      environment: "test",
      scopes: READ_ORDERS,
      allowedIpCidrs: ["10.0.0.0/8"],
    });
    const read = fetchHeaders({ "X-API-Key": key }).read;
    const cases: [Parameters<ApiKeysService["authorizeRequest"]>[1], string, number][] = [
      [{ clientIp: "192.0.2.1", requiredEnvironment: "live" }, "api_key_ip_not_allowed", 403],
      [{ requiredEnvironment: "live" }, "api_key_ip_not_allowed", 403],
      [
        {
          clientIp: "10.1.2.3",
          requiredEnvironment: "live",
          requiredScope: { resource: "x", level: "read" },
        },
        "api_key_environment_mismatch",
        403,
      ],
      [
        { clientIp: "10.1.2.3", requiredScope: { resource: "orders", level: "write" } },
        "api_key_scope_insufficient",
        403,
      ],
    ];
    for (const [options, code, status] of cases) {
      const error = await rejection(service.authorizeRequest(read, options));
      assert.ok(error instanceof ApiKeyError);
      assert.deepEqual([error.code, error.httpStatus], [code, status]);
    }
    assert.equal(authFailures.length, cases.length);
    const context = await service.authorizeRequest(read, {
      clientIp: "10.1.2.3",
      requiredEnvironment: "test",
      requiredScope: { resource: "orders", level: "read" },
    });
    assert.equal(context.environment, "test");
  });

  it("throws a TypeError for an unknown scope level before reading any header", async () => {
    const { service, authFailures } = makeService();
    const headers = fetchHeaders({});
    const error = await rejection(
      service.authorizeRequest(headers.read, {
        requiredScope: { resource: "orders", level: "admin" as "read" },
      }),
    );
    assert.ok(error instanceof TypeError);
    assert.deepEqual(headers.asked, []);
    assert.deepEqual(authFailures, []);
  });

  it("refuses a misspelt option instead of ignoring it (a route left open to any scope)", async () => {
    const { service, authFailures } = makeService();
    const headers = fetchHeaders({});
    const misspelt = { requiredScop: { resource: "orders", level: "write" } };
    for (
      const call of [
        () => service.authorizeRequest(headers.read, misspelt as AuthorizeOptions),
        () => service.authorize("any", misspelt as AuthorizeOptions),
      ]
    ) {
      const error = await rejection(call());
      assert.ok(error instanceof TypeError);
      assert.match(error.message, /AuthorizeOptions: unknown option `requiredScop`/);
    }
    assert.deepEqual(headers.asked, []);
    assert.deepEqual(authFailures, []);
  });

  it("rejects with the header reader's own error, reporting nothing", async () => {
    const { service, authFailures, metrics } = makeService();
    const failure = new Error("headers unavailable");
    const error = await rejection(service.authorizeRequest(() => {
      throw failure;
    }));
    assert.equal(error, failure);
    assert.deepEqual([authFailures, metrics], [[], []]);
  });

  it("rejects with ApiKeyStorageError (503) when the storage fails", async () => {
    const inner = new InMemoryApiKeyStorage();
    const storage = overrideStorage(inner, {
      findByPrefix: () => Promise.reject(new Error("connection to db.internal refused")),
    });
    const service = new ApiKeysService({ peppers: { 1: PEPPER_1 }, storage });
    const { key } = await service.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
    const error = await rejection(
      service.authorizeRequest(fetchHeaders({ "X-API-Key": key }).read),
    );
    assert.ok(error instanceof ApiKeyStorageError);
    assert.equal(error.httpStatus, 503);
    assert.ok(!String(error.message).includes("db.internal"));
  });
});

describe("ApiKeysService: the construction's warnings", () => {
  /** The `console.warn` lines logged while `build` runs. */
  function warnings(build: () => unknown): string[] {
    const lines: string[] = [];
    const warn = console.warn;
    console.warn = (...args: unknown[]) => lines.push(args.map(String).join(" "));
    try {
      build();
    } finally {
      console.warn = warn;
    }
    return lines;
  }
  const storage = () => new InMemoryApiKeyStorage();

  it('"nestarc-v0" without a namespace warns once that 0.1\'s default namespace was "nk"', () => {
    const lines = warnings(() =>
      new ApiKeysService({
        storage: storage(),
        peppers: { 1: PEPPER_1 },
        legacyKeyLayouts: ["nestarc-v0"],
      })
    );
    assert.deepEqual(lines, [
      'api-keys: legacyKeyLayouts has "nestarc-v0" but no namespace is given, so its keys are ' +
      'read with the default namespace "ak"; @nestarc/api-keys\' default namespace was "nk": ' +
      'pass `namespace: "nk"` if the old keys start nk_ (otherwise each is refused as ' +
      "api_key_malformed)",
    ]);
  });

  it("no such line with a namespace, with a layout naming its own, or without nestarc-v0", () => {
    for (
      const options of [
        { namespace: "nk", legacyKeyLayouts: ["nestarc-v0" as const] },
        { namespace: "ak", legacyKeyLayouts: ["nestarc-v0" as const] },
        { legacyKeyLayouts: [{ ...LEGACY_KEY_LAYOUTS["nestarc-v0"], namespace: "Acme" }] },
        {},
      ]
    ) {
      assert.deepEqual(
        warnings(() =>
          new ApiKeysService({ storage: storage(), peppers: { 1: PEPPER_1 }, ...options })
        ),
        [],
        JSON.stringify(options),
      );
    }
  });
});

describe("ApiKeysService.ready: the storage's ready()", () => {
  it("a TypeError (the storage misconfigured) rejects; a storage down logs one line and resolves; none without the capability", async () => {
    const misconfigured = new TypeError("the session's time zone is America/New_York, not UTC");
    const readying = (ready: () => Promise<void>) =>
      makeService({ storage: Object.assign(new InMemoryApiKeyStorage(), { ready }) }).service;
    await assert.rejects(readying(() => Promise.reject(misconfigured)).ready(), misconfigured);
    const warn = console.warn;
    const lines: string[] = [];
    console.warn = (line: string) => lines.push(line);
    try {
      await readying(() => Promise.reject(new Error("ECONNREFUSED"))).ready();
      assert.equal(lines.length, 1);
      assert.match(lines[0], /\.ready\(\) did not answer at start-up \(Error\): not checked/);
      await makeService().service.ready();
      assert.equal(lines.length, 1, "nothing without the capability");
    } finally {
      console.warn = warn;
    }
  });
});
