import { describe, it } from "node:test";
import assert from "node:assert/strict";

// Imported as a server would (server-rendered frameworks): no `HTMLElement`, no registry.
const hadNoDom = (globalThis as { HTMLElement?: unknown }).HTMLElement === undefined &&
  (globalThis as { customElements?: unknown }).customElements === undefined;
const elements = await import("../../../client/elements/mod.ts");

describe("client/elements/mod.ts", () => {
  it("imports without a DOM (Deno, Node): the element class exists, defineApiKeysManager is a no-op", () => {
    assert.ok(hadNoDom, "the test runs without HTMLElement and customElements");
    assert.equal(
      (globalThis as { HTMLElement?: unknown }).HTMLElement,
      undefined,
      "the stand-in is gone after the import",
    );
    assert.equal(typeof elements.ApiKeysManagerElement, "function");
    elements.defineApiKeysManager();
    elements.defineApiKeysManager("my-keys");
    assert.equal((globalThis as { customElements?: unknown }).customElements, undefined);
  });

  it("exports the element, its strings and defineApiKeysManager", () => {
    assert.deepEqual(Object.keys(elements).sort(), [
      "API_KEYS_MANAGER_STRINGS",
      "ApiKeysManagerElement",
      "defineApiKeysManager",
    ]);
  });

  it("defineApiKeysManager defines a name once, a subclass for other names, nothing without a registry", () => {
    const defined = new Map<string, unknown>();
    const registry = {
      get: (name: string) => defined.get(name),
      define: (name: string, constructor: unknown) => defined.set(name, constructor),
    };
    const global = globalThis as { customElements?: unknown };
    global.customElements = registry;
    try {
      elements.defineApiKeysManager();
      elements.defineApiKeysManager();
      elements.defineApiKeysManager("my-keys");
    } finally {
      delete global.customElements;
    }
    assert.deepEqual([...defined.keys()], ["api-keys-manager", "my-keys"]);
    assert.equal(defined.get("api-keys-manager"), elements.ApiKeysManagerElement);
    const other = defined.get("my-keys") as { prototype: unknown };
    assert.ok(other.prototype instanceof elements.ApiKeysManagerElement);
    elements.defineApiKeysManager("no-registry");
    assert.equal(defined.size, 2);
  });
});
