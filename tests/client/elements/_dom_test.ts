import { describe, it } from "node:test";
import assert from "node:assert/strict";
// Deno has no `HTMLElement`: the module puts a stand-in until dropStandIn.
const before = typeof (globalThis as { HTMLElement?: unknown }).HTMLElement;
const { dropStandIn, h, svg } = await import("../../../client/elements/_dom.ts");

/** A minimal stand-in for `document`: records what `h` and `svg` do. */
class FakeElement {
  attributes = new Map<string, string>();
  listeners: string[] = [];
  children: unknown[] = [];
  constructor(readonly tag: string, readonly ns?: string) {}
  setAttribute(name: string, value: string) {
    this.attributes.set(name, value);
  }
  addEventListener(name: string) {
    this.listeners.push(name);
  }
  append(child: unknown) {
    this.children.push(child);
  }
}

describe("client/elements/_dom.ts", () => {
  it("h sets attributes (true: empty), listeners from on*, text children as text", () => {
    const global = globalThis as { document?: unknown };
    global.document = {
      createElement: (tag: string) => new FakeElement(tag),
      createElementNS: (ns: string, tag: string) => new FakeElement(tag, ns),
    };
    try {
      const element = h(
        "button",
        { type: "button", disabled: true, hidden: false, title: undefined, onclick: () => {} },
        "<b>text</b>",
        null,
        false,
      ) as unknown as FakeElement;
      assert.deepEqual([...element.attributes], [["type", "button"], ["disabled", ""]]);
      assert.deepEqual(element.listeners, ["click"]);
      assert.deepEqual(element.children, ["<b>text</b>"]);
      const rect = svg("rect", { x: 1, width: 2 }) as unknown as FakeElement;
      assert.equal(rect.ns, "http://www.w3.org/2000/svg");
      assert.deepEqual([...rect.attributes], [["x", "1"], ["width", "2"]]);
    } finally {
      delete global.document;
    }
  });

  it("without a DOM: a stand-in HTMLElement while the class is defined, gone after dropStandIn", () => {
    const global = globalThis as { HTMLElement?: unknown };
    assert.equal(before, "undefined");
    assert.equal(typeof global.HTMLElement, "function");
    dropStandIn();
    assert.equal(global.HTMLElement, undefined);
  });
});
