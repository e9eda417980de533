/**
 * The scenario app every binding implements, as plain data: the keys it
 * seeds, its error catalog, the items and feed it serves, and each route's
 * path, key requirements and safe-response options (named after the Nest
 * decorators; the Fetch bindings take them as they are). Imports nothing, so
 * a consumer app can copy the folder and implement the same routes over the
 * published package (see `suite.ts`).
 *
 * @module
 */

/** The pepper of the scenario apps' services. */
export const SCENARIO_PEPPER = "scenario-pepper-0123456789abcdefghijklmnop";

/** Tenant of every seeded key. */
export const SCENARIO_TENANT = "scenario";

/** Base of problem types derived from codes (problem-details mode). */
export const PROBLEM_BASE_URL = "https://scenario.example/problems";

/** `meta.apiVersion` of every answer. */
export const API_VERSION = "1";

/** The problem type of `GET /items/:id` (its `ProblemType`). */
export const ITEM_PROBLEM_TYPE = "https://scenario.example/problems/item";

/** A secret a failing handler throws; it must never reach a client. */
export const BOOM_SECRET = "db-password=hunter2";

/** Error envelopes, or RFC 9457 problem details. */
export type ScenarioMode = "envelope" | "problem";

/**
 * Features only some bindings have: Nest's `ValidationPipe`,
 * `@nestjs/throttler`, `nestjs-cls` (the `context` option's store) and
 * `nestjs-i18n` (`i18n: true`). A scenario that needs one runs only where
 * the binding declares it.
 */
export interface Capabilities {
  /** `POST /validated` validates its body with class-validator's `ValidationPipe`. */
  validationPipe: boolean;
  /** `GET /throttled` is limited to {@link THROTTLE_LIMIT} requests a minute by the throttler. */
  throttler: boolean;
  /** `meta.traceId` from the request-context store (`X-Trace-Id`). */
  cls: boolean;
  /** `GET /greeting` answers `meta.message` translated by nestjs-i18n (`?lang=`). */
  i18n: boolean;
}

/** What the Fetch bindings have of {@link Capabilities}: none. */
export const FETCH_CAPABILITIES: Capabilities = Object.freeze({
  validationPipe: false,
  throttler: false,
  cls: false,
  i18n: false,
});

/** Requests a minute on `GET /throttled`. */
export const THROTTLE_LIMIT = 2;

/** The scenario app's error catalog (given to `defineErrors`). */
export const CATALOG = {
  ITEM_NOT_FOUND: { status: 404, message: "No such item" },
  SLOW_DOWN: {
    status: 429,
    message: "Slow down",
    details: { hint: "wait for the window to reset" },
  },
} as const;

/** The options of the safe-response module in `mode` (as `SafeResponseModule.register` takes them). */
export function safeResponseOptions(mode: ScenarioMode) {
  return {
    requestId: true,
    responseTime: true,
    rateLimit: true,
    version: API_VERSION,
    problemDetails: mode === "problem" ? { baseUrl: PROBLEM_BASE_URL } : false,
    fieldSelection: { maxFields: MODULE_MAX_FIELDS },
  };
}

/** The module's field-selection quota (`fieldSelection.maxFields`). */
export const MODULE_MAX_FIELDS = 3;

/** What `GET /profile` and `GET /unselected` answer. */
export const PROFILE = Object.freeze({
  id: "p_1",
  name: "Ada",
  email: "ada@example.com",
  address: Object.freeze({ city: "London", zip: "N1" }),
});

/** A scope as the service takes it. */
export interface ScenarioScope {
  resource: string;
  level: "read" | "write";
}

/** The seeded keys, by role. */
export const KEY_SPECS = {
  reader: { environment: "live", scopes: [{ resource: "orders", level: "read" }] },
  writer: { environment: "live", scopes: [{ resource: "orders", level: "write" }] },
  tester: { environment: "test", scopes: [{ resource: "orders", level: "write" }] },
  local: {
    environment: "live",
    scopes: [{ resource: "orders", level: "read" }],
    allowedIpCidrs: ["127.0.0.1", "::1"],
  },
  remote: {
    environment: "live",
    scopes: [{ resource: "orders", level: "read" }],
    allowedIpCidrs: ["203.0.113.0/24"],
  },
} as const;

/** A key role of {@link KEY_SPECS}. */
export type KeyRole = keyof typeof KEY_SPECS;

/** The raw keys of a running scenario app, by role; `unknown` is well formed but never stored. */
export type ScenarioKeys = Record<KeyRole | "unknown", string>;

/** What seeding needs of an `ApiKeysService`. */
export interface KeyIssuer {
  create(input: {
    tenantId: string;
    name: string;
    environment: "live" | "test";
    scopes: ScenarioScope[];
    allowedIpCidrs?: string[];
  }): Promise<{ key: string }>;
}

/**
 * Creates the keys of {@link KEY_SPECS} and returns them raw, with `unknown`
 * (a well-formed key of the service's namespace it never stored, e.g. from
 * `generateKey`).
 */
export async function seedScenarioKeys(
  service: KeyIssuer,
  unknown: string,
): Promise<ScenarioKeys> {
  const keys: Partial<ScenarioKeys> = { unknown };
  for (const [role, spec] of Object.entries(KEY_SPECS)) {
    const { key } = await service.create({
      tenantId: SCENARIO_TENANT,
      name: role,
      environment: spec.environment,
      scopes: spec.scopes.map((scope) => ({ ...scope })),
      ...("allowedIpCidrs" in spec ? { allowedIpCidrs: [...spec.allowedIpCidrs] } : {}),
    });
    keys[role as KeyRole] = key;
  }
  return keys as ScenarioKeys;
}

/** An item of `GET /items`. */
export interface Item {
  id: string;
  name: string;
  status: "active" | "archived";
  price: number;
}

/** The 12 items. */
export const ITEMS: readonly Item[] = Object.freeze(
  Array.from({ length: 12 }, (_, i) => ({
    id: `it_${String(i + 1).padStart(2, "0")}`,
    name: `Item ${String.fromCharCode(65 + ((i * 5) % 12))}`,
    status: i % 3 === 2 ? "archived" as const : "active" as const,
    price: 100 + i,
  })),
);

/** Largest page of `GET /items`. */
export const ITEMS_MAX_LIMIT = 50;

/** A query string's parameter, as every binding reads it. */
export type QueryReader = (name: string) => string | undefined;

/**
 * `GET /items`: the page asked for, sorted and filtered (`page`, `limit`
 * clamped to {@link ITEMS_MAX_LIMIT}, `sort` = `name` or `price`, `order`,
 * `status`), as a `PaginatedResult` with `sort` and `filters`.
 */
export function listItems(query: QueryReader) {
  const page = Math.max(1, Number(query("page") ?? "1") || 1);
  const limit = Math.min(Math.max(1, Number(query("limit") ?? "5") || 5), ITEMS_MAX_LIMIT);
  const field = query("sort") === "price" ? "price" : "name";
  const order = query("order") === "desc" ? "desc" : "asc";
  const status = query("status");
  const filters: Record<string, string> = {};
  if (status !== undefined) filters.status = status;
  const matching = ITEMS.filter((item) => status === undefined || item.status === status)
    .sort((a, b) =>
      (field === "price" ? a.price - b.price : a.name.localeCompare(b.name)) *
      (order === "asc" ? 1 : -1)
    );
  return {
    data: matching.slice((page - 1) * limit, page * limit),
    total: matching.length,
    page,
    limit,
    sort: { field, order },
    filters,
  };
}

/** `GET /items/:id`: the item, or `undefined` (the route throws `ITEM_NOT_FOUND`). */
export function findItem(id: string): Item | undefined {
  return ITEMS.find((item) => item.id === id);
}

/** `GET /feed`: a `CursorPaginatedResult` over the items' ids (`cursor` = an index). */
export function feedPage(query: QueryReader) {
  const limit = Math.min(Math.max(1, Number(query("limit") ?? "4") || 4), 10);
  const start = Number(query("cursor") ?? "0") || 0;
  const end = start + limit;
  return {
    data: ITEMS.slice(start, end).map((item) => item.id),
    nextCursor: end < ITEMS.length ? String(end) : null,
    previousCursor: start > 0 ? String(Math.max(0, start - limit)) : null,
    hasMore: end < ITEMS.length,
    limit,
    totalCount: ITEMS.length,
  };
}

/** The rate-limit headers `GET /limited` sets for `?remaining=`. */
export function limitedHeaders(query: QueryReader): Array<[string, string]> {
  const remaining = Number(query("remaining") ?? "5") || 0;
  const headers: Array<[string, string]> = [
    ["X-RateLimit-Limit", "5"],
    ["X-RateLimit-Remaining", String(remaining)],
    ["X-RateLimit-Reset", "30"],
  ];
  if (remaining === 0) headers.push(["Retry-After", "30"]);
  return headers;
}

/**
 * The routes and their settings. `keys`: the route requires a key (with the
 * given scope and environment); `options`: the safe-response route options.
 */
export const ROUTES = {
  plain: { method: "GET", path: "/plain", options: { responseMessage: "Hello" } },
  items: {
    method: "GET",
    path: "/items",
    keys: { requiredScope: { resource: "orders", level: "read" } },
    options: {
      paginated: { maxLimit: ITEMS_MAX_LIMIT, links: true },
      sortMeta: true,
      filterMeta: true,
      fieldSelection: true,
    },
  },
  item: {
    method: "GET",
    path: "/items/:id",
    keys: { requiredScope: { resource: "orders", level: "read" } },
    options: { problemType: ITEM_PROBLEM_TYPE },
  },
  create: {
    method: "POST",
    path: "/items",
    keys: { requiredScope: { resource: "orders", level: "write" }, requiredEnvironment: "live" },
    options: { statusCode: 201, successCode: "ITEM_CREATED", responseMessage: "Item created" },
  },
  feed: { method: "GET", path: "/feed", options: { cursorPaginated: { links: true } } },
  legacy: {
    method: "GET",
    path: "/legacy",
    keys: { requiredScope: { resource: "orders", level: "read" } },
    options: {
      deprecated: {
        since: "2025-01-01T00:00:00Z",
        sunset: "2030-01-01T00:00:00Z",
        link: "https://scenario.example/v2",
        message: "Use /items",
      },
    },
  },
  boom: { method: "GET", path: "/boom", options: {} },
  raw: { method: "GET", path: "/raw", options: { rawResponse: true } },
  limited: { method: "GET", path: "/limited", options: {} },
  whoami: { method: "GET", path: "/whoami", keys: {}, options: {} },
  profile: {
    method: "GET",
    path: "/profile",
    options: { fieldSelection: { maxFields: 2, maxFieldLength: 8 } },
  },
  unselected: { method: "GET", path: "/unselected", options: { fieldSelection: false } },
} as const;
