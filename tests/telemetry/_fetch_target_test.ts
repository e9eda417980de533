import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { fetchRequestTarget, originForm } from "../../telemetry/_fetch_target.ts";

/** A request as a server hands it on: its URL as the server built it, and its Host header. */
const served = (url: string, host: string | null) =>
  ({ url, headers: new Headers(host === null ? {} : { host }) }) as Request;

describe("fetchRequestTarget", () => {
  it("reads the URL's path and query as written, whatever the Host (a well-formed one)", () => {
    const cases: [string, string | null, string][] = [
      ["http://api.example.com/orders?page=2", "api.example.com", "/orders?page=2"],
      ["http://a:8080/x", "a:8080", "/x"],
      ["http://[::1]:8080/x", "[::1]:8080", "/x"],
      ["http://a//evil.example/x", "a", "//evil.example/x"], // as sent: a path of this origin
      ["http://other.example/x?y=1", "a.example", "/x?y=1"], // an absolute-form target
      ["http://a.example/x?y=1", null, "/x?y=1"],
      ["http://a.example/x", "", "/x"],
      ["http://a/./x/../y", "a", "/./x/../y"],
    ];
    for (const [url, host, target] of cases) {
      assert.equal(fetchRequestTarget(served(url, host)), target, `${host} ${url}`);
    }
    assert.equal(fetchRequestTarget(new Request("http://localhost/items?page=2")), "/items?page=2");
  });

  it("answers undefined for a Host that is no host[:port]: Deno.serve's join of it and an origin-form target reads like an absolute-form one", () => {
    const cases: [string, string][] = [
      ["http://api.example.com?page=7&limit=3/orders", "api.example.com?page=7&limit=3"],
      ["http://a/evil/orders", "a/evil"], // GET /orders with Host a/evil, or GET http://a/evil/orders
      ["http://a#/orders", "a#"],
      ["http://u@a/x", "u@a"],
      ["http://a b/x", "a b"],
      ["http://a\\b/x", "a\\b"],
      ["http://a:80:80/x", "a:80:80"],
    ];
    for (const [url, host] of cases) {
      assert.equal(fetchRequestTarget(served(url, host)), undefined, host);
    }
  });
});

describe("originForm", () => {
  it("drops an absolute-form target's scheme and authority, unparsed; keeps any other target", () => {
    assert.equal(originForm("http://api.example/items?page=2"), "/items?page=2");
    assert.equal(originForm("http://:99999/items?page=2"), "/items?page=2");
    assert.equal(originForm("https://h?x=1"), "/?x=1");
    assert.equal(originForm("/a/b"), "/a/b");
    assert.equal(originForm("*"), "*");
  });
});
