/**
 * The Fetch demo's handler in process: request bodies are read bounded (413
 * past the cap, without reading the rest), the JSON body check answers
 * 400 for what the Nest demo's DTOs refuse, and the admin routes are the library's,
 * counting none of the caller key's rate limits (as the Nest demo's).
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { InMemoryApiKeyStorage } from "../../../api_keys/mod.ts";
import { createFetchDemoApp, type FetchDemoApp } from "../../../demo/fetch/app.ts";
import { type DemoKeys, seedDemoKeys } from "../../../demo/seed.ts";
import { countingBody } from "../../counting_body.ts";

const INFO = { remoteAddr: { transport: "tcp", hostname: "127.0.0.1", port: 40_000 } };
const CHUNK = 64 * 1024;

/** The Fetch demo's app on in-memory storage with the demo keys; `html` is its page. */
async function seededApp(html = ""): Promise<{ app: FetchDemoApp; keys: DemoKeys }> {
  const app = createFetchDemoApp({
    storage: new InMemoryApiKeyStorage(),
    peppers: { 1: "a-pepper-of-at-least-thirty-two-bytes" },
    problemDetails: false,
    pageAssets: { html, script: "", client: "", elements: "" },
    pageSession: { adminKey: undefined },
  });
  return { app, keys: await seedDemoKeys(app.service) };
}

describe("the Fetch demo's request bodies", () => {
  let app: FetchDemoApp;
  let keys: DemoKeys;
  before(async () => {
    ({ app, keys } = await seededApp());
  });
  after(() => app.service.close());

  const post = async (path: string, body: BodyInit, headers: Record<string, string> = {}) => {
    const request = new Request(`http://127.0.0.1${path}`, {
      method: "POST",
      body,
      headers: { "X-API-Key": keys.admin.key, "Content-Type": "application/json", ...headers },
      duplex: "half",
    } as RequestInit);
    const response = await app.handler(request, INFO);
    return { status: response.status, body: await response.json() };
  };

  it("a body over the cap is a 413 without reading it all", async () => {
    const { stream, pulled } = countingBody(20 * 1024 * 1024, CHUNK);
    const { status, body } = await post("/api/projects", stream);
    assert.equal(status, 413, JSON.stringify(body));
    assert.equal(body.error.code, "CONTENT_TOO_LARGE");
    assert.ok(pulled() <= 100 * 1024 + 2 * CHUNK, `${pulled()} bytes read`);
  });

  it("a Content-Length over the cap is a 413 before any byte is read", async () => {
    const { stream, pulled } = countingBody(20 * 1024 * 1024, CHUNK);
    const { status } = await post("/api/projects", stream, { "Content-Length": "20971520" });
    assert.equal(status, 413);
    assert.equal(pulled(), 0);
  });

  it("a body under the cap is read", async () => {
    const { status, body } = await post("/api/projects", JSON.stringify({ name: "p".repeat(90) }));
    assert.equal(status, 201, JSON.stringify(body));
  });

  it("the admin routes are the library's: its body bound (16 KiB) and its field checks", async () => {
    const { status } = await post("/admin/keys", JSON.stringify({ name: "k".repeat(20_000) }));
    assert.equal(status, 413);
    const { status: bad, body } = await post(
      "/admin/keys",
      JSON.stringify({ name: "k", scopes: [{ resource: "projects", level: "read" }] }),
    );
    assert.equal(bad, 400, JSON.stringify(body));
    assert.equal(body.error.code, "api_key_invalid_input");
    assert.equal(body.error.details.field, "scopes");
  });

  it("refuses inherited names as unknown fields (constructor, __proto__, toString)", async () => {
    for (const name of ["constructor", "__proto__", "toString"]) {
      const { status, body } = await post("/api/projects", `{"name":"k","${name}":{}}`);
      assert.equal(status, 400, `${name}: ${JSON.stringify(body)}`);
      assert.deepEqual(body.error.details, [`property ${name} should not exist`]);
    }
  });

  it("lists at most 10 unknown fields, each name cut at 64 characters", async () => {
    const fields = Object.fromEntries(
      Array.from({ length: 1_000 }, (_, i) => [`${"f".repeat(70)}${i}`, 1]),
    );
    const { status, body } = await post("/api/projects", JSON.stringify({ name: "p", ...fields }));
    assert.equal(status, 400);
    const details = body.error.details as string[];
    assert.equal(details.length, 11);
    assert.equal(details[0], `property ${"f".repeat(64)}… should not exist`);
    assert.equal(details[10], "and 990 more unknown properties");
  });
});

describe("the Fetch demo's admin routes", () => {
  let app: FetchDemoApp;
  let keys: DemoKeys;
  before(async () => {
    ({ app, keys } = await seededApp());
  });
  after(() => app.service.close());

  const get = async (path: string) => {
    const request = new Request(`http://127.0.0.1${path}`, {
      headers: { "X-API-Key": keys.admin.key },
    });
    const response = await app.handler(request, INFO);
    await response.body?.cancel();
    return response;
  };

  it("send no RateLimit header and count nothing of the caller key's policy (as Nest's)", async () => {
    for (const path of ["/admin/config", "/admin/keys", `/admin/keys/${keys.admin.id}/usage`]) {
      const response = await get(path);
      assert.equal(response.status, 200, path);
      assert.equal(response.headers.get("ratelimit"), null, path);
      assert.equal(response.headers.get("ratelimit-policy"), null, path);
    }
    const counted = await get("/api/whoami");
    assert.equal(counted.status, 200);
    assert.match(counted.headers.get("ratelimit") ?? "", /^"demo";r=999;/);
  });
});

describe("the Fetch demo's HEAD requests", () => {
  let app: FetchDemoApp;
  let keys: DemoKeys;
  let server: Deno.HttpServer<Deno.NetAddr>;
  let url: string;
  before(async () => {
    ({ app, keys } = await seededApp("<p>page</p>"));
    server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, app.handler);
    url = `http://127.0.0.1:${server.addr.port}`;
  });
  after(async () => {
    await server.shutdown();
    await app.service.close();
  });

  it("answer a GET route (page and API) as its GET does, without a body (as Nest's)", async () => {
    for (const path of ["/", "/api/ping"]) {
      const headers = { "X-API-Key": keys.reader.key };
      const head = await fetch(`${url}${path}`, { method: "HEAD", headers });
      assert.equal(head.status, 200, path);
      assert.equal(await head.text(), "", path);
      const get = await fetch(`${url}${path}`, { headers });
      assert.equal(get.status, 200, path);
      assert.equal(head.headers.get("content-type"), get.headers.get("content-type"), path);
      assert.notEqual(await get.text(), "", path);
    }
  });

  it("answer a path no route has with a 404, and a POST-only route with a 404", async () => {
    const headers = { "X-API-Key": keys.reader.key };
    for (const path of ["/nowhere", "/api/leaked-keys"]) {
      const head = await fetch(`${url}${path}`, { method: "HEAD", headers });
      await head.body?.cancel();
      assert.equal(head.status, 404, path);
    }
  });
});
