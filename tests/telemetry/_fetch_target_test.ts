import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { fetchRequestTarget } from "../../telemetry/_fetch_target.ts";

/** A request as a server hands it on: its URL as the server built it, and its Host header. */
const served = (url: string, host: string | null) =>
  ({ url, headers: new Headers(host === null ? {} : { host }) }) as Request;

describe("fetchRequestTarget", () => {
  it("reads the target after the Host where the URL holds the Host as sent (Deno.serve joins them)", () => {
    const cases: [string, string, string][] = [
      ["http://api.example.com/orders?page=2", "api.example.com", "/orders?page=2"],
      ["http://a:8080/x", "a:8080", "/x"],
      ["http://api.example.com?page=7&limit=3/orders", "api.example.com?page=7&limit=3", "/orders"],
      ["http://a/evil/orders", "a/evil", "/orders"],
      ["http://a#/orders", "a#", "/orders"],
      ["http://a//evil.example/x", "a", "//evil.example/x"], // as sent: a path of this origin
    ];
    for (const [url, host, target] of cases) {
      assert.equal(fetchRequestTarget(served(url, host)), target, `${host} ${url}`);
    }
  });

  it("else the URL's own path and query: no Host, another Host, a target not in origin form", () => {
    assert.equal(fetchRequestTarget(new Request("http://localhost/items?page=2")), "/items?page=2");
    assert.equal(fetchRequestTarget(served("http://a.example/x?y=1", null)), "/x?y=1");
    assert.equal(fetchRequestTarget(served("http://a.example/x?y=1", "b.example")), "/x?y=1");
    assert.equal(fetchRequestTarget(served("http://a.example/x", "")), "/x");
    assert.equal(fetchRequestTarget(served("not a url", "h")), "/");
  });
});
