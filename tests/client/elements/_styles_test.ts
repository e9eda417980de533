import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { adoptStyles, STYLES } from "../../../client/elements/_styles.ts";

describe("client/elements/_styles.ts", () => {
  it("every color is a custom property with a light-dark() default; the theme attribute sets color-scheme", () => {
    const colors = [...STYLES.matchAll(/--\w:var\((--api-keys-manager-[a-z-]+),([^;]*?)\);/g)];
    assert.ok(colors.length >= 7, String(colors.length));
    for (const [, name, fallback] of colors) {
      if (/radius/.test(name)) continue;
      assert.match(fallback, /^light-dark\(#[0-9a-f]{3,6},#[0-9a-f]{3,6}\)$/, name);
    }
    for (const theme of ["light", "dark", "auto"]) {
      assert.match(STYLES, new RegExp(`:host\\(\\[theme=${theme}\\]\\)\\{color-scheme:`));
    }
    assert.doesNotMatch(STYLES, /prefers-color-scheme/, "the host decides, not the system");
  });

  it("below 48em of its own width, rows become cards (a container query)", () => {
    assert.match(STYLES, /container-type:inline-size/);
    assert.match(
      STYLES,
      /@container \(max-width:47\.99em\)\{\ntable,thead,tbody,tr,th,td\{display:block\}/,
    );
  });

  it("one constructable sheet, made on first use, shared by every shadow root (a strict CSP allows it)", () => {
    const global = globalThis as { CSSStyleSheet?: unknown };
    assert.equal(global.CSSStyleSheet, undefined, "imported without a DOM, nothing was made");
    let made = 0;
    global.CSSStyleSheet = class {
      text = "";
      constructor() {
        made++;
      }
      replaceSync(text: string) {
        this.text = text;
      }
    };
    try {
      const roots = [{ adoptedStyleSheets: [] }, { adoptedStyleSheets: [] }];
      for (const root of roots) adoptStyles(root as unknown as ShadowRoot);
      assert.equal(made, 1);
      const [[sheet], [other]] = roots.map((root) => root.adoptedStyleSheets as { text: string }[]);
      assert.equal(sheet, other);
      assert.equal(sheet.text, STYLES);
    } finally {
      delete global.CSSStyleSheet;
    }
  });

  it("without adoptedStyleSheets, a <style> in the shadow root", () => {
    const global = globalThis as { document?: unknown };
    const appended: { tag: string; text: unknown[] }[] = [];
    global.document = {
      createElement: (tag: string) => {
        const element = {
          tag,
          text: [] as unknown[],
          append: (text: unknown) => element.text.push(text),
        };
        return element;
      },
    };
    try {
      adoptStyles({ append: (child: never) => appended.push(child) } as unknown as ShadowRoot);
      assert.deepEqual(appended.map(({ tag, text }) => [tag, text]), [["style", [STYLES]]]);
    } finally {
      delete global.document;
    }
  });
});
