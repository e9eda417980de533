import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import * as fetchBinding from "../../../api_keys/fetch/mod.ts";

describe("api_keys/fetch/mod.ts", () => {
  it("exports the binding's public runtime names", () => {
    assert.deepEqual(Object.keys(fetchBinding).sort(), [
      "apiKeyErrorResponse",
      "createApiKeyAuthorizer",
      "defaultFetchClientIp",
      "getApiKeyContext",
      "peerAddress",
      "trustedProxyClientIp",
    ]);
  });

  it("imports only the api-keys core: no Nest, no npm package, no safe-response entry point", () => {
    const dir = new URL("../../../api_keys/fetch/", import.meta.url);
    for (const name of readdirSync(dir).filter((file) => file.endsWith(".ts"))) {
      const source = readFileSync(new URL(name, dir), "utf8").replace(/\/\*[\s\S]*?\*\//g, "");
      for (const [, specifier] of source.matchAll(/from\s*["']([^"']+)["']/g)) {
        assert.match(specifier, /^\.\.?\/[\w.]+\.ts$/, `${name} imports ${specifier}`);
      }
    }
  });
});
