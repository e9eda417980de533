/**
 * The start banner: the Swagger UI and OpenAPI addresses only where the demo
 * serves them (the Nest demo, not the Fetch one).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { formatBanner } from "../../demo/banner.ts";

const nest = {
  url: "http://127.0.0.1:3000",
  adapter: "express",
  storageKind: "memory" as const,
  problemDetails: false,
  keys: undefined,
  pepperSource: "random" as const,
  openapi: true,
};
const fetchDemo = { ...nest, adapter: "Deno.serve (Fetch bindings)", openapi: false };

describe("formatBanner", () => {
  it("names the Swagger UI and OpenAPI addresses with openapi", () => {
    const banner = formatBanner(nest);
    assert.match(banner, /web page: http:\/\/127\.0\.0\.1:3000\/ /);
    assert.match(banner, /Swagger UI: http:\/\/127\.0\.0\.1:3000\/docs/);
    assert.match(banner, /OpenAPI: http:\/\/127\.0\.0\.1:3000\/openapi\.json/);
  });

  it("names only the web page without openapi", () => {
    const banner = formatBanner(fetchDemo);
    assert.match(banner, /^ {2}web page: http:\/\/127\.0\.0\.1:3000\/$/m);
    assert.doesNotMatch(banner, /Swagger|OpenAPI|\/docs|openapi\.json/);
  });
});
