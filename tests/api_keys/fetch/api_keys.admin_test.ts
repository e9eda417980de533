/**
 * `createApiKeysAdminFetchHandler` over real HTTP: mounted at its prefix,
 * the tenant from the app's own session cookie, CSRF, a body stream bounded
 * without reading it whole, the full create → rotate → revoke tour.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createApiKeysAdminFetchHandler } from "../../../api_keys/fetch/api_keys.admin.ts";
import { makeService } from "../helpers.ts";
import { serve, type Served } from "../../scenarios/_serve.ts";
import { assertRotationKeepsCallerLimits } from "../admin/limited_rotation.ts";
import { createRateLimiter } from "../../../rate_limits/limiter.ts";
import { createMemoryRateLimitStore } from "../../../rate_limits/memory_store.ts";

const SESSIONS = new Map([["session=alice", "acme"], ["session=mallory", "evil"]]);
const CSRF = { "x-requested-with": "api-keys-manager", "content-type": "application/json" };

describe("createApiKeysAdminFetchHandler over HTTP", () => {
  const { service } = makeService();
  let server: Served;
  let theirs: { id: string; key: string };

  before(async () => {
    theirs = await service.create({
      tenantId: "evil",
      name: "theirs",
      scopes: [{ resource: "projects", level: "read" }],
    });
    const admin = createApiKeysAdminFetchHandler({
      prefix: "/settings/api-keys",
      service,
      scopes: ["projects:read", "projects:write"],
      tenantOf: (request) => SESSIONS.get(request.headers.get("cookie") ?? "") ?? null,
      canManage: () => true,
      policy: () => null,
      maxBodyBytes: 4096,
      allowedOrigins: ["https://app.example.com"],
      actorOf: (request) => `user:${request.headers.get("cookie")?.slice(8)}`,
    });
    server = await serve(async (request) =>
      (await admin(request)) ?? new Response("app", { status: 404 })
    );
  });
  after(() => server.close());

  const call = async (
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = CSRF,
    cookie = "session=alice",
  ) => {
    const response = await fetch(`${server.url}/settings/api-keys${path}`, {
      method,
      headers: { ...headers, cookie },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, text };
  };

  it("routes by the target sent, never by a Host header holding a path (Deno.serve joins them)", async () => {
    const net = await import("node:net");
    const { RUNTIME } = await import("../../scenarios/_serve.ts");
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(Number(new URL(server.url).port), "127.0.0.1");
      let text = "";
      socket.on("data", (chunk: Uint8Array) => (text += new TextDecoder().decode(chunk)));
      socket.on("end", () => resolve(text));
      socket.on("error", reject);
      socket.write(
        "GET /keys HTTP/1.1\r\nHost: h/settings/api-keys\r\nCookie: session=alice\r\n" +
          "Connection: close\r\n\r\n",
      );
    });
    const status = Number(answer.split(" ", 2)[1]);
    // /keys is outside the prefix: the app's 404 (or, on Node, the server refusing the Host).
    assert.equal(status, RUNTIME === "node" && status === 400 ? 400 : 404, answer.slice(0, 300));
    if (status === 404) assert.ok(answer.endsWith("app"), answer.slice(-100));
  });

  it("answers HEAD on a GET route as GET without a body, as Express and Fastify do", async () => {
    const get = await call("GET", "/keys");
    const head = await call("HEAD", "/keys");
    assert.equal(head.status, 200);
    assert.equal(head.text, "");
    // RFC 9110 8.6: a HEAD answer's Content-Length, if any, is the GET body's.
    assert.equal(head.headers.get("content-length"), get.headers.get("content-length"));
    assert.notEqual(head.headers.get("content-length"), "0");
    assert.equal(head.headers.get("content-type"), get.headers.get("content-type"));
    assert.equal(head.headers.get("cache-control"), "no-store");
    assert.equal(head.headers.get("allow"), null);
  });

  it("create, list, rotate with a grace preset, rename, revoke", async () => {
    const created = await call("POST", "/keys", { name: "ci", scopes: ["projects:read"] });
    assert.equal(created.status, 201);
    assert.equal(created.headers.get("cache-control"), "no-store");
    const { key, record } = JSON.parse(created.text);
    assert.equal((await service.verify(key)).tenantId, "acme");
    const list = await call("GET", "/keys");
    assert.equal(JSON.parse(list.text).keys.length, 1);
    assert.ok(!list.text.includes(key));
    const rotated = await call("POST", `/keys/${record.id}/rotate`, { grace: "none" });
    assert.equal(rotated.status, 201);
    const next = JSON.parse(rotated.text);
    const renamed = await call("PATCH", `/keys/${next.record.id}`, { name: "ci v2" });
    assert.equal(JSON.parse(renamed.text).name, "ci v2");
    const revoked = await call("DELETE", `/keys/${next.record.id}`);
    assert.equal(JSON.parse(revoked.text).status, "revoked");
    await assert.rejects(service.verify(next.key), { code: "api_key_revoked" });
  });

  it("GET /keys query parameters pass through: limit, cursor, q, status, sort; a repeated one is 400", async () => {
    for (const name of ["page a", "page b", "page c"]) {
      assert.equal((await call("POST", "/keys", { name, scopes: ["projects:read"] })).status, 201);
    }
    const first = JSON.parse((await call("GET", "/keys?limit=2&q=PAGE&sort=name_asc")).text);
    assert.deepEqual(first.keys.map((key: { name: string }) => key.name), ["page a", "page b"]);
    const cursor = encodeURIComponent(first.nextCursor);
    const second = JSON.parse(
      (await call("GET", `/keys?limit=2&q=PAGE&sort=name_asc&cursor=${cursor}`)).text,
    );
    assert.deepEqual(second.keys.map((key: { name: string }) => key.name), ["page c"]);
    assert.equal(second.nextCursor, null);
    const revoked = JSON.parse((await call("GET", "/keys?status=revoked&q=page")).text);
    assert.deepEqual(revoked.keys, []);
    const repeated = await call("GET", "/keys?limit=1&limit=2");
    assert.equal(repeated.status, 400);
    assert.equal(JSON.parse(repeated.text).error.details.field, "limit");
    assert.equal((await call("GET", "/keys?status=gone")).status, 400);
    assert.equal((await call("GET", "/usage?keys=a")).status, 501);
  });

  it("GET /keys pages past imported keys whose id and name are at their bounds (200 characters, 3 UTF-8 bytes each); an id past it is never imported", async () => {
    // Well-formed prefixes and hashes, from keys of another service.
    const other = makeService();
    const made = [];
    for (const name of ["a", "b", "c"]) {
      const { id } = await other.service.create({
        tenantId: "acme",
        name,
        scopes: [{ resource: "projects", level: "read" }],
      });
      made.push((await other.storage.findById(id))!);
    }
    const wide = "\u4e00".repeat(199);
    const result = await service.importKeys(made.map((record, i) => ({
      id: i === 2 ? "x".repeat(201) : `${wide}${i}`,
      tenantId: "acme",
      name: `${wide}${i}`,
      environment: record.environment,
      prefix: record.prefix,
      hash: record.hash,
      hashScheme: "hmac-sha256",
      pepperVersion: record.pepperVersion,
      scopes: ["projects:read"],
    })));
    assert.deepEqual([result.imported, result.errors.map((error) => error.index)], [2, [2]]);
    const names: string[] = [];
    let cursor: string | null = "";
    while (cursor !== null) {
      const page = await call(
        "GET",
        `/keys?limit=1&sort=name_asc&q=${encodeURIComponent(wide)}&cursor=${
          encodeURIComponent(cursor)
        }`,
      );
      assert.equal(page.status, 200, page.text);
      const body = JSON.parse(page.text);
      names.push(...body.keys.map((key: { name: string }) => key.name.slice(-1)));
      cursor = body.nextCursor;
    }
    assert.deepEqual(names, ["0", "1"]);
  });

  it("the tenant is the session's: another tenant's key is 404, unauthenticated is 401", async () => {
    const foreign = await call("DELETE", `/keys/${theirs.id}`);
    assert.equal(foreign.status, 404);
    assert.equal((await service.verify(theirs.key)).keyId, theirs.id);
    assert.equal((await call("GET", "/keys", undefined, CSRF, "session=nobody")).status, 401);
  });

  it("CSRF: a cookie-carrying cross-site POST without the header is refused", async () => {
    const forged = await call("POST", "/keys", { name: "x", scopes: ["projects:read"] }, {
      "content-type": "text/plain",
    });
    assert.equal(forged.status, 403);
    assert.equal(JSON.parse(forged.text).error.code, "csrf_refused");
    const crossSite = await call("POST", "/keys", { name: "x", scopes: ["projects:read"] }, {
      ...CSRF,
      "sec-fetch-site": "cross-site",
    });
    assert.equal(crossSite.status, 403);
  });

  it("a same-site dashboard from an allowed Origin passes; createdBy from actorOf", async () => {
    const body = { name: "dash", scopes: ["projects:read"] };
    const sameSite = { ...CSRF, "sec-fetch-site": "same-site" };
    const allowed = await call("POST", "/keys", body, {
      ...sameSite,
      origin: "https://app.example.com",
    });
    assert.equal(allowed.status, 201);
    assert.equal(JSON.parse(allowed.text).record.createdBy, "user:alice");
    const other = await call("POST", "/keys", body, {
      ...sameSite,
      origin: "https://x.example.com",
    });
    assert.equal(other.status, 403);
    const crossSite = await call("POST", "/keys", body, {
      ...CSRF,
      "sec-fetch-site": "cross-site",
      origin: "https://app.example.com",
    });
    assert.equal(crossSite.status, 403);
  });

  it("a large streamed body is refused with 413 without being read whole", async () => {
    let pulled = 0;
    const chunk = new Uint8Array(1024).fill(32);
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        if (pulled > 10_000) controller.close();
        else controller.enqueue(chunk);
      },
    });
    const response = await fetch(`${server.url}/settings/api-keys/keys`, {
      method: "POST",
      headers: { ...CSRF, cookie: "session=alice" },
      body: stream,
      // @ts-ignore: Node's fetch needs it for a stream body
      duplex: "half",
    });
    assert.equal(response.status, 413);
    await response.body?.cancel();
    assert.ok(pulled < 10_000, `pulled ${pulled} chunks`);
  });

  it("a body that fails mid-read is refused (400 on body), never run as if empty: a rotate keeps the old key", async () => {
    const { service } = makeService();
    const admin = createApiKeysAdminFetchHandler({
      prefix: "/admin",
      service,
      scopes: ["projects:read"],
      tenantOf: () => "acme",
      canManage: () => true,
      policy: () => null,
    });
    const leaked = await service.create({
      tenantId: "acme",
      name: "leaked",
      scopes: [{ resource: "projects", level: "read" }],
    });
    // A client's upload reset after its first bytes: `{"grace":"none"}` never arrives whole.
    const broken = () =>
      new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('{"grace":'));
          controller.error(new Error("connection reset"));
        },
      });
    for (const [method, path] of [["POST", `/keys/${leaked.id}/rotate`], ["POST", "/keys"]]) {
      const answer = await admin(
        new Request(`http://localhost/admin${path}`, {
          method,
          headers: CSRF,
          body: broken(),
          // @ts-ignore: Node's Request needs it for a stream body
          duplex: "half",
        }),
      );
      assert.equal(answer?.status, 400, path);
      assert.equal(JSON.parse(await answer!.text()).error.details.field, "body", path);
    }
    const stored = (await service.list("acme")).find((record) => record.id === leaked.id);
    assert.equal(stored?.replacedByKeyId, null, "not rotated");
    assert.equal((await service.verify(leaked.key)).keyId, leaked.id);
  });

  it("paths outside the routes fall through to the app", async () => {
    for (const path of ["/settings/api-keys", "/settings/api-keys/", "/settings/other", "/x"]) {
      const response = await fetch(`${server.url}${path}`);
      assert.equal(await response.text(), "app", path);
    }
    assert.equal((await call("GET", "/keys/a/b/c")).text, "app");
  });

  it("refuses a bad prefix at construction", () => {
    for (const prefix of ["", "/", "api-keys", "/api-keys/", "/a b"]) {
      assert.throws(
        () =>
          createApiKeysAdminFetchHandler({
            prefix,
            service,
            scopes: ["projects:read"],
            tenantOf: () => "t",
            canManage: () => true,
            policy: () => null,
          }),
        TypeError,
        prefix,
      );
    }
  });
});

describe("createApiKeysAdminFetchHandler: a request no route answers keeps its body", () => {
  const { service } = makeService();
  const admin = createApiKeysAdminFetchHandler({
    prefix: "/api",
    service,
    scopes: ["projects:read"],
    tenantOf: () => "acme",
    canManage: () => true,
    policy: () => null,
    maxBodyBytes: 64,
  });
  /** The app below the admin routes: its own routes under the same prefix read their bodies. */
  const app = async (request: Request) =>
    (await admin(request)) ?? Response.json({ got: await request.json() });

  for (const path of ["/api/orders", "/api/keys/", "/api/keys/x/rotate/extra"]) {
    it(`POST ${path} reaches the app with its JSON body unread`, async () => {
      const response = await app(
        new Request(`http://127.0.0.1${path}`, {
          method: "POST",
          headers: CSRF,
          body: JSON.stringify({ item: 1 }),
        }),
      );
      assert.equal(response.status, 200, path);
      assert.deepEqual(await response.json(), { got: { item: 1 } });
    });
  }

  it("a body over maxBodyBytes on the app's path is neither read nor cancelled", async () => {
    let cancelled = false;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(JSON.stringify({ note: "x".repeat(500) })));
        controller.close();
      },
      cancel() {
        cancelled = true;
      },
    });
    const request = new Request("http://127.0.0.1/api/orders", {
      method: "PATCH",
      headers: CSRF,
      body,
      // @ts-ignore: Node's Request needs it for a stream body
      duplex: "half",
    });
    assert.equal(await admin(request), undefined);
    assert.equal(request.bodyUsed, false);
    assert.equal(cancelled, false);
    assert.equal((await request.json()).note.length, 500);
  });
});

describe("createApiKeysAdminFetchHandler: a key id as the element sends it (encodeURIComponent)", () => {
  // An idFactory's (or an import's) id with characters a path segment must escape.
  const ID = "legacy key:1+é";
  const { service } = makeService({ idFactory: () => ID });
  const admin = createApiKeysAdminFetchHandler({
    prefix: "/api-keys",
    service,
    scopes: ["projects:read"],
    tenantOf: () => "acme",
    canManage: () => true,
    policy: () => null,
  });
  const send = async (method: string, path: string, body?: unknown) => {
    const response = await admin(
      new Request(`http://127.0.0.1/api-keys${path}`, {
        method,
        headers: CSRF,
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    );
    return response && { status: response.status, json: JSON.parse(await response.text()) };
  };

  it("reads, renames and revokes the key at its percent-encoded path, as Nest's :id decodes it", async () => {
    await service.create({
      tenantId: "acme",
      name: "old",
      scopes: [{ resource: "projects", level: "read" }],
    });
    const at = `/keys/${encodeURIComponent(ID)}`;
    const read = await send("GET", at);
    assert.equal(read?.status, 200);
    assert.equal(read?.json.id, ID);
    assert.equal((await send("PATCH", at, { name: "renamed" }))?.json.name, "renamed");
    assert.equal((await send("DELETE", at))?.json.status, "revoked");
  });

  it("a malformed escape or an encoded slash in a segment is no route (the app's 404)", async () => {
    assert.equal(await send("GET", "/keys/%E0%A4%A"), undefined);
    assert.equal(await send("GET", "/keys/a%2Fusage"), undefined);
    assert.equal(await send("GET", "/keys%2Fx"), undefined);
  });
});

describe("createApiKeysAdminFetchHandler: a caller key's limits over HTTP", () => {
  const at = Date.parse("2030-01-01T10:00:00.000Z");
  const store = createMemoryRateLimitStore({ now: () => at });
  const { service } = makeService({
    limiter: createRateLimiter({ store, logger: () => {} }),
    clock: () => new Date(at),
  });
  let server: Served;
  before(async () => {
    const admin = createApiKeysAdminFetchHandler({
      prefix: "/api-keys",
      service,
      scopes: ["projects:read", "projects:write"],
      // The app's own authentication of the caller's key (no use recorded).
      tenantOf: async (request) =>
        (await service.verify(request.headers.get("x-api-key")!)).tenantId,
      callerKeyIdOf: async (request) =>
        (await service.verify(request.headers.get("x-api-key")!)).keyId,
      canManage: () => true,
    });
    server = await serve(async (request) =>
      (await admin(request)) ?? new Response("app", { status: 404 })
    );
  });
  after(() => server.close());

  it("a rate-limited, credit-limited keys:write key cannot rotate an unlimited key (403 as create's refusal); its own key it can", async () => {
    await assertRotationKeepsCallerLimits(service, async (callerKey, id, grace) => {
      const response = await fetch(`${server.url}/api-keys/keys/${id}/rotate`, {
        method: "POST",
        headers: { ...CSRF, "x-api-key": callerKey },
        body: JSON.stringify({ grace }),
      });
      return { status: response.status, json: JSON.parse(await response.text()) };
    });
  });
});
