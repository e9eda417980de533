import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  parseRateLimitHeaders,
  parseRetryAfter,
  parseStandardRateLimitHeaders,
  readRateLimitHeaders,
} from "../../safe_response/rate_limit.ts";

describe("rate-limit headers", () => {
  const reader = (headers: Record<string, unknown>) => (name: string) => headers[name];

  it("mirrors prefix headers, with a custom prefix and list values", () => {
    assert.deepEqual(
      parseRateLimitHeaders(
        reader({
          "X-RateLimit-Limit": "10",
          "X-RateLimit-Remaining": 4,
          "X-RateLimit-Reset": "30",
        }),
      ),
      { limit: 10, remaining: 4, reset: 30 },
    );
    assert.deepEqual(
      parseRateLimitHeaders(
        reader({ "RateLimit-Limit": ["5"], "RateLimit-Remaining": "0", "RateLimit-Reset": "1" }),
        "RateLimit",
      ),
      { limit: 5, remaining: 0, reset: 1 },
    );
    assert.equal(parseRateLimitHeaders(reader({})), undefined);
    assert.equal(parseRateLimitHeaders(reader({ "X-RateLimit-Limit": "ten" })), undefined);
  });

  it("fills retryAfter from Retry-After, seconds or HTTP-date", () => {
    assert.deepEqual(parseRateLimitHeaders(reader({ "Retry-After": "12" })), {
      limit: 0,
      remaining: 0,
      reset: 12,
      retryAfter: 12,
    });
    assert.equal(parseRetryAfter("Thu, 01 Jan 1970 00:00:30 GMT", 0), 30);
    assert.equal(parseRetryAfter("Thu, 01 Jan 1970 00:00:30 GMT", 60_000), 0);
    assert.equal(parseRetryAfter("soon"), undefined);
  });

  it("leaves out a count that is not a safe non-negative integer (long digit runs, NaN, fractions)", () => {
    const long = "9".repeat(400);
    for (const value of [long, "9".repeat(17), `${"0".repeat(5000)}1`, 1.5, -1, NaN, 2 ** 53]) {
      const meta = parseRateLimitHeaders(
        reader({ "X-RateLimit-Limit": value, "X-RateLimit-Remaining": "3", "Retry-After": value }),
      );
      assert.deepEqual(meta, { limit: 0, remaining: 3, reset: 0 }, String(value).slice(0, 20));
      assert.equal(parseRetryAfter(value), undefined);
    }
    assert.equal(parseRateLimitHeaders(reader({ "X-RateLimit-Reset": long })), undefined);
    assert.equal(parseRetryAfter("Thu, 01 Jan 1970 00:00:30 GMT" + " ".repeat(5000), 0), undefined);
    assert.equal(parseRetryAfter(String(Number.MAX_SAFE_INTEGER)), Number.MAX_SAFE_INTEGER);
    const meta = readRateLimitHeaders(reader({ "Retry-After": long }), { standard: true });
    assert.equal(JSON.stringify(meta), undefined);
  });
});

describe("IETF RateLimit fields (parseStandardRateLimitHeaders)", () => {
  const reader = (headers: Record<string, unknown>) => (name: string) => headers[name];

  it("reads the item-list syntax of drafts -08 to -11, picking the smallest remaining", () => {
    assert.deepEqual(
      parseStandardRateLimitHeaders(reader({
        "RateLimit": '"burst";r=50;t=30',
        "RateLimit-Policy": '"burst";q=100;w=60',
      })),
      { limit: 100, remaining: 50, reset: 30 },
    );
    assert.deepEqual(
      parseStandardRateLimitHeaders(reader({
        "RateLimit": '"day";r=900;t=80000;pk=:cHJvamVjdA==:, "burst";r=3;t=4',
        "RateLimit-Policy": '"burst";q=10;qu="requests";w=5, "day";q=1000;w=86400',
      })),
      { limit: 10, remaining: 3, reset: 4 },
    );
    // Several field lines are one list (RFC 9651); a policy without quota is 0 (unknown).
    assert.deepEqual(
      parseStandardRateLimitHeaders(reader({
        "RateLimit": ['"a";r=9;t=1', '"b";r=2'],
        "RateLimit-Policy": ['"a";q=10', '"b";w=60'],
        "Retry-After": "7",
      })),
      { limit: 0, remaining: 2, reset: 7, retryAfter: 7 },
    );
  });

  it("reads the dictionary syntax of draft -07", () => {
    assert.deepEqual(
      parseStandardRateLimitHeaders(reader({
        "RateLimit": "limit=100, remaining=50, reset=30",
        "RateLimit-Policy": "100;w=60",
      })),
      { limit: 100, remaining: 50, reset: 30 },
    );
    assert.deepEqual(
      parseStandardRateLimitHeaders(reader({ "RateLimit": "remaining=0", "Retry-After": "12" })),
      { limit: 0, remaining: 0, reset: 12, retryAfter: 12 },
    );
  });

  it("ignores a field that does not parse (RFC 9651), and values of the wrong type", () => {
    const read = reader({ "RateLimit": '"burst";r=50;t=30', "RateLimit-Policy": '"burst";q=1,' });
    assert.deepEqual(parseStandardRateLimitHeaders(read), { limit: 0, remaining: 50, reset: 30 });
    assert.equal(
      parseStandardRateLimitHeaders(reader({ "RateLimit": '"burst";r=5;t=' })),
      undefined,
    );
    assert.equal(parseStandardRateLimitHeaders(reader({ "RateLimit": '"x";r=1.5' })), undefined);
    assert.equal(parseStandardRateLimitHeaders(reader({ "RateLimit": '"x";r=-1' })), undefined);
    assert.equal(
      parseStandardRateLimitHeaders(reader({ "RateLimit": "x".repeat(1e6) })),
      undefined,
    );
    assert.equal(parseStandardRateLimitHeaders(reader({})), undefined);
    assert.deepEqual(parseStandardRateLimitHeaders(reader({ "Retry-After": "3" })), {
      limit: 0,
      remaining: 0,
      reset: 3,
      retryAfter: 3,
    });
  });

  it("converts an HTTP-date Retry-After against now", () => {
    assert.deepEqual(
      parseStandardRateLimitHeaders(
        reader({ "RateLimit": '"p";r=0', "Retry-After": "Thu, 01 Jan 1970 00:01:00 GMT" }),
        30_000,
      ),
      { limit: 0, remaining: 0, reset: 30, retryAfter: 30 },
    );
  });
});

describe("readRateLimitHeaders (the rateLimit option)", () => {
  const reader = (headers: Record<string, unknown>) => (name: string) => headers[name];
  const both = reader({
    "X-RateLimit-Limit": "10",
    "X-RateLimit-Remaining": "9",
    "RateLimit": '"p";r=1;t=2',
    "RateLimit-Policy": '"p";q=5',
  });

  it("lets X-RateLimit-* win when both are present; reads the standard fields only when asked", () => {
    const standard = { headerPrefix: "X-RateLimit", standard: true };
    assert.deepEqual(readRateLimitHeaders(both, standard), { limit: 10, remaining: 9, reset: 0 });
    const onlyStandard = reader({ "RateLimit": '"p";r=1;t=2', "RateLimit-Policy": '"p";q=5' });
    assert.deepEqual(readRateLimitHeaders(onlyStandard, standard), {
      limit: 5,
      remaining: 1,
      reset: 2,
    });
    assert.equal(
      readRateLimitHeaders(onlyStandard, { headerPrefix: "X-RateLimit", standard: false }),
      undefined,
    );
  });
});

// ---- Property tests: a reference model of the drafts, and hostile values ----

const SEED = 20260924;
const RUNS = 600;

type Meta = { limit: number; remaining: number; reset: number; retryAfter?: number };

/** The reference model: what the fields mean, written from the drafts, not from the parser. */
function modelMeta(
  state: { limit?: number; remaining?: number; reset?: number } | undefined,
  retryAfter: number | undefined,
): Meta | undefined {
  if (state === undefined && retryAfter === undefined) return undefined;
  const meta: Meta = {
    limit: state?.limit ?? 0,
    remaining: state?.remaining ?? 0,
    reset: state?.reset ?? retryAfter ?? 0,
  };
  if (retryAfter !== undefined) meta.retryAfter = retryAfter;
  return meta;
}

/** Counts, small ones often (so that two policies tie on `r`). */
const count = fc.oneof(fc.nat({ max: 3 }), fc.nat({ max: 1_000_000 }));
const ows = fc.constantFrom("", " ", "  ", "\t", " \t ");
const sp = fc.constantFrom("", " ");
const sfString = (text: string) => `"${text.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
const policyName = fc.string({ unit: fc.constantFrom(...'abz09-_ .*"\\~'), maxLength: 6 });
/** Parameters the fields carry that the mirror ignores (valid RFC 9651 bare items). */
const ignoredParam = fc.tuple(
  fc.constantFrom("x", "foo", "a1", "z_z", "*y", "w", "qu", "pk"),
  fc.constantFrom(
    "",
    "=tok/en:1",
    "=1.5",
    "=?1",
    "=?0",
    "=-3",
    "=@1700000000",
    "=:AQID:",
    '=%"caf%c3%a9"',
    '="s p"',
  ),
).map(([key, value]) => `;${key}${value}`);
const numberParam = (key: string, kind: string, value: number) =>
  kind === "int"
    ? `;${key}=${value}`
    : kind === "decimal"
    ? `;${key}=${value}.5`
    : kind === "negative"
    ? `;${key}=-${value + 1}`
    : `;${key}="${value}"`;
const numberKind = fc.constantFrom("int", "int", "int", "decimal", "negative", "string");

const listState = fc.record({
  name: policyName,
  token: fc.boolean(),
  r: fc.option(count, { nil: undefined }),
  rKind: numberKind,
  t: fc.option(count, { nil: undefined }),
  tKind: numberKind,
  inner: fc.boolean(),
  extras: fc.array(ignoredParam, { maxLength: 2 }),
  space: sp,
});
const listPolicy = fc.record({
  name: policyName,
  q: fc.option(count, { nil: undefined }),
  qKind: numberKind,
  extras: fc.array(ignoredParam, { maxLength: 3 }),
});

const tokenName = (name: string) => /^[A-Za-z*][A-Za-z0-9!#$%&'*+.^_`|~:/-]*$/.test(name);

/** Well-formed fields of drafts -08 to -11 and the meta the model expects. */
const itemListCase = fc.record({
  states: fc.array(listState, { maxLength: 4 }),
  policies: fc.array(listPolicy, { maxLength: 4 }),
  retryAfter: fc.option(count, { nil: undefined }),
  separators: fc.array(ows, { minLength: 8, maxLength: 8 }),
  lines: fc.boolean(),
  lead: sp,
}).map(({ states, policies, retryAfter, separators, lines, lead }) => {
  const members = states.map((state) => {
    const name = state.token && tokenName(state.name) ? state.name : sfString(state.name);
    let text = state.inner ? `(${name} ${name})` : name;
    const params: string[] = [];
    if (state.r !== undefined) params.push(numberParam("r", state.rKind, state.r));
    if (state.t !== undefined) params.push(numberParam("t", state.tKind, state.t));
    params.push(...state.extras);
    text += params.map((param) => param.replace(";", `;${state.space}`)).join("");
    return text;
  });
  const policyMembers = policies.map((policy) =>
    sfString(policy.name) +
    (policy.q === undefined ? "" : numberParam("q", policy.qKind, policy.q)) +
    policy.extras.join("")
  );
  const join = (parts: string[]) =>
    parts.map((part, index) => index === 0 ? part : `,${separators[index % 8]}${part}`).join("");
  const headers: Record<string, unknown> = {};
  if (members.length > 0) {
    headers["RateLimit"] = lines && members.length > 1
      ? [lead + members[0], join(members.slice(1))]
      : lead + join(members);
  }
  if (policyMembers.length > 0) headers["RateLimit-Policy"] = join(policyMembers);
  if (retryAfter !== undefined) headers["Retry-After"] = String(retryAfter);
  // The model: valid states (an Item whose r is a non-negative integer), the smallest r first.
  let best: { name: string; r: number; t?: number } | undefined;
  for (const state of states) {
    if (state.inner || state.r === undefined || state.rKind !== "int") continue;
    if (best === undefined || state.r < best.r) {
      best = {
        name: state.name,
        r: state.r,
        t: state.tKind === "int" ? state.t : undefined,
      };
    }
  }
  const policy = best && policies.find((candidate) => candidate.name === best.name);
  const limit = policy?.q !== undefined && policy.qKind === "int" ? policy.q : undefined;
  const expected = modelMeta(
    best && { limit, remaining: best.r, reset: best.t },
    retryAfter,
  );
  return { headers, expected };
});

/** Well-formed fields of draft -07 and the meta the model expects. */
const dictionaryCase = fc.record({
  limit: fc.option(count, { nil: undefined }),
  remaining: fc.option(count, { nil: undefined }),
  reset: fc.option(count, { nil: undefined }),
  kinds: fc.array(numberKind, { minLength: 3, maxLength: 3 }),
  extras: fc.array(fc.tuple(fc.constantFrom("foo", "w", "policy"), count), { maxLength: 2 }),
  params: fc.array(ignoredParam, { minLength: 3, maxLength: 3 }),
  order: fc.array(fc.nat({ max: 5 }), { minLength: 5, maxLength: 5 }),
  policy: fc.array(fc.tuple(count, fc.option(count, { nil: undefined })), { maxLength: 3 }),
  retryAfter: fc.option(count, { nil: undefined }),
  separators: fc.array(ows, { minLength: 5, maxLength: 5 }),
}).map(
  ({ limit, remaining, reset, kinds, extras, params, order, policy, retryAfter, separators }) => {
    const entries: Array<[number, string]> = [];
    const add = (key: string, value: number | undefined, kind: string, index: number) => {
      if (value === undefined) return;
      entries.push([
        order[index],
        `${key}${numberParam("", kind, value).slice(1)}${params[index]}`,
      ]);
    };
    add("limit", limit, kinds[0], 0);
    add("remaining", remaining, kinds[1], 1);
    add("reset", reset, kinds[2], 2);
    extras.forEach(([key, value], index) => entries.push([order[3 + index], `${key}=${value}`]));
    entries.sort((a, b) => a[0] - b[0]);
    const headers: Record<string, unknown> = {};
    if (entries.length > 0) {
      headers["RateLimit"] = entries.map(([, text], index) =>
        index === 0 ? text : `,${separators[index]}${text}`
      ).join("");
    }
    if (policy.length > 0) {
      headers["RateLimit-Policy"] = policy.map(([quota, window]) =>
        window === undefined ? String(quota) : `${quota};w=${window}`
      ).join(", ");
    }
    if (retryAfter !== undefined) headers["Retry-After"] = String(retryAfter);
    const valid = (value: number | undefined, kind: string) => kind === "int" ? value : undefined;
    const state = {
      limit: valid(limit, kinds[0]),
      remaining: valid(remaining, kinds[1]),
      reset: valid(reset, kinds[2]),
    };
    const known = Object.values(state).some((value) => value !== undefined);
    return { headers, expected: modelMeta(known ? state : undefined, retryAfter) };
  },
);

/** Values a hostile or broken server could send. */
const hostileValue = fc.oneof(
  fc.string({ maxLength: 60 }),
  fc.string({ unit: "grapheme", maxLength: 30 }),
  fc.string({
    unit: fc.constantFrom(...'";=,:()?@%*\\ \t\r\nqrtw0123456789-.abc/'),
    maxLength: 60,
  }),
  fc.constantFrom(
    "x".repeat(5000),
    '"a";r=1, '.repeat(2000),
    Array(450).fill('"a";r=1').join(", "), // just under the bound: parsed
    "(".repeat(3000),
    "\u0000",
    "",
  ),
  fc.array(fc.string({ maxLength: 20 }), { maxLength: 4 }),
  fc.integer(),
  fc.double(),
  fc.constantFrom(null, undefined, true, {}, [1, 2], [null], Symbol.for("x")),
);

describe("parseStandardRateLimitHeaders properties", () => {
  it("matches the reference model on well-formed item-list fields (-08 to -11)", () => {
    fc.assert(
      fc.property(itemListCase, ({ headers, expected }) => {
        assert.deepEqual(
          parseStandardRateLimitHeaders((name) => headers[name]),
          expected,
          JSON.stringify(headers),
        );
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it("matches the reference model on well-formed dictionary fields (-07)", () => {
    fc.assert(
      fc.property(dictionaryCase, ({ headers, expected }) => {
        assert.deepEqual(
          parseStandardRateLimitHeaders((name) => headers[name]),
          expected,
          JSON.stringify(headers),
        );
      }),
      { seed: SEED + 1, numRuns: RUNS },
    );
  });

  it("never throws on hostile values, and gives counts or nothing", () => {
    const wellFormed = fc.oneof(itemListCase, dictionaryCase).map(({ headers }) => headers);
    const mutated = fc.tuple(wellFormed, fc.nat(), fc.string({ maxLength: 3 })).map(
      ([headers, at, insert]) => {
        const out: Record<string, unknown> = {};
        for (const [name, value] of Object.entries(headers)) {
          const text = Array.isArray(value) ? value.join(", ") : String(value);
          const cut = text.length === 0 ? 0 : at % text.length;
          out[name] = text.slice(0, cut) + insert + text.slice(cut + 1);
        }
        return out;
      },
    );
    const hostile = fc.record({
      "RateLimit": hostileValue,
      "RateLimit-Policy": hostileValue,
      "Retry-After": hostileValue,
    }, { requiredKeys: [] });
    fc.assert(
      fc.property(fc.oneof(mutated, hostile), (headers: Record<string, unknown>) => {
        const meta = parseStandardRateLimitHeaders((name) => headers[name]);
        if (meta === undefined) return;
        for (const value of Object.values(meta)) {
          assert.ok(Number.isFinite(value) && value >= 0, JSON.stringify(meta));
        }
      }),
      { seed: SEED + 2, numRuns: RUNS * 2 },
    );
  });
});
