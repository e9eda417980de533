import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  cursorPaginationLinks,
  MAX_CURSOR_LENGTH,
  offsetPaginationLinks,
  paginationLinkHeader,
} from "../../safe_response/pagination_links.ts";

describe("pagination links", () => {
  it("are relative, keep other parameters, replace page and limit, and encode values", () => {
    const links = offsetPaginationLinks(
      "/api/items?name=%C3%A9t%C3%A9&page=9&limit=1&x=a%26b",
      2,
      10,
      3,
    );
    assert.deepEqual(links, {
      self: "/api/items?name=%C3%A9t%C3%A9&page=2&limit=10&x=a%26b",
      first: "/api/items?name=%C3%A9t%C3%A9&page=1&limit=10&x=a%26b",
      prev: "/api/items?name=%C3%A9t%C3%A9&page=1&limit=10&x=a%26b",
      next: "/api/items?name=%C3%A9t%C3%A9&page=3&limit=10&x=a%26b",
      last: "/api/items?name=%C3%A9t%C3%A9&page=3&limit=10&x=a%26b",
    });
  });

  it("never point at another origin", () => {
    const cases: Array<[string, string]> = [
      ["//evil.example/x?page=1", "/evil.example/x?page=1&limit=10"],
      ["http://evil.example/x?page=1", "/x?page=1&limit=10"],
      ["http://:99999/x?page=1", "/x?page=1&limit=10"],
      ["/.//evil.example/x", "/evil.example/x?page=1&limit=10"],
    ];
    for (const [target, expected] of cases) {
      assert.equal(offsetPaginationLinks(target, 1, 10, 1).self, expected, target);
    }
  });

  it("use cursors for cursor pagination", () => {
    assert.deepEqual(cursorPaginationLinks("/feed?cursor=old&f=1", 20, "n x", "p"), {
      self: "/feed?cursor=old&f=1&limit=20",
      first: "/feed?f=1&limit=20",
      prev: "/feed?cursor=p&f=1&limit=20",
      next: "/feed?cursor=n+x&f=1&limit=20",
      last: null,
    });
  });
});

describe("the pagination Link header (RFC 8288)", () => {
  it("lists first, prev, next and last with quoted relation names, as the body links", () => {
    const links = offsetPaginationLinks("/items?q=a&page=2", 2, 10, 3);
    assert.equal(
      paginationLinkHeader(links),
      '</items?q=a&page=1&limit=10>; rel="first", </items?q=a&page=1&limit=10>; rel="prev", ' +
        '</items?q=a&page=3&limit=10>; rel="next", </items?q=a&page=3&limit=10>; rel="last"',
    );
    // null links (no prev on page 1, no last with cursors) are left out.
    assert.equal(
      paginationLinkHeader(cursorPaginationLinks("/feed", 20, "n", null)),
      '</feed?limit=20>; rel="first", </feed?cursor=n&limit=20>; rel="next"',
    );
  });

  it("percent-encodes what an RFC 3986 URI reference cannot hold", () => {
    const header = paginationLinkHeader({
      self: "/x",
      first: '/a b<c>"d\\\r\ne\u00e9\ud800',
      prev: null,
      next: null,
      last: null,
    });
    assert.equal(header, '</a%20b%3Cc%3E%22d%5C%0D%0Ae%C3%A9%EF%BF%BD>; rel="first"');
  });
});

describe("pagination links and credentials or long queries", () => {
  const key = `ak_live_${"A".repeat(12)}_${"b".repeat(38)}`;

  it("drop parameters named like credentials, whatever their value", () => {
    for (
      const name of [
        "api_key",
        "apiKey",
        "API-KEY",
        "x-api-key",
        "access_token",
        "token",
        "refresh_token",
        "id_token",
        "private_token",
        "pageToken",
        "jwt",
        "api_token",
        "X-Amz-Signature",
        "X-Amz-Credential",
        "X-Amz-Security-Token",
        "sig",
        "session_id",
        "sessionId",
        "passwd",
        "pwd",
        "client_secret",
        "private_key",
        "auth",
        "user_key",
        "subscription-key",
        "Ocp-Apim-Subscription-Key",
        "auth_key",
        "app_key",
        "client_key",
        "license_key",
      ]
    ) {
      const links = offsetPaginationLinks(`/items?q=a&${name}=s3cr3t&page=2`, 2, 10, 3);
      for (const link of Object.values(links)) {
        if (link !== null) assert.ok(!link.includes("s3cr3t"), `${name}: ${link}`);
      }
      assert.equal(links.next, "/items?q=a&page=3&limit=10", name);
    }
  });

  it("keep parameters whose names only look alike", () => {
    for (
      const name of [
        "sortKey",
        "monkey",
        "tokenizer",
        "signed",
        "author",
        "status",
        "q",
        "code",
        "turkey",
      ]
    ) {
      const links = offsetPaginationLinks(`/items?${name}=v&page=2`, 2, 10, 3);
      assert.equal(links.next, `/items?${name}=v&page=3&limit=10`, name);
    }
  });

  it("drop parameters holding a key, under any name, in the body links and the Link header", () => {
    for (
      const target of [`/feed?q=a&k=${key}`, `/feed?q=a&f=Bearer%20${key}`, `/feed?q=a&${key}`]
    ) {
      const links = cursorPaginationLinks(target, 20, "n", "p");
      const everything = JSON.stringify(links) + paginationLinkHeader(links);
      assert.ok(!everything.includes("A".repeat(12)), everything);
      assert.equal(links.next, "/feed?q=a&cursor=n&limit=20", target);
    }
  });

  it("echo at most 20 other parameters and 1,000 characters of them, in order", () => {
    const many = Array.from({ length: 30 }, (_, i) => `p${i}=${i}`).join("&");
    const next = new URL(offsetPaginationLinks(`/i?${many}`, 1, 10, 2).next!, "http://x");
    assert.deepEqual(
      [...next.searchParams.keys()],
      [...Array.from({ length: 20 }, (_, i) => `p${i}`), "page", "limit"],
    );
    const long = `/i?q=${"x".repeat(6_000)}&a=1&page=2`;
    const links = offsetPaginationLinks(long, 2, 10, 3);
    const body = JSON.stringify(links) + paginationLinkHeader(links);
    assert.ok(body.length < 1_500, `${body.length} characters`);
    assert.equal(links.next, "/i?a=1&page=3&limit=10");
    const wide = Array.from({ length: 12 }, (_, i) => `v${i}=${"y".repeat(95)}`).join("&");
    const kept = [...new URL(offsetPaginationLinks(`/i?${wide}`, 1, 10, 1).self, "http://x")
      .searchParams.keys()];
    assert.deepEqual(kept, [...Array.from({ length: 10 }, (_, i) => `v${i}`), "page", "limit"]);
  });

  it("keep their own parameters whatever the budget", () => {
    const links = cursorPaginationLinks(`/feed?q=${"x".repeat(2_000)}&cursor=c1`, 5, null, null);
    assert.equal(links.self, "/feed?cursor=c1&limit=5");
  });

  it("echo the request's cursor in self only when it holds no key", () => {
    for (const cursor of [key, `Bearer%20${key}`, `c-${key}-1`]) {
      const links = cursorPaginationLinks(`/feed?q=a&cursor=${cursor}`, 5, "n", null);
      const everything = JSON.stringify(links) + paginationLinkHeader(links);
      assert.ok(!everything.includes("A".repeat(12)), everything);
      assert.equal(links.self, "/feed?q=a&limit=5", cursor);
      assert.equal(links.next, "/feed?q=a&cursor=n&limit=5");
    }
  });

  it("echo one request cursor, the first, of at most MAX_CURSOR_LENGTH characters", () => {
    const repeated = `/feed?cursor=${"c".repeat(500)}&${"cursor=x&".repeat(2_000)}q=a`;
    const links = cursorPaginationLinks(repeated, 5, null, null);
    assert.equal(links.self, `/feed?cursor=${"c".repeat(500)}&q=a&limit=5`);
    const longest = "c".repeat(MAX_CURSOR_LENGTH);
    assert.equal(
      cursorPaginationLinks(`/feed?cursor=${longest}`, 5, null, null).self,
      `/feed?cursor=${longest}&limit=5`,
    );
    const over = cursorPaginationLinks(`/feed?cursor=${longest}c&q=a`, 5, null, null);
    assert.equal(over.self, "/feed?q=a&limit=5");
  });
});
