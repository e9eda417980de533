import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

// The module needs `HTMLElement` (a browser module); a bare class stands in for the import.
(globalThis as { HTMLElement?: unknown }).HTMLElement ??= class {};
const { ApiKeysManagerElement } = await import("../../../client/elements/api_keys_manager.ts");

describe("client/elements/api_keys_manager.ts", () => {
  it("is an HTMLElement observing base-url and credentials", () => {
    assert.ok(ApiKeysManagerElement.prototype instanceof globalThis.HTMLElement);
    assert.deepEqual(ApiKeysManagerElement.observedAttributes, ["base-url", "credentials"]);
  });

  it("keeps no storage and logs nothing (the secret's only homes are a closure and the dialog)", () => {
    const source = readFileSync(
      new URL("../../../client/elements/api_keys_manager.ts", import.meta.url),
      "utf8",
    );
    assert.doesNotMatch(source, /localStorage|sessionStorage|indexedDB|document\.cookie|console\./);
    assert.doesNotMatch(source, /innerHTML|insertAdjacentHTML/, "text goes in as text");
  });
});
