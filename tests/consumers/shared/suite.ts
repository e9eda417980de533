// The consumer app's checks, shared by every app under tests/consumers/ (see ./app.ts): real HTTP
// requests against the running app. Each app's test/app.test.ts calls `consumerSuite` with its
// own bootstrap.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { INestApplication } from "@nestjs/common";
import { ApiKeyError, ApiKeysService, generateKey } from "@saferoute/api-kit/api-keys";
import { clock, ORDER_NOT_FOUND } from "./app.ts";

let app: INestApplication;
let url: string;
let keys: ApiKeysService;

async function call(path: string, headers: Record<string, string> = {}, method = "GET") {
  const response = await fetch(`${url}${path}`, { method, headers });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : {} };
}

async function newKey(
  scopes: { resource: string; level: "read" | "write" }[],
  extra: Record<string, unknown> = {},
): Promise<{ id: string; key: string }> {
  return await keys.create({
    tenantId: "consumer",
    name: "check",
    scopes,
    expiresAt: null,
    ...extra,
  });
}

/** Asserts an RFC 9457 body for an API-key failure with `code`. */
async function expectKeyFailure(path: string, headers: Record<string, string>, code: string) {
  const { status, body, headers: h } = await call(path, headers);
  const expected = new ApiKeyError(code as ConstructorParameters<typeof ApiKeyError>[0]).httpStatus;
  assert.equal(status, expected, `${code}: ${JSON.stringify(body)}`);
  assert.match(h.get("content-type") ?? "", /json/);
  assert.equal(body.status, expected);
  assert.equal(typeof body.title, "string");
  assert.equal(typeof body.type, "string");
  assert.equal(body.instance, path);
  assert.equal(body.code, code, JSON.stringify(body));
}

/**
 * Registers the consumer checks as one `describe(name)` block: `bootstrap` starts the app under
 * test and returns it with its base URL.
 */
export function consumerSuite(
  name: string,
  bootstrap: () => Promise<{ app: INestApplication; url: string }>,
): void {
  describe(name, () => {
    before(async () => {
      ({ app, url } = await bootstrap());
      keys = app.get(ApiKeysService);
    });
    after(async () => {
      await app.close();
    });

    it("a valid key reads a paginated route", async () => {
      const { key } = await newKey([{ resource: "orders", level: "read" }]);
      const { status, body } = await call("/orders?page=2&limit=2", { "x-api-key": key });
      assert.equal(status, 200, JSON.stringify(body));
      assert.equal(body.success, true);
      assert.deepEqual(body.data, [{ id: 3 }, { id: 4 }]);
      assert.equal(body.meta.pagination.page, 2);
      assert.equal(body.meta.pagination.limit, 2);
      assert.equal(body.meta.pagination.total, 5);
      assert.equal(body.meta.pagination.totalPages, 3);
      assert.equal(body.meta.pagination.hasNext, true);
      assert.equal(body.meta.pagination.hasPrev, true);
      assert.equal(typeof body.requestId, "string");
    });

    it("a valid key in Authorization: Bearer works too", async () => {
      const { key } = await newKey([{ resource: "orders", level: "write" }]);
      const { status, body } = await call("/orders", { authorization: `Bearer ${key}` }, "POST");
      assert.equal(status, 201, JSON.stringify(body));
      assert.deepEqual(body.data, { id: 6 });
    });

    it("a missing key is api_key_missing", async () => {
      await expectKeyFailure("/orders", {}, "api_key_missing");
    });

    it("a malformed key is api_key_malformed", async () => {
      await expectKeyFailure("/orders", { "x-api-key": "not-a-key" }, "api_key_malformed");
    });

    it("an unknown well-formed key is api_key_invalid", async () => {
      const unknown = generateKey({ environment: "live" }).raw;
      await expectKeyFailure("/orders", { "x-api-key": unknown }, "api_key_invalid");
    });

    it("a revoked key is api_key_revoked", async () => {
      const { id, key } = await newKey([{ resource: "orders", level: "read" }]);
      await keys.revoke(id);
      await expectKeyFailure("/orders", { "x-api-key": key }, "api_key_revoked");
    });

    it("an expired key is api_key_expired", async () => {
      const expiresAt = new Date(clock.now().getTime() + 60_000);
      const { key } = await newKey([{ resource: "orders", level: "read" }], { expiresAt });
      clock.offsetMs = 120_000;
      try {
        await expectKeyFailure("/orders", { "x-api-key": key }, "api_key_expired");
      } finally {
        clock.offsetMs = 0;
      }
    });

    it("a test key on a live-only route is api_key_environment_mismatch", async () => {
      const { key } = await newKey([{ resource: "orders", level: "read" }], {
        environment: "test",
      });
      await expectKeyFailure("/orders/live", { "x-api-key": key }, "api_key_environment_mismatch");
    });

    it("a read key on a write route is api_key_scope_insufficient", async () => {
      const { key } = await newKey([{ resource: "orders", level: "read" }]);
      const { status, body } = await call("/orders", { "x-api-key": key }, "POST");
      assert.equal(status, new ApiKeyError("api_key_scope_insufficient").httpStatus);
      assert.equal(body.code, "api_key_scope_insufficient", JSON.stringify(body));
    });

    it("a key used from outside its CIDRs is api_key_ip_not_allowed", async () => {
      const { key } = await newKey([{ resource: "orders", level: "read" }], {
        allowedIpCidrs: ["10.0.0.0/8"],
      });
      await expectKeyFailure("/orders", { "x-api-key": key }, "api_key_ip_not_allowed");
    });

    it("a handler error is an RFC 9457 problem with the route's problem type", async () => {
      const { key } = await newKey([{ resource: "orders", level: "read" }]);
      const { status, body, headers } = await call("/orders/999", { "x-api-key": key });
      assert.equal(status, 404);
      assert.match(headers.get("content-type") ?? "", /application\/problem\+json/);
      assert.equal(body.type, ORDER_NOT_FOUND);
      assert.equal(body.title, "Not Found");
      assert.equal(body.status, 404);
      assert.equal(body.detail, "order 999 does not exist");
      assert.equal(body.instance, "/orders/999");
    });

    it("serves the OpenAPI JSON with the app's routes", async () => {
      const { status, body } = await call("/docs-json");
      assert.equal(status, 200);
      assert.match(body.openapi, /^3\./);
      assert.ok(body.paths["/orders"]?.get, "GET /orders documented");
      const list = body.paths["/orders"].get;
      assert.ok(list.responses["200"], "its 200 response documented");
      assert.ok(body.components.schemas.SafePaginationMeta, "the pagination meta component");
      assert.ok(list.responses["401"], "global 401 applied");
      assert.ok(body.components.securitySchemes["api-key"]);
    });
  });
}
