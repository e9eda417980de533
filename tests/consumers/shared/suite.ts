// The consumer app's checks, shared by every app under tests/consumers/ (see ./app.ts): real HTTP
// requests against the running app, once per error format. Each app's test/app.test.ts calls
// `consumerSuite` with its own way of creating a Nest app on its platform. The OpenAPI checks run
// only in apps with @nestjs/swagger (CONSUMER_SWAGGER=1), where ./openapi.ts was copied in.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import process from "node:process";
import type { INestApplication, Type } from "@nestjs/common";
import { ApiKeyError, ApiKeysService, generateKey } from "@saferoute/api-kit/api-keys";
import {
  appModule,
  clock,
  type ErrorFormat,
  installedVersion,
  ORDER_NOT_FOUND,
  ORDERS,
  PROBLEM_BASE,
  THROTTLE_LIMIT,
  V1_DEPRECATION,
} from "./app.ts";
import { storeThrottlerChecks } from "./store_throttler.ts";
import { adminRoutesChecks } from "./admin_routes.ts";

/** Creates (does not start) a Nest app of `module` on the app's platform. */
export type CreateApp = (module: Type<unknown>) => Promise<INestApplication>;

/** What ./openapi.ts exports. */
interface OpenApiHalf {
  serveDocument(app: INestApplication, format: ErrorFormat): void;
  validateDocument(document: object): Promise<void>;
}

/** Whether the app has @nestjs/swagger (and ./openapi.ts). */
const SWAGGER = process.env.CONSUMER_SWAGGER === "1";

/** The major of the app's installed `@nestjs/common`. */
const [NEST_MAJOR] = installedVersion("@nestjs/common");

/** ./openapi.ts, by a computed name: the apps without swagger do not have it. */
async function openApiHalf(): Promise<OpenApiHalf> {
  const name = "./openapi.js";
  return await import(name);
}

/** A response: status, headers and the body (JSON parsed, else the text). */
interface Reply {
  status: number;
  headers: Headers;
  // deno-lint-ignore no-explicit-any
  body: any;
}

/** A started app: its base URL, its key service and a request helper. */
class Running {
  constructor(readonly app: INestApplication, readonly url: string) {}

  static async start(createApp: CreateApp, format: ErrorFormat): Promise<Running> {
    const app = await createApp(appModule(format));
    if (SWAGGER) (await openApiHalf()).serveDocument(app, format);
    await app.listen(0, "127.0.0.1");
    const address = app.getHttpServer().address();
    if (address === null || typeof address === "string") throw new Error("no TCP address");
    return new Running(app, `http://127.0.0.1:${address.port}`);
  }

  get keys(): ApiKeysService {
    return this.app.get(ApiKeysService);
  }

  async call(path: string, headers: Record<string, string> = {}, method = "GET"): Promise<Reply> {
    const response = await fetch(`${this.url}${path}`, { method, headers });
    const text = await response.text();
    const json = /json/.test(response.headers.get("content-type") ?? "");
    return {
      status: response.status,
      headers: response.headers,
      body: json ? JSON.parse(text) : text,
    };
  }

  /** A new key (never expiring unless `extra` says) with `scopes`; returns its id and raw key. */
  async newKey(
    scopes: { resource: string; level: "read" | "write" }[],
    extra: Record<string, unknown> = {},
  ): Promise<{ id: string; key: string }> {
    return await this.keys.create({
      tenantId: "consumer",
      name: "check",
      scopes,
      expiresAt: null,
      ...extra,
    });
  }

  /** A raw key that reads and writes orders. */
  async readWrite(): Promise<string> {
    const { key } = await this.newKey([{ resource: "orders", level: "write" }]);
    return key;
  }
}

const READ = [{ resource: "orders", level: "read" as const }];

/** The status the package gives an API-key failure `code`. */
function keyStatus(code: string): number {
  return new ApiKeyError(code as ConstructorParameters<typeof ApiKeyError>[0]).httpStatus;
}

/** Asserts an RFC 9457 body of `status` with `code`, for `path`. */
function assertProblem(reply: Reply, status: number, code: string, path: string): void {
  const { body, headers } = reply;
  assert.equal(reply.status, status, `${code}: ${JSON.stringify(body)}`);
  assert.match(headers.get("content-type") ?? "", /application\/problem\+json/);
  assert.equal(body.status, status);
  assert.equal(typeof body.title, "string");
  assert.equal(typeof body.type, "string");
  assert.equal(body.instance, path);
  assert.equal(body.code, code, JSON.stringify(body));
}

/** Asserts an error envelope of `status` with `code`. */
function assertEnvelope(reply: Reply, status: number, code: string): void {
  const { body } = reply;
  assert.equal(reply.status, status, `${code}: ${JSON.stringify(body)}`);
  assert.match(reply.headers.get("content-type") ?? "", /application\/json/);
  assert.equal(body.success, false);
  assert.equal(body.statusCode, status);
  assert.equal(body.error.code, code, JSON.stringify(body));
  assert.equal(typeof body.error.message, "string");
}

/** Asserts an error of `status` with `code` for `path`, in `format`. */
function assertError(
  reply: Reply,
  status: number,
  code: string,
  path: string,
  format: ErrorFormat,
): void {
  if (format === "problem") return assertProblem(reply, status, code, path);
  assertEnvelope(reply, status, code);
  assert.equal(reply.body.path, path);
}

/** The message of an error in `format`: the problem's `detail`, the envelope's `error.message`. */
function messageOf(reply: Reply, format: ErrorFormat): string {
  return format === "problem" ? reply.body.detail : reply.body.error.message;
}

/** The `Deprecation` header of `V1_DEPRECATION` (`@` and the Unix seconds of `since`). */
const DEPRECATION_HEADER = `@${Date.parse(V1_DEPRECATION.since) / 1000}`;

/** Asserts the deprecation headers of the v1 routes. */
function assertDeprecationHeaders(headers: Headers): void {
  assert.equal(headers.get("deprecation"), DEPRECATION_HEADER);
  assert.equal(headers.get("sunset"), new Date(V1_DEPRECATION.sunset).toUTCString());
  assert.equal(headers.get("link"), `<${V1_DEPRECATION.link}>; rel="deprecation"`);
}

/**
 * The checks of the integrations every app installs, as the repository's Nest tests make them
 * (tests/safe_response/nest/_integrations_test.ts, the scenario "the throttler's headers are
 * mirrored into meta, then its 429"), against the started app sending errors in `format`.
 */
function integrationChecks(server: () => Running, format: ErrorFormat): void {
  describe("integrations (@nestjs/throttler, nestjs-cls, nestjs-i18n)", () => {
    it("@nestjs/throttler: its headers are mirrored into meta.rateLimit, then its 429", async () => {
      const path = "/integrations/throttled";
      for (let n = 1; n <= THROTTLE_LIMIT; n++) {
        const { status, headers, body } = await server().call(path);
        assert.equal(status, 200, JSON.stringify(body));
        const reset = Number(headers.get("x-ratelimit-reset"));
        assert.ok(reset > 0 && reset <= 60, `X-RateLimit-Reset ${reset}`);
        assert.deepEqual(body.meta.rateLimit, {
          limit: THROTTLE_LIMIT,
          remaining: THROTTLE_LIMIT - n,
          reset,
        });
      }
      const refused = await server().call(path);
      assertError(refused, 429, "TOO_MANY_REQUESTS", path, format);
      // The throttler's 429 sends only Retry-After (seconds): limit 0 means unknown.
      const retryAfter = Number(refused.headers.get("retry-after"));
      assert.ok(retryAfter > 0 && retryAfter <= 60, `Retry-After ${retryAfter}`);
      assert.deepEqual(refused.body.meta.rateLimit, {
        limit: 0,
        remaining: 0,
        reset: retryAfter,
        retryAfter,
      });
    });

    it("nestjs-cls: the store's fields are in meta on successes and errors, guard errors included", async () => {
      const headers = { "x-trace-id": "trace-123", "x-tenant-id": "tenant-7" };
      const context = { traceId: "trace-123", tenant: "tenant-7" };
      const ok = await server().call("/integrations/plain", headers);
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      assert.deepEqual(ok.body.meta, context);
      const missing = await server().call("/integrations/missing", headers);
      assertError(missing, 404, "NOT_FOUND", "/integrations/missing", format);
      assert.deepEqual(missing.body.meta, context);
      const guarded = await server().call("/integrations/plain", { ...headers, "x-deny": "1" });
      assertError(guarded, 403, "FORBIDDEN", "/integrations/plain", format);
      assert.equal(guarded.body.meta.traceId, "trace-123");
      const page = await server().call("/integrations/page", headers);
      assert.equal(page.body.meta.pagination.type, "offset");
      assert.equal(page.body.meta.traceId, "trace-123");
      const without = await server().call("/integrations/plain");
      assert.equal(without.body.meta, undefined, "store values left undefined are left out");
    });

    it("nestjs-i18n: messages are translated in the request's language, guard errors included", async () => {
      const greeting = "/integrations/greeting";
      assert.equal((await server().call(greeting)).body.meta.message, "Welcome");
      assert.equal((await server().call(`${greeting}?lang=fr`)).body.meta.message, "Bienvenue");
      const path = "/integrations/missing";
      const en = await server().call(path);
      assertError(en, 404, "NOT_FOUND", path, format);
      assert.equal(messageOf(en, format), "No such order");
      const fr = await server().call(path, { "accept-language": "fr" });
      assertError(fr, 404, "NOT_FOUND", path, format);
      assert.equal(messageOf(fr, format), "Commande introuvable");
      const guarded = await server().call("/integrations/plain?lang=fr", { "x-deny": "1" });
      assertError(guarded, 403, "FORBIDDEN", "/integrations/plain", format);
      assert.equal(messageOf(guarded, format), "Accès refusé");
      // Messages without a translation stay as written (the handler errors: "order 999 ...").
    });
  });
}

/**
 * Registers the consumer checks: one `describe(name)` block against an app sending problem
 * details, one against an app sending error envelopes, one against the throttler over the
 * package's rate-limit store, one against the settings page's admin routes. `createApp` creates the app under test
 * on the app's platform.
 */
export function consumerSuite(name: string, createApp: CreateApp): void {
  problemDetailsChecks(name, createApp);
  envelopeChecks(`${name} (error envelopes)`, createApp);
  describe(`${name} (rate-limit store)`, () => storeThrottlerChecks(createApp));
  describe(`${name} (admin routes)`, () => adminRoutesChecks(createApp));
}

function problemDetailsChecks(name: string, createApp: CreateApp): void {
  describe(name, () => {
    let server: Running;
    before(async () => {
      server = await Running.start(createApp, "problem");
    });
    after(async () => {
      await server?.app.close();
    });

    describe("API keys (ApiKeysGuard, RequireScope, RequireEnvironment, CurrentApiKey)", () => {
      /** Asserts the problem of an API-key failure with `code`. */
      async function expectKeyFailure(path: string, headers: Record<string, string>, code: string) {
        assertProblem(await server.call(path, headers), keyStatus(code), code, path);
      }

      it("a valid key in X-API-Key reads a route", async () => {
        const { key } = await server.newKey(READ);
        const { status, body } = await server.call("/orders", { "x-api-key": key });
        assert.equal(status, 200, JSON.stringify(body));
        assert.equal(body.success, true);
      });

      it("a valid key in Authorization: Bearer works too", async () => {
        const key = await server.readWrite();
        const { status, body } = await server.call(
          "/orders",
          { authorization: `Bearer ${key}` },
          "POST",
        );
        assert.equal(status, 201, JSON.stringify(body));
        assert.deepEqual(body.data, { id: 6 });
      });

      it("CurrentApiKey gives the handler the verified key", async () => {
        const { id, key } = await server.newKey(READ, { environment: "test" });
        const { status, body } = await server.call("/orders/me", { "x-api-key": key });
        assert.equal(status, 200, JSON.stringify(body));
        assert.deepEqual(body.data, { keyId: id, tenantId: "consumer", environment: "test" });
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
        const { id, key } = await server.newKey(READ);
        await server.keys.revoke(id);
        await expectKeyFailure("/orders", { "x-api-key": key }, "api_key_revoked");
      });

      it("an expired key is api_key_expired", async () => {
        const expiresAt = new Date(clock.now().getTime() + 60_000);
        const { key } = await server.newKey(READ, { expiresAt });
        clock.offsetMs = 120_000;
        try {
          await expectKeyFailure("/orders", { "x-api-key": key }, "api_key_expired");
        } finally {
          clock.offsetMs = 0;
        }
      });

      it("a test key on a live-only route is api_key_environment_mismatch", async () => {
        const { key } = await server.newKey(READ, { environment: "test" });
        const path = "/orders/live";
        await expectKeyFailure(path, { "x-api-key": key }, "api_key_environment_mismatch");
        const live = await server.newKey(READ, { environment: "live" });
        assert.equal((await server.call(path, { "x-api-key": live.key })).status, 200);
      });

      it("a read key on a write route is api_key_scope_insufficient", async () => {
        const { key } = await server.newKey(READ);
        const reply = await server.call("/orders", { "x-api-key": key }, "POST");
        assertProblem(
          reply,
          keyStatus("api_key_scope_insufficient"),
          "api_key_scope_insufficient",
          "/orders",
        );
      });

      it("a key used from outside its CIDRs is api_key_ip_not_allowed", async () => {
        const { key } = await server.newKey(READ, { allowedIpCidrs: ["10.0.0.0/8"] });
        await expectKeyFailure("/orders", { "x-api-key": key }, "api_key_ip_not_allowed");
      });
    });

    describe("success envelopes (Paginated, CursorPaginated, SortMeta, FilterMeta, ...)", () => {
      it("Paginated: data, meta.pagination with links, SortMeta and FilterMeta", async () => {
        const { key } = await server.newKey(READ);
        const { status, body } = await server.call("/orders?page=2&limit=2", { "x-api-key": key });
        assert.equal(status, 200, JSON.stringify(body));
        assert.equal(body.success, true);
        assert.equal(body.statusCode, 200);
        assert.deepEqual(body.data.map((order: { id: number }) => order.id), [3, 4]);
        const { pagination } = body.meta;
        assert.equal(pagination.page, 2);
        assert.equal(pagination.limit, 2);
        assert.equal(pagination.total, 5);
        assert.equal(pagination.totalPages, 3);
        assert.equal(pagination.hasNext, true);
        assert.equal(pagination.hasPrev, true);
        assert.equal(pagination.links.next, "/orders?page=3&limit=2");
        assert.equal(pagination.links.prev, "/orders?page=1&limit=2");
        assert.deepEqual(body.meta.sort, { field: "id", order: "asc" });
        assert.deepEqual(body.meta.filters, {});
        assert.equal(body.path, "/orders");
        assert.equal(typeof body.timestamp, "string");
      });

      it("FilterMeta mirrors the handler's filters", async () => {
        const { key } = await server.newKey(READ);
        const { body } = await server.call("/orders?status=shipped", { "x-api-key": key });
        assert.deepEqual(body.meta.filters, { status: "shipped" });
        assert.deepEqual(body.data.map((order: { id: number }) => order.id), [2, 4]);
        assert.equal(body.meta.pagination.total, 2);
      });

      it("PaginationQuery: no limit is defaultLimit, a larger one is clamped to maxLimit", async () => {
        const { key } = await server.newKey(READ);
        const fallback = await server.call("/orders", { "x-api-key": key });
        assert.equal(fallback.body.meta.pagination.limit, 2);
        assert.equal(fallback.body.data.length, 2);
        const clamped = await server.call("/orders?limit=100", { "x-api-key": key });
        assert.equal(clamped.body.meta.pagination.limit, 3);
        assert.equal(clamped.body.data.length, 3);
      });

      it("a bad pagination query is a 400 INVALID_PAGINATION_QUERY", async () => {
        const { key } = await server.newKey(READ);
        const reply = await server.call("/orders?limit=0", { "x-api-key": key });
        assertProblem(reply, 400, "INVALID_PAGINATION_QUERY", "/orders");
      });

      it("CursorPaginated: pages by cursor with meta.pagination and links", async () => {
        const { key } = await server.newKey(READ);
        const first = await server.call("/orders/feed", { "x-api-key": key });
        assert.equal(first.status, 200, JSON.stringify(first.body));
        assert.deepEqual(first.body.data.map((order: { id: number }) => order.id), [1, 2]);
        const { pagination } = first.body.meta;
        assert.equal(pagination.type, "cursor");
        assert.equal(pagination.nextCursor, "2");
        assert.equal(pagination.hasMore, true);
        assert.equal(pagination.limit, 2);
        assert.equal(pagination.links.next, "/orders/feed?cursor=2&limit=2");
        const last = await server.call("/orders/feed?cursor=4&limit=3", { "x-api-key": key });
        assert.deepEqual(last.body.data.map((order: { id: number }) => order.id), [5]);
        assert.equal(last.body.meta.pagination.hasMore, false);
        assert.equal(last.body.meta.pagination.nextCursor, null);
      });

      it("ResponseMessage and SuccessCode set meta.message and code (201 on a POST)", async () => {
        const key = await server.readWrite();
        const { status, body } = await server.call("/orders", { "x-api-key": key }, "POST");
        assert.equal(status, 201, JSON.stringify(body));
        assert.equal(body.statusCode, 201);
        assert.equal(body.code, "ORDER_CREATED");
        assert.equal(body.meta.message, "Order created");
      });

      it("FieldSelection keeps the ?fields= of data and lists them in meta.fields", async () => {
        const { key } = await server.newKey(READ);
        const all = await server.call("/orders/3", { "x-api-key": key });
        assert.deepEqual(all.body.data, ORDERS[2]);
        const some = await server.call("/orders/3?fields=id,customer.city", { "x-api-key": key });
        assert.equal(some.status, 200, JSON.stringify(some.body));
        assert.deepEqual(some.body.data, { id: 3, customer: { city: ORDERS[2].customer.city } });
        assert.deepEqual(some.body.meta.fields, ["id", "customer.city"]);
      });

      it("a Buffer is sent as its bytes, never JSON", async () => {
        const bytes = await server.call("/bytes");
        assert.equal(bytes.status, 200);
        assert.equal(bytes.headers.get("content-type"), "application/octet-stream");
        assert.equal(bytes.body, "raw\u0000bytes");
      });

      it("RawResponse sends the result as is; SafeResponse wraps again with its status", async () => {
        const health = await server.call("/health");
        assert.equal(health.status, 200);
        assert.equal(health.body, "ok");
        const plain = await server.call("/raw");
        assert.deepEqual(plain.body, { plain: true });
        const job = await server.call("/raw/jobs", {}, "POST");
        assert.equal(job.status, 202, JSON.stringify(job.body));
        assert.equal(job.body.success, true);
        assert.deepEqual(job.body.data, { queued: true });
      });
    });

    describe("errors (ProblemType, the error catalog)", () => {
      it("a handler error is a problem with the route's ProblemType", async () => {
        const { key } = await server.newKey(READ);
        const reply = await server.call("/orders/999", { "x-api-key": key });
        assertProblem(reply, 404, "NOT_FOUND", "/orders/999");
        assert.equal(reply.body.type, ORDER_NOT_FOUND);
        assert.equal(reply.body.title, "Not Found");
        assert.equal(reply.body.detail, "order 999 does not exist");
      });

      it("SafeException (Nest entry) is resolved by the module's errorCatalog", async () => {
        const key = await server.readWrite();
        const reply = await server.call("/orders/3/cancel", { "x-api-key": key }, "POST");
        assertProblem(reply, 409, "ORDER_LOCKED", "/orders/3/cancel");
        assert.equal(reply.body.type, `${PROBLEM_BASE}/order-locked`);
        assert.equal(reply.body.detail, "The order is locked");
        assert.deepEqual(reply.body.details, { id: 3 });
      });

      it("a catalog exception (defineErrors().exception) sends its catalog's entry", async () => {
        const key = await server.readWrite();
        const reply = await server.call("/orders/3/refund", { "x-api-key": key }, "POST");
        assertProblem(reply, 409, "ORDER_LOCKED", "/orders/3/refund");
        assert.equal(reply.body.detail, "Refunds wait for delivery");
        assert.deepEqual(reply.body.details, { reason: "shipping" });
      });
    });

    describe("Deprecated", () => {
      it("sends Deprecation, Sunset and Link and meta.deprecation", async () => {
        const { status, headers, body } = await server.call("/v1/orders");
        assert.equal(status, 200, JSON.stringify(body));
        assertDeprecationHeaders(headers);
        assert.deepEqual(body.meta.deprecation, { deprecated: true, ...V1_DEPRECATION });
      });

      it("marks the route's errors too", async () => {
        const reply = await server.call("/v1/orders/9");
        assertProblem(reply, 404, "NOT_FOUND", "/v1/orders/9");
        assertDeprecationHeaders(reply.headers);
        assert.deepEqual(reply.body.meta.deprecation, { deprecated: true, ...V1_DEPRECATION });
      });
    });

    describe("request id", () => {
      it("echoes a safe incoming X-Request-Id in the header and the body", async () => {
        const { headers, body } = await server.call("/v1/orders", { "x-request-id": "consumer-1" });
        assert.equal(headers.get("x-request-id"), "consumer-1");
        assert.equal(body.requestId, "consumer-1");
      });

      it("echoes it on an error thrown by the guard", async () => {
        const reply = await server.call("/orders", { "x-request-id": "consumer-2" });
        assert.equal(reply.status, 401);
        assert.equal(reply.headers.get("x-request-id"), "consumer-2");
        assert.equal(reply.body.requestId, "consumer-2");
      });

      it("generates one when the incoming id is missing or unsafe", async () => {
        const cases: Record<string, string>[] = [{}, { "x-request-id": "x".repeat(129) }];
        for (const headers of cases) {
          const reply = await server.call("/v1/orders", headers);
          const id = reply.headers.get("x-request-id");
          assert.match(id ?? "", /^[0-9a-f-]{36}$/, JSON.stringify(headers));
          assert.equal(reply.body.requestId, id);
        }
      });

      it("is set on the response before the handler runs (the module's middleware)", async () => {
        const { body } = await server.call("/request-id", { "x-request-id": "consumer-3" });
        assert.equal(body.data.seen, "consumer-3");
      });
    });

    describe("rate-limit mirroring", () => {
      it("copies X-RateLimit-* into meta.rateLimit", async () => {
        const { status, headers, body } = await server.call("/limited");
        assert.equal(status, 200, JSON.stringify(body));
        assert.equal(headers.get("x-ratelimit-remaining"), "9");
        assert.deepEqual(body.meta.rateLimit, { limit: 10, remaining: 9, reset: 30 });
      });

      it("adds Retry-After as meta.rateLimit.retryAfter on a 429", async () => {
        const reply = await server.call("/limited/exceeded");
        assertProblem(reply, 429, "TOO_MANY_REQUESTS", "/limited/exceeded");
        assert.equal(reply.headers.get("retry-after"), "30");
        assert.deepEqual(reply.body.meta.rateLimit, {
          limit: 10,
          remaining: 0,
          reset: 30,
          retryAfter: 30,
        });
      });
    });

    integrationChecks(() => server, "problem");

    describe("OpenAPI", { skip: SWAGGER ? false : "no @nestjs/swagger in this app" }, () => {
      // deno-lint-ignore no-explicit-any
      let document: any;
      before(async () => {
        const { status, body } = await server.call("/docs-json");
        assert.equal(status, 200);
        document = body;
      });

      it("is a valid OpenAPI 3 document (swagger-parser)", async () => {
        assert.match(document.openapi, /^3\./);
        await (await openApiHalf()).validateDocument(document);
      });

      it("documents the envelope, pagination parameters and security", () => {
        const list = document.paths["/orders"].get;
        assert.ok(list.responses["200"], "its 200 response documented");
        assert.ok(document.components.schemas.SafePaginationMeta, "the pagination meta component");
        assert.ok(document.components.securitySchemes["api-key"]);
        assert.deepEqual(list.security, [{ "api-key": [] }]);
        const limit = list.parameters.find((p: { name: string }) => p.name === "limit");
        assert.equal(limit.schema.maximum, 3);
        assert.equal(limit.schema.default, 2);
        const feed = document.paths["/orders/feed"].get;
        assert.ok(feed.parameters.some((p: { name: string }) => p.name === "cursor"));
        assert.ok(document.components.schemas.SafeCursorPaginationMeta);
        assert.ok(document.paths["/raw/jobs"].post.responses["202"], "SafeResponse's status");
      });

      it("adds the global errors as problem details, except on SkipGlobalErrors routes", () => {
        const unauthorized = document.paths["/orders"].get.responses["401"];
        assert.ok(unauthorized?.content["application/problem+json"], JSON.stringify(unauthorized));
        const health = document.paths["/health"].get;
        assert.equal(health["x-safe-skip-global-errors"], true);
        assert.equal(health.responses["401"], undefined);
      });

      it("documents ProblemType and the catalog's errors", () => {
        const one = document.paths["/orders/{id}"].get;
        assert.equal(one["x-safe-problem-type"], ORDER_NOT_FOUND);
        assert.ok(one.responses["404"]);
        const cancel = document.paths["/orders/{id}/cancel"].post;
        assert.ok(cancel.responses["409"], JSON.stringify(cancel.responses));
        assert.match(cancel.responses["409"].description, /being shipped/);
      });

      // The crash of issue 19: `Deprecated` threw at module load on @nestjs/swagger 8.x and
      // 11.0 - 11.4.3 ("Cannot read properties of undefined (reading 'API_OPERATION')").
      it("marks the Deprecated routes deprecated", () => {
        assert.equal(document.paths["/v1/orders"].get.deprecated, true);
        assert.equal(document.paths["/v1/orders/{id}"].get.deprecated, true);
        assert.notEqual(document.paths["/orders"].get.deprecated, true);
      });
    });
  });
}

function envelopeChecks(name: string, createApp: CreateApp): void {
  describe(name, () => {
    let server: Running;
    before(async () => {
      server = await Running.start(createApp, "envelope");
    });
    after(async () => {
      await server?.app.close();
    });

    it("an API-key failure is an error envelope", async () => {
      const reply = await server.call("/orders", { "x-request-id": "envelope-1" });
      assertEnvelope(reply, 401, "api_key_missing");
      assert.equal(reply.body.requestId, "envelope-1");
      assert.equal(reply.body.path, "/orders");
    });

    it("a handler error is an error envelope", async () => {
      const { key } = await server.newKey(READ);
      const reply = await server.call("/orders/999", { "x-api-key": key });
      assertEnvelope(reply, 404, "NOT_FOUND");
      assert.equal(reply.body.error.message, "order 999 does not exist");
    });

    // Issue 24: Nest 12's `errorCode` option supplies the code at the exception's own-code step;
    // Nest 10 and 11 ignore the option, so their answer is the status's default code.
    if (NEST_MAJOR >= 12) {
      it(`HttpException's errorCode option (Nest ${NEST_MAJOR}) is the error code`, async () => {
        const reply = await server.call("/coded");
        assertEnvelope(reply, 409, "EMAIL_TAKEN");
        assert.equal(reply.body.error.message, "Email in use");
      });
    } else {
      it(`HttpException's errorCode option changes nothing on Nest ${NEST_MAJOR}`, async () => {
        const reply = await server.call("/coded");
        assertEnvelope(reply, 409, "CONFLICT");
        assert.equal(reply.body.error.message, "Email in use");
      });
    }

    it("a catalog error is an error envelope with its code and details", async () => {
      const key = await server.readWrite();
      const reply = await server.call("/orders/3/cancel", { "x-api-key": key }, "POST");
      assertEnvelope(reply, 409, "ORDER_LOCKED");
      assert.equal(reply.body.error.message, "The order is locked");
      assert.deepEqual(reply.body.error.details, { id: 3 });
    });

    it("a bad pagination query is an error envelope", async () => {
      const { key } = await server.newKey(READ);
      assertEnvelope(
        await server.call("/orders?page=0", { "x-api-key": key }),
        400,
        "INVALID_PAGINATION_QUERY",
      );
    });

    it("errors carry meta.deprecation and meta.rateLimit", async () => {
      const deprecated = await server.call("/v1/orders/9");
      assertEnvelope(deprecated, 404, "NOT_FOUND");
      assertDeprecationHeaders(deprecated.headers);
      assert.equal(deprecated.body.meta.deprecation.deprecated, true);
      const limited = await server.call("/limited/exceeded");
      assertEnvelope(limited, 429, "TOO_MANY_REQUESTS");
      assert.equal(limited.body.meta.rateLimit.retryAfter, 30);
    });

    it("successes are the same envelope as with problem details", async () => {
      const { key } = await server.newKey(READ);
      const { status, body } = await server.call("/orders/feed", { "x-api-key": key });
      assert.equal(status, 200, JSON.stringify(body));
      assert.equal(body.success, true);
      assert.equal(body.meta.pagination.type, "cursor");
    });

    integrationChecks(() => server, "envelope");

    it(
      "documents the global errors as envelopes",
      { skip: !SWAGGER && "no @nestjs/swagger" },
      async () => {
        const { body } = await server.call("/docs-json");
        await (await openApiHalf()).validateDocument(body);
        const unauthorized = body.paths["/orders"].get.responses["401"];
        assert.ok(unauthorized?.content["application/json"], JSON.stringify(unauthorized));
        assert.equal(unauthorized.content["application/problem+json"], undefined);
      },
    );
  });
}
