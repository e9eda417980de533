/**
 * The behaviours every binding must show, defined once: for each scenario,
 * the requests and the statuses, bodies and headers they must answer. A
 * scenario needing a capability (see `Capabilities`) runs only where the
 * binding has it. Imports nothing from the library (requests are plain
 * `fetch`), so the same file checks a consumer app built from the package.
 *
 * @module
 */
import assert from "node:assert/strict";
import {
  API_VERSION,
  BOOM_SECRET,
  type Capabilities,
  CATALOG,
  ITEM_PROBLEM_TYPE,
  ITEMS,
  type KeyRole,
  PROBLEM_BASE_URL,
  PROFILE,
  type ScenarioKeys,
  type ScenarioMode,
  THROTTLE_LIMIT,
} from "./spec.ts";

// deno-lint-ignore no-explicit-any
type Body = Record<string, any>;

/** What a request answered. */
export interface Answer {
  status: number;
  headers: Headers;
  /** Parsed JSON, else the text. */
  body: Body;
  text: string;
}

/** A running scenario app in one mode. */
export interface ScenarioTarget {
  /** `http://host:port`. */
  url: string;
  /** The seeded keys. */
  keys: ScenarioKeys;
}

/** One request of a scenario. */
export interface Call {
  method?: string;
  /** Role of the key sent in `X-API-Key`. */
  key?: KeyRole | "unknown";
  headers?: Record<string, string>;
  /** Sent as JSON. */
  json?: unknown;
}

/** A behaviour: its requests and checks, in one mode, maybe needing a capability. */
export interface Scenario {
  name: string;
  /** The mode of the app it runs against (default `envelope`). */
  mode?: ScenarioMode;
  /** A capability the binding must have. */
  needs?: keyof Capabilities;
  run(call: (path: string, init?: Call) => Promise<Answer>, keys: ScenarioKeys): Promise<void>;
}

/** Sends one request to `target`. */
export async function send(target: ScenarioTarget, path: string, init: Call = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...init.headers };
  if (init.key !== undefined) headers["x-api-key"] = target.keys[init.key];
  let body: string | undefined;
  if (init.json !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(init.json);
  }
  const response = await fetch(target.url + path, { method: init.method ?? "GET", headers, body });
  const text = await response.text();
  let parsed: Body = {};
  try {
    parsed = text === "" ? {} : JSON.parse(text);
  } catch {
    // not JSON: `text` has it
  }
  return { status: response.status, headers: response.headers, body: parsed, text };
}

/** The shape of every error envelope (`code`, message, request id, version, path). */
function assertErrorEnvelope(answer: Answer, status: number, code: string, path: string) {
  assert.equal(answer.status, status, answer.text);
  assert.match(answer.headers.get("content-type") ?? "", /^application\/json/);
  assert.equal(answer.body.success, false);
  assert.equal(answer.body.statusCode, status);
  assert.equal(answer.body.error.code, code);
  assert.equal(typeof answer.body.error.message, "string");
  assert.equal(typeof answer.body.requestId, "string");
  assert.equal(answer.headers.get("x-request-id"), answer.body.requestId);
  assert.equal(answer.body.meta.apiVersion, API_VERSION);
  assert.equal(answer.body.path, path);
}

/** The shape of every problem-details body. */
function assertProblem(answer: Answer, status: number, code: string, instance: string) {
  assert.equal(answer.status, status, answer.text);
  assert.match(answer.headers.get("content-type") ?? "", /^application\/problem\+json/);
  assert.equal(answer.body.status, status);
  assert.equal(answer.body.code, code);
  assert.equal(typeof answer.body.title, "string");
  assert.equal(answer.body.instance, instance);
  assert.equal(typeof answer.body.requestId, "string");
}

const KEY_FAILURES: Array<[string, Call, number, string]> = [
  ["no key", {}, 401, "api_key_missing"],
  ["a malformed key", { headers: { "x-api-key": "not-a-key" } }, 401, "api_key_malformed"],
  ["a well-formed unknown key", { key: "unknown" }, 401, "api_key_invalid"],
  [
    "the reader key on a write route",
    { key: "reader", method: "POST", json: {} },
    403,
    "api_key_scope_insufficient",
  ],
];

/** Every scenario, in order. */
export const SCENARIOS: readonly Scenario[] = [
  {
    name: "a plain success envelope with message, request id, response time and version",
    async run(call) {
      const answer = await call("/plain", { headers: { "x-request-id": "scenario-1" } });
      assert.equal(answer.status, 200);
      assert.match(answer.headers.get("content-type") ?? "", /^application\/json/);
      assert.equal(answer.headers.get("x-request-id"), "scenario-1");
      const { body } = answer;
      assert.equal(body.success, true);
      assert.equal(body.statusCode, 200);
      assert.deepEqual(body.data, { hello: "world" });
      assert.equal(body.requestId, "scenario-1");
      assert.equal(body.meta.message, "Hello");
      assert.equal(body.meta.apiVersion, API_VERSION);
      assert.equal(typeof body.meta.responseTime, "number");
      assert.equal(body.path, "/plain");
      assert.ok(!Number.isNaN(Date.parse(body.timestamp)));
      assert.deepEqual(
        Object.keys(body).sort(),
        ["data", "meta", "path", "requestId", "statusCode", "success", "timestamp"],
      );
    },
  },
  {
    name: "an unsafe request id is replaced by a generated one, echoed",
    async run(call) {
      const answer = await call("/plain", { headers: { "x-request-id": "has space" } });
      assert.notEqual(answer.body.requestId, "has space");
      assert.match(answer.body.requestId, /^\S{1,128}$/);
      assert.equal(answer.headers.get("x-request-id"), answer.body.requestId);
    },
  },
  {
    name: "offset pagination with links, sort and filters",
    async run(call) {
      const path = "/items?page=2&limit=3&sort=name&order=desc&status=active";
      const { status, body } = await call(path, { key: "reader" });
      assert.equal(status, 200);
      const active = ITEMS.filter((item) => item.status === "active");
      const expected = [...active].sort((a, b) => b.name.localeCompare(a.name)).slice(3, 6);
      assert.deepEqual(body.data, expected);
      const { pagination } = body.meta;
      assert.equal(pagination.page, 2);
      assert.equal(pagination.limit, 3);
      assert.equal(pagination.total, active.length);
      assert.equal(pagination.totalPages, Math.ceil(active.length / 3));
      assert.equal(pagination.hasNext, true);
      assert.equal(pagination.hasPrev, true);
      assert.equal(
        pagination.links.next,
        "/items?page=3&limit=3&sort=name&order=desc&status=active",
      );
      assert.equal(
        pagination.links.prev,
        "/items?page=1&limit=3&sort=name&order=desc&status=active",
      );
      assert.deepEqual(body.meta.sort, { field: "name", order: "desc" });
      assert.deepEqual(body.meta.filters, { status: "active" });
    },
  },
  {
    name: "the page size is clamped to maxLimit",
    async run(call) {
      const { body } = await call("/items?limit=500", { key: "reader" });
      assert.equal(body.meta.pagination.limit, 50);
      assert.equal(body.data.length, ITEMS.length);
    },
  },
  {
    name: "field selection trims data and lists meta.fields",
    async run(call) {
      const { body } = await call("/items?limit=2&fields=id,name", { key: "reader" });
      assert.deepEqual(body.data.map((item: Body) => Object.keys(item).sort()), [
        ["id", "name"],
        ["id", "name"],
      ]);
      assert.deepEqual(body.meta.fields, ["id", "name"]);
    },
  },
  {
    name: "field-selection quotas: the route's maxFields and maxFieldLength, else the module's",
    async run(call) {
      const profile = await call("/profile?fields=id,address.city,name,email");
      assert.deepEqual(profile.body.data, { id: "p_1", name: "Ada" }); // address.city: 12 > 8
      assert.deepEqual(profile.body.meta.fields, ["id", "name"]);
      const items = await call("/items?limit=1&fields=id,name,price,status", { key: "reader" });
      assert.deepEqual(items.body.meta.fields, ["id", "name", "price"]);
      assert.deepEqual(Object.keys(items.body.data[0]).sort(), ["id", "name", "price"]);
    },
  },
  {
    name: "fieldSelection: false turns it off for the route although the module enables it",
    async run(call) {
      const { body } = await call("/unselected?fields=id");
      assert.deepEqual(body.data, PROFILE);
      assert.equal(body.meta?.fields, undefined);
    },
  },
  {
    name: "cursor pagination, followed by its cursor",
    async run(call) {
      const first = await call("/feed?limit=4");
      assert.equal(first.status, 200);
      assert.deepEqual(first.body.data, ITEMS.slice(0, 4).map((item) => item.id));
      const { pagination } = first.body.meta;
      assert.equal(pagination.hasMore, true);
      assert.equal(pagination.nextCursor, "4");
      assert.equal(pagination.totalCount, ITEMS.length);
      assert.equal(pagination.links.next, "/feed?limit=4&cursor=4");
      const next = await call(pagination.links.next);
      assert.deepEqual(next.body.data, ITEMS.slice(4, 8).map((item) => item.id));
      assert.equal(next.body.meta.pagination.previousCursor, "0");
    },
  },
  {
    name: "a create route: its status, success code and message",
    async run(call) {
      const { status, body } = await call("/items", {
        method: "POST",
        key: "writer",
        json: { name: "New" },
      });
      assert.equal(status, 201);
      assert.equal(body.statusCode, 201);
      assert.equal(body.code, "ITEM_CREATED");
      assert.equal(body.meta.message, "Item created");
      assert.deepEqual(body.data, { id: "it_new", name: "New" });
    },
  },
  {
    name: "key failures: missing, malformed, unknown, scope, environment",
    async run(call, keys) {
      for (const [what, init, status, code] of KEY_FAILURES) {
        const path = init.method === "POST" ? "/items" : "/items?page=1";
        const answer = await call(path, init);
        assertErrorEnvelope(answer, status, code, path.split("?")[0]);
        assert.ok(!answer.text.includes(keys.reader) && !answer.text.includes(keys.unknown), what);
      }
      const environment = await call("/items", { method: "POST", key: "tester", json: {} });
      assertErrorEnvelope(environment, 403, "api_key_environment_mismatch", "/items");
    },
  },
  {
    name: "Authorization: Bearer works; two different keys are malformed",
    async run(call, keys) {
      const bearer = await call("/whoami", { headers: { authorization: `Bearer ${keys.reader}` } });
      assert.equal(bearer.status, 200);
      assert.equal(bearer.body.data.tenantId, "scenario");
      const two = await call("/whoami", {
        headers: { "x-api-key": keys.reader, authorization: `Bearer ${keys.writer}` },
      });
      assertErrorEnvelope(two, 401, "api_key_malformed", "/whoami");
    },
  },
  {
    name: "the verified key reaches the handler",
    async run(call) {
      const { status, body } = await call("/whoami", { key: "writer" });
      assert.equal(status, 200);
      assert.deepEqual(body.data, {
        tenantId: "scenario",
        environment: "live",
        scopes: ["orders:write"],
      });
    },
  },
  {
    name: "the IP allowlist: allowed from the loopback, refused elsewhere",
    async run(call) {
      assert.equal((await call("/whoami", { key: "local" })).status, 200);
      const refused = await call("/whoami", { key: "remote" });
      assertErrorEnvelope(refused, 403, "api_key_ip_not_allowed", "/whoami");
    },
  },
  {
    name: "a catalog error with its status, key, message and details",
    async run(call) {
      const answer = await call("/items/it_99", { key: "reader" });
      assertErrorEnvelope(answer, 404, "ITEM_NOT_FOUND", "/items/it_99");
      assert.equal(answer.body.error.message, CATALOG.ITEM_NOT_FOUND.message);
      assert.deepEqual(answer.body.error.details, { id: "it_99" });
      assert.equal(typeof answer.body.meta.responseTime, "number", "thrown by the handler");
      const found = await call("/items/it_02", { key: "reader" });
      assert.deepEqual(found.body.data, ITEMS[1]);
    },
  },
  {
    name: "deprecation and sunset headers with meta.deprecation",
    async run(call) {
      {
        const answer = await call("/legacy", { key: "reader" });
        assert.equal(answer.status, 200);
        assert.equal(answer.headers.get("deprecation"), "@1735689600");
        assert.equal(answer.headers.get("sunset"), "Tue, 01 Jan 2030 00:00:00 GMT");
        assert.equal(
          answer.headers.get("link"),
          '<https://scenario.example/v2>; rel="deprecation"',
        );
        assert.deepEqual(answer.body.meta.deprecation, {
          deprecated: true,
          since: "2025-01-01T00:00:00.000Z",
          sunset: "2030-01-01T00:00:00.000Z",
          link: "https://scenario.example/v2",
          message: "Use /items",
        });
      }
    },
  },
  {
    name: "an error before the handler (the key check) has no route meta",
    async run(call) {
      const answer = await call("/legacy");
      assertErrorEnvelope(answer, 401, "api_key_missing", "/legacy");
      assert.equal(answer.headers.get("deprecation"), null);
      assert.deepEqual(answer.body.meta, { apiVersion: API_VERSION });
    },
  },
  {
    name: "an unexpected error is a generic 500 that leaks nothing",
    async run(call) {
      const answer = await call("/boom");
      assertErrorEnvelope(answer, 500, "INTERNAL_SERVER_ERROR", "/boom");
      assert.equal(answer.body.error.message, "Internal Server Error");
      assert.ok(!answer.text.includes(BOOM_SECRET));
      assert.ok(!answer.text.includes("stack"));
    },
  },
  {
    name: "a raw route sends the handler's result as it is, with the request id",
    async run(call) {
      const answer = await call("/raw", { headers: { "x-request-id": "scenario-raw" } });
      assert.equal(answer.status, 200);
      assert.deepEqual(answer.body, { raw: true });
      assert.equal(answer.headers.get("x-request-id"), "scenario-raw");
      const fresh = await call("/raw");
      assert.match(fresh.headers.get("x-request-id") ?? "", /^\S{1,128}$/);
    },
  },
  {
    name: "rate-limit headers the handler sets are mirrored into meta, on its 429 too",
    async run(call) {
      const counting = await call("/limited?remaining=3");
      assert.equal(counting.status, 200);
      assert.equal(counting.headers.get("x-ratelimit-remaining"), "3");
      assert.deepEqual(counting.body.meta.rateLimit, { limit: 5, remaining: 3, reset: 30 });
      const refused = await call("/limited?remaining=0");
      assertErrorEnvelope(refused, 429, "SLOW_DOWN", "/limited");
      assert.equal(refused.headers.get("retry-after"), "30");
      assert.deepEqual(refused.body.meta.rateLimit, {
        limit: 5,
        remaining: 0,
        reset: 30,
        retryAfter: 30,
      });
      assert.deepEqual(refused.body.error.details, CATALOG.SLOW_DOWN.details);
    },
  },
  {
    name: "an unknown route is a 404 envelope",
    async run(call) {
      const answer = await call("/nothing-here");
      assertErrorEnvelope(answer, 404, "NOT_FOUND", "/nothing-here");
    },
  },
  {
    name: "problem details: a handler error carries the route's problem type",
    mode: "problem",
    async run(call) {
      const answer = await call("/items/it_99", { key: "reader" });
      assertProblem(answer, 404, "ITEM_NOT_FOUND", "/items/it_99");
      assert.equal(answer.body.type, ITEM_PROBLEM_TYPE);
      assert.equal(answer.body.detail, CATALOG.ITEM_NOT_FOUND.message);
      assert.deepEqual(answer.body.details, { id: "it_99" });
      assert.equal(answer.body.meta.apiVersion, API_VERSION);
    },
  },
  {
    name: "problem details: a key failure has the type derived from its code",
    mode: "problem",
    async run(call) {
      const answer = await call("/items");
      assertProblem(answer, 401, "api_key_missing", "/items");
      assert.equal(answer.body.type, `${PROBLEM_BASE_URL}/api-key-missing`);
    },
  },
  {
    name: "ValidationPipe: a bad body is a 400 listing every problem",
    needs: "validationPipe",
    async run(call) {
      const answer = await call("/validated", { method: "POST", json: { name: 1 } });
      assertErrorEnvelope(answer, 400, "BAD_REQUEST", "/validated");
      assert.equal(answer.body.error.message, "Validation failed");
      assert.ok(Array.isArray(answer.body.error.details) && answer.body.error.details.length > 0);
    },
  },
  {
    name: "the throttler's headers are mirrored into meta, then its 429",
    needs: "throttler",
    async run(call) {
      for (let n = 1; n <= THROTTLE_LIMIT; n++) {
        const answer = await call("/throttled");
        assert.equal(answer.status, 200);
        assert.equal(answer.body.meta.rateLimit.remaining, THROTTLE_LIMIT - n);
      }
      const refused = await call("/throttled");
      assertErrorEnvelope(refused, 429, "TOO_MANY_REQUESTS", "/throttled");
      assert.equal(typeof refused.body.meta.rateLimit.retryAfter, "number");
    },
  },
  {
    name: "the request-context store's fields in meta",
    needs: "cls",
    async run(call) {
      const answer = await call("/plain", { headers: { "x-trace-id": "trace-7" } });
      assert.equal(answer.body.meta.traceId, "trace-7");
    },
  },
  {
    name: "messages translated in the request's language",
    needs: "i18n",
    async run(call) {
      const answer = await call("/greeting?lang=fr");
      assert.equal(answer.body.meta.message, "Élément créé");
    },
  },
];
