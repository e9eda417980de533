import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { InMemoryApiKeyStorage } from "../../api_keys/mod.ts";
import {
  cursorPaginationLinks,
  offsetPaginationLinks,
} from "../../safe_response/pagination_links.ts";
import { PEPPER_1 } from "./harness.ts";
import { RUNS, SEED } from "./hostile_inputs.ts";
import { CapturingLogger } from "../safe_response/nest/helpers.ts";
import { bootApp, getRequest, PLATFORMS, rawRequest, type RunningApp } from "./nest_app.ts";

/** RFC 3986 characters of a relative reference's path and query; `%` only as `%XX`. */
const SAFE_LINK = /^\/(?!\/)(?:[A-Za-z0-9\-._~!$&'()*+,;=:@\/?]|%[0-9A-Fa-f]{2})*$/;

/** Problems of one link: not relative, not escaped, or wrong page/limit values. */
function linkProblems(link: unknown, path: string, numeric = ["page", "limit"]): string[] {
  if (link === null) return [];
  if (typeof link !== "string") return [`link is ${typeof link}`];
  if (!SAFE_LINK.test(link)) return [`not a safe relative link: ${JSON.stringify(link)}`];
  const url = new URL(link, "http://base.invalid");
  const problems: string[] = [];
  if (url.origin !== "http://base.invalid") problems.push(`leaves the origin: ${link}`);
  if (path !== "" && url.pathname !== path) problems.push(`path ${url.pathname} != ${path}`);
  for (const name of numeric) {
    const values = url.searchParams.getAll(name);
    if (values.length > 1) problems.push(`${name} repeated`);
    if (values.length === 1 && !/^[1-9][0-9]*$/.test(values[0])) {
      problems.push(`${name}=${values[0]}`);
    }
  }
  return problems;
}

/** The multiset of query parameters other than `skip`, as the WHATWG parser reads them. */
function otherParams(target: string, skip: string[]): string[] {
  const params = new URL(target, "http://base.invalid").searchParams;
  return [...params].filter(([name]) => !skip.includes(name)).map((p) => p.join("=")).sort();
}

/** Targets that `new URL(target, base)` refuses: absolute-form with a bad authority, and others. */
const UNPARSEABLE_TARGETS = [
  "http://:99999/items?page=2",
  "http://[::1/items?page=2",
  "https://a b/items",
  "//:99999/items?page=2",
  "http://:99999",
  "http://:99999?page=2",
  "a:b?page=2",
  "*",
];

const hostileValue = fc.oneof(
  fc.constantFrom(
    "9".repeat(400),
    "9007199254740991",
    "9007199254740993",
    "-1",
    "0",
    "1e3",
    "NaN",
    "",
    "<script>alert(1)</script>",
    "\"'`",
    "%0d%0aSet-Cookie:x=1",
    "%00",
    "javascript:alert(1)",
    "//evil.example/x",
    "a#frag",
    "%E2%80%AE",
    "%",
    "%zz",
    "+ +",
  ),
  fc.string({ unit: "binary-ascii", maxLength: 12 }),
);

const paramName = fc.constantFrom(
  "page",
  "limit",
  "cursor",
  "q",
  "%70age",
  "page[]",
  "a",
  "&",
  "=",
);

/** A request target of printable ASCII (what an HTTP/1.1 parser accepts), built from parts. */
const hostileTarget = (path: string) =>
  fc.array(fc.tuple(paramName, hostileValue, fc.boolean()), { maxLength: 6 }).map((pairs) => {
    const query = pairs.map(([name, value, raw]) =>
      `${name}=${raw ? value : encodeURIComponent(value)}`
    ).join("&");
    // Bytes an HTTP/1.1 parser refuses (controls, space, non-ASCII) are percent-encoded.
    return `${path}?${query}`.replace(/[^\x21-\x7e]/g, (c) => encodeURIComponent(c));
  });

describe("pagination links from hostile request targets (unit)", () => {
  it(`offset and cursor links stay relative, escaped and on the same path (${RUNS} targets)`, () => {
    const target = fc.oneof(
      hostileTarget("/items"),
      fc.string({ unit: "binary", maxLength: 80 }).map((s) => "/" + s),
      fc.constantFrom(
        "//evil.example/x?page=2",
        "/\\evil.example?x=1",
        "http://evil.example/a?b=c",
        ...UNPARSEABLE_TARGETS,
      ),
      // Absolute-form and `//` targets with arbitrary authorities (ports, hosts).
      fc.tuple(
        fc.constantFrom("http://", "https://", "//", "///", "x+y.z://"),
        // (a `//` target's "authority" is path: characters a link may carry as they are)
        fc.string({ unit: fc.constantFrom(..."9aZ:@.-_~") }),
        hostileTarget("/items"),
      ).map((parts) => parts.join("")),
    );
    fc.assert(
      fc.property(
        target,
        fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
        fc.integer({ min: 1, max: 1000 }),
        fc.nat({ max: 1_000_000 }),
        fc.option(fc.string({ unit: "binary", maxLength: 20 })),
        (requestTarget, page, limit, totalPages, cursor) => {
          const offset = offsetPaginationLinks(requestTarget, page, limit, totalPages);
          const byCursor = cursorPaginationLinks(requestTarget, limit, cursor, cursor);
          for (const link of Object.values(offset)) {
            assert.deepEqual(linkProblems(link, ""), [], requestTarget);
          }
          for (const link of Object.values(byCursor)) {
            assert.deepEqual(linkProblems(link, "", ["limit"]), [], requestTarget);
          }
          assert.equal(
            new URL(offset.self, "http://b.invalid").searchParams.get("page"),
            String(page),
          );
          if (cursor !== null) {
            assert.equal(
              new URL(byCursor.next!, "http://b.invalid").searchParams.get("cursor"),
              cursor,
            );
          }
        },
      ),
      { seed: SEED + 30, numRuns: RUNS },
    );
  });
});

for (const platform of PLATFORMS) {
  describe(`pagination links over real HTTP (${platform})`, () => {
    let running: RunningApp;
    const logger = new CapturingLogger();
    before(async () => {
      running = await bootApp(platform, {
        apiKeys: { peppers: { 1: PEPPER_1 }, storage: new InMemoryApiKeyStorage() },
        logger,
      });
    });
    after(() => running.close());

    it("an absolute-form target (even one `new URL` refuses) never gives a 5xx or an error log", async () => {
      const targets = [
        ["http://:99999/items?page=2&q=x", "/items"],
        ["http://evil.example/items?page=2&q=x", "/items"],
        ["http://127.0.0.1/items?page=2&q=x", "/items"],
        ["https://[::1]:99999/items?page=2&q=x", "/items"],
        ["http://:99999/feed?cursor=c&q=x", "/feed"],
        ["HTTP://:0/feed?q=x", "/feed"],
      ];
      for (const [target, path] of targets) {
        const response = await rawRequest(running.port, getRequest(target));
        assert.ok(response !== null && response.status !== 0, `no answer to ${target}`);
        if (platform === "fastify") {
          // Fastify refuses absolute-form targets itself; the point is: no 5xx.
          assert.ok(response.status < 500, `${response.status} for ${target}`);
          continue;
        }
        assert.equal(response.status, 200, `${target}: ${response.body}`);
        const body = JSON.parse(response.body);
        assert.equal(body.path, path, "path has no scheme or authority");
        const links = body.meta.pagination.links as Record<string, string | null>;
        for (const link of Object.values(links)) {
          assert.deepEqual(linkProblems(link, path, ["limit"]), [], target);
        }
        assert.equal(new URL(links.self!, "http://b.invalid").searchParams.get("q"), "x");
      }
      assert.deepEqual(logger.entries.filter((entry) => entry.level === "error"), []);
    });

    for (
      const [path, owned] of [["/items", ["page", "limit"]], ["/feed", [
        "cursor",
        "limit",
      ]]] as const
    ) {
      it(`${path}: links well-formed and other parameters carried over escaped (300 requests)`, async () => {
        let answered = 0;
        let refused = 0; // a bad page, limit or cursor: the app's 400 naming it
        await fc.assert(
          fc.asyncProperty(hostileTarget(path), async (target) => {
            const response = await rawRequest(running.port, getRequest(target));
            assert.ok(response !== null, `no answer to ${target}`);
            assert.ok(response.status < 500, `${response.status} for ${target}`);
            if (response.status === 400 && response.body.includes("INVALID_PAGINATION_QUERY")) {
              const { message } = JSON.parse(response.body).error;
              assert.ok(owned.some((name) => message.startsWith(`Query parameter \`${name}\``)));
              refused++;
              return;
            }
            if (response.status !== 200) return; // refused by the HTTP layer
            answered++;
            const body = JSON.parse(response.body);
            const links = body.meta.pagination.links as Record<string, string | null>;
            assert.deepEqual(Object.keys(links).sort(), ["first", "last", "next", "prev", "self"]);
            for (const link of Object.values(links)) {
              assert.deepEqual(
                linkProblems(link, path, owned.filter((n) => n !== "cursor")),
                [],
                target,
              );
            }
            assert.deepEqual(otherParams(links.self!, [...owned]), otherParams(target, [...owned]));
          }),
          { seed: SEED + 31, numRuns: 300 },
        );
        assert.ok(answered + refused > 250, `only ${answered + refused} of 300 reached the app`);
        assert.ok(answered > 100, `only ${answered} of 300 requests had valid pagination`);
      });
    }
  });
}
