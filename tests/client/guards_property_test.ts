/**
 * Property tests: on arbitrary JSON, on well-formed shapes and on shapes one
 * mutation away from well-formed, every guard returns a boolean, never throws,
 * and agrees with an independent JSON Schema (checked by Ajv) of its shape.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { Ajv } from "ajv";
import * as client from "../../client/mod.ts";
import { cursor, offset } from "./_fixtures.ts";

const SEED = 20260606;
const RUNS = 1500;

// ---- JSON Schemas of the shapes (written from the spec, independent of client/) ----

const str = { type: "string" };
/** An HTTP status: an integer from 100 to 599. */
const httpStatus = { type: "integer", minimum: 100, maximum: 599 };
/** A response time: a number of milliseconds, never negative. */
const duration = { type: "number", minimum: 0 };
const bool = { type: "boolean" };
const strOrNull = { type: ["string", "null"] };
/** A count the server sends: a safe integer of at least `minimum`. */
const count = (minimum: number) => ({
  type: "integer",
  minimum,
  maximum: Number.MAX_SAFE_INTEGER,
});
const object = (required: string[], properties: Record<string, unknown>) => ({
  type: "object",
  required,
  properties,
});

/**
 * A link the server builds: a path, `/` first, never `//` or `/\\` (another host to a browser),
 * with no backslash, tab or line break (a URL parser reads one as `/`, removes the others).
 */
const link = { type: "string", pattern: "^/(?![/\\\\])[^\\\\\\t\\n\\r]*$" };
const linkOrNull = { oneOf: [link, { type: "null" }] };
const linksSchema = object(["self", "first", "prev", "next", "last"], {
  self: link,
  first: link,
  prev: linkOrNull,
  next: linkOrNull,
  last: linkOrNull,
});
const offsetSchema = object(["page", "limit", "total", "totalPages", "hasNext", "hasPrev"], {
  type: { const: "offset" },
  page: count(1),
  limit: count(1),
  total: count(0),
  totalPages: count(0),
  hasNext: bool,
  hasPrev: bool,
  links: linksSchema,
});
const cursorSchema = object(["type", "nextCursor", "previousCursor", "hasMore", "limit"], {
  type: { const: "cursor" },
  nextCursor: strOrNull,
  previousCursor: strOrNull,
  hasMore: bool,
  limit: count(1),
  totalCount: count(0),
  links: linksSchema,
});
const paginationSchema = { anyOf: [offsetSchema, cursorSchema] };
const sortSchema = object(["field", "order"], { field: str, order: { enum: ["asc", "desc"] } });
const filtersSchema = { type: "object" };
const fieldsSchema = { type: "array", items: str };
const deprecationSchema = object(["deprecated"], {
  deprecated: { const: true },
  since: str,
  sunset: str,
  message: str,
  link: str,
});
const rateLimitSchema = object(["limit", "remaining", "reset"], {
  limit: count(0),
  remaining: count(0),
  reset: count(0),
  retryAfter: count(0),
});
const errorMetaProperties = {
  deprecation: deprecationSchema,
  rateLimit: rateLimitSchema,
  responseTime: duration,
  apiVersion: str,
};
const errorMetaSchema = object([], errorMetaProperties);
const responseMetaSchema = object([], {
  ...errorMetaProperties,
  pagination: paginationSchema,
  message: str,
  sort: sortSchema,
  filters: filtersSchema,
  fields: fieldsSchema,
});
const successSchema = object(["success", "statusCode", "data"], {
  success: { const: true },
  statusCode: httpStatus,
  code: str,
  requestId: str,
  data: {},
  meta: responseMetaSchema,
  timestamp: str,
  path: str,
});
const errorSchema = object(["success", "statusCode", "error"], {
  success: { const: false },
  statusCode: httpStatus,
  requestId: str,
  error: object(["code", "message"], { code: str, message: str, details: {} }),
  meta: errorMetaSchema,
  timestamp: str,
  path: str,
});
const problemSchema = object(["type", "title", "status", "detail", "instance"], {
  type: str,
  title: str,
  status: httpStatus,
  detail: str,
  instance: str,
  code: str,
  requestId: str,
  details: {},
  meta: errorMetaSchema,
});
const metaWith = (field: string, schema: unknown) => object([field], { [field]: schema });

// ---- Generators: well-formed shapes, and shapes one mutation away ----

const number = fc.double({ noNaN: true, noDefaultInfinity: true });
/** Mostly counts, with the edges either side of their range and any other number. */
const countArb = fc.oneof(
  { weight: 12, arbitrary: fc.maxSafeNat() },
  { weight: 1, arbitrary: fc.constantFrom(0, 1, Number.MAX_SAFE_INTEGER, -1, 0.5, 2 ** 53, 1e308) },
  { weight: 1, arbitrary: number },
);
/** Mostly HTTP statuses, with the edges either side of their range and any other number. */
const statusArb = fc.oneof(
  { weight: 12, arbitrary: fc.integer({ min: 100, max: 599 }) },
  { weight: 1, arbitrary: fc.constantFrom(100, 599, 99, 600, 200.5, 0, -200, 1e308) },
  { weight: 1, arbitrary: number },
);
const string = fc.string({ maxLength: 8 });
const stringOrNull = fc.option(string);
/** Mostly paths, some of them `//` or `/\\` first, and any other string. */
const linkArb = fc.oneof(
  { weight: 40, arbitrary: string.map((rest) => `/${rest}`) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      "//evil.example/x",
      "/\\evil.example/x",
      "/\t/evil.example/x",
      "/\n/evil.example/x",
      "/\r\\evil.example/x",
      "x?page=2",
    ),
  },
  { weight: 1, arbitrary: string },
);
const linksArb = fc.record({
  self: linkArb,
  first: linkArb,
  prev: fc.option(linkArb),
  next: fc.option(linkArb),
  last: fc.option(linkArb),
});
const offsetArb = fc.record({
  type: fc.constant("offset"),
  page: countArb,
  limit: countArb,
  total: countArb,
  totalPages: countArb,
  hasNext: fc.boolean(),
  hasPrev: fc.boolean(),
  links: linksArb,
}, { requiredKeys: ["page", "limit", "total", "totalPages", "hasNext", "hasPrev"] });
const cursorArb = fc.record({
  type: fc.constant("cursor"),
  nextCursor: stringOrNull,
  previousCursor: stringOrNull,
  hasMore: fc.boolean(),
  limit: countArb,
  totalCount: countArb,
  links: linksArb,
}, { requiredKeys: ["type", "nextCursor", "previousCursor", "hasMore", "limit"] });
const paginationArb = fc.oneof(offsetArb, cursorArb);
const errorMetaArbs = {
  deprecation: fc.record({
    deprecated: fc.constant(true),
    since: string,
    sunset: string,
    message: string,
    link: string,
  }, { requiredKeys: ["deprecated"] }),
  rateLimit: fc.record({
    limit: countArb,
    remaining: countArb,
    reset: countArb,
    retryAfter: countArb,
  }, {
    requiredKeys: ["limit", "remaining", "reset"],
  }),
  responseTime: number,
  apiVersion: string,
  traceId: fc.jsonValue({ maxDepth: 1 }),
};
const errorMetaArb = fc.record(errorMetaArbs, { requiredKeys: [] });
const responseMetaArb = fc.record({
  ...errorMetaArbs,
  pagination: paginationArb,
  message: string,
  sort: fc.record({ field: string, order: fc.constantFrom("asc", "desc") }),
  filters: fc.dictionary(string, fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 }),
  fields: fc.array(string, { maxLength: 3 }),
}, { requiredKeys: [] });
const successArb = fc.record({
  success: fc.constant(true),
  statusCode: statusArb,
  code: string,
  requestId: string,
  data: fc.jsonValue({ maxDepth: 2 }),
  meta: responseMetaArb,
  timestamp: string,
  path: string,
}, { requiredKeys: ["success", "statusCode", "data"] });
const errorArb = fc.record({
  success: fc.constant(false),
  statusCode: statusArb,
  requestId: string,
  error: fc.record({ code: string, message: string, details: fc.jsonValue({ maxDepth: 1 }) }, {
    requiredKeys: ["code", "message"],
  }),
  meta: errorMetaArb,
  timestamp: string,
  path: string,
}, { requiredKeys: ["success", "statusCode", "error"] });
const problemArb = fc.record({
  type: string,
  title: string,
  status: statusArb,
  detail: string,
  instance: string,
  code: string,
  requestId: string,
  details: fc.jsonValue({ maxDepth: 1 }),
  meta: errorMetaArb,
}, { requiredKeys: ["type", "title", "status", "detail", "instance"] });

type Path = (string | number)[];
const REMOVE = Symbol("remove");

/** Paths of every node below the root of a JSON value. */
function paths(value: unknown, prefix: Path = []): Path[] {
  const children: [string | number, unknown][] = Array.isArray(value)
    ? value.map((item, index) => [index, item])
    : typeof value === "object" && value !== null
    ? Object.entries(value)
    : [];
  return children.flatMap(([key, child]) => [[...prefix, key], ...paths(child, [...prefix, key])]);
}

/** A copy of `value` with the node at `path` replaced, or removed. */
function replaceAt(value: unknown, [key, ...rest]: Path, replacement: unknown): unknown {
  const copy = (Array.isArray(value) ? [...value] : { ...value as object }) as Record<
    string | number,
    unknown
  >;
  const next = rest.length === 0 ? replacement : replaceAt(copy[key], rest, replacement);
  if (next === REMOVE && Array.isArray(copy)) copy.splice(key as number, 1); // JSON has no holes
  else if (next === REMOVE) delete copy[key];
  else Object.defineProperty(copy, key, { value: next, enumerable: true, writable: true });
  return copy;
}

/** Values one change away from `arb`'s: a node removed, or replaced by another JSON value. */
const mutated = (arb: fc.Arbitrary<unknown>) =>
  fc.tuple(
    arb,
    fc.nat(),
    fc.oneof(
      fc.constantFrom(REMOVE, null, 0, "", "1", true, false, [], {}, "cursor", "offset"),
      fc.jsonValue({ maxDepth: 2 }),
    ),
  ).map(([value, index, replacement]) => {
    const all = paths(value);
    return all.length === 0 ? value : replaceAt(value, all[index % all.length], replacement);
  });

/** Arbitrary JSON, well-formed values of `arbs`, and near misses of them. */
const inputs = (...arbs: fc.Arbitrary<unknown>[]) =>
  fc.oneof(
    fc.jsonValue(),
    ...arbs,
    ...arbs.map(mutated),
    ...arbs.map((arb) => mutated(mutated(arb))),
  );

// ---- Properties ----

const ajv = new Ajv({ strict: true });
const bodies = inputs(successArb, errorArb, problemArb);
const metas = fc.oneof(inputs(responseMetaArb, errorMetaArb), fc.constant(undefined));
const paginations = inputs(paginationArb);

const cases: [(value: unknown) => boolean, unknown, fc.Arbitrary<unknown>][] = [
  [client.isSuccess, successSchema, bodies],
  [client.isError, errorSchema, bodies],
  [client.isProblemDetailsResponse, problemSchema, bodies],
  [client.isPaginated, metaWith("pagination", paginationSchema), metas],
  [client.isDeprecated, metaWith("deprecation", deprecationSchema), metas],
  [client.hasResponseTime, metaWith("responseTime", duration), metas],
  [client.hasSort, metaWith("sort", sortSchema), metas],
  [client.hasFilters, metaWith("filters", filtersSchema), metas],
  [client.hasFieldSelection, metaWith("fields", fieldsSchema), metas],
  [client.hasRateLimit, metaWith("rateLimit", rateLimitSchema), metas],
  [client.isOffsetPagination, offsetSchema, paginations],
  [client.isCursorPagination, cursorSchema, paginations],
];

describe("guards agree with a JSON Schema of their shape (fast-check, seeded)", () => {
  for (const [guard, schema, arb] of cases) {
    it(guard.name, () => {
      const validate = ajv.compile(schema as object);
      const outcomes = { true: 0, false: 0 };
      fc.assert(
        fc.property(arb, (value) => {
          // JSON has no `undefined` member: a missing meta is valid for the schema's caller only.
          const expected = value !== undefined && validate(value);
          const actual = guard(value);
          outcomes[`${actual}`]++;
          return actual === expected;
        }),
        { seed: SEED, numRuns: RUNS },
      );
      // The generators must exercise both answers, or the agreement says little.
      assert.ok(outcomes.true > RUNS / 20, `${guard.name}: ${outcomes.true} accepted`);
      assert.ok(outcomes.false > RUNS / 20, `${guard.name}: ${outcomes.false} rejected`);
    });
  }
});

describe("guards are total", () => {
  it("return a boolean and never throw on any JavaScript value", () => {
    const anything = fc.anything({
      withBoxedValues: true,
      withMap: true,
      withSet: true,
      withNullPrototype: true,
      withObjectString: true,
      withSparseArray: true,
      withTypedArray: true,
      withBigInt: true,
      withDate: true,
    });
    const guards = cases.map(([guard]) => guard);
    fc.assert(
      fc.property(
        fc.oneof(anything, bodies, metas),
        (value) => guards.every((guard) => typeof guard(value) === "boolean"),
      ),
      { seed: SEED, numRuns: RUNS },
    );
  });
  it("return false, never throw, on a throwing getter, a revoked Proxy or a huge sparse array", () => {
    const revoked = Proxy.revocable({}, {});
    revoked.revoke();
    const throwing = new Proxy({}, {
      get() {
        throw new Error("boom");
      },
    });
    const envelope = { success: true, statusCode: 200, data: 1 };
    const values = [revoked.proxy, throwing].flatMap((hostile) => [
      hostile,
      { ...envelope, meta: hostile },
      { success: false, statusCode: 400, error: hostile },
      ...["pagination", "deprecation", "sort", "fields", "rateLimit"].map(
        (field) => ({ [field]: hostile }),
      ),
      { ...offset, links: hostile },
      { ...cursor, links: hostile },
    ]);
    const getter = Object.defineProperty({ ...envelope }, "meta", {
      get() {
        throw new Error("boom");
      },
    });
    // deno-lint-ignore no-sparse-arrays
    const holes = { ...envelope, meta: { fields: [, "a"] } };
    // `filters` may be any object (its members are not read): only a revoked one is refused.
    values.push(getter, holes, { fields: new Array(2 ** 32 - 1) }, { filters: revoked.proxy });
    for (const [guard] of cases) {
      for (const value of values) assert.equal(guard(value), false, guard.name);
    }
  });
});
