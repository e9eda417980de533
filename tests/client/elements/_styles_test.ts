import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { STYLES } from "../../../client/elements/_styles.ts";

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
});
