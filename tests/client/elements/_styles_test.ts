import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { STYLES } from "../../../client/elements/_styles.ts";

const properties = (css: string) =>
  [...new Set([...css.matchAll(/--api-keys-manager-[a-z-]+/g)].map((m) => m[0]))].sort();

describe("client/elements/_styles.ts", () => {
  it("every color has a dark default under prefers-color-scheme: dark", () => {
    assert.match(STYLES, /color-scheme:light dark/);
    const [light, dark] = STYLES.split("@media (prefers-color-scheme:dark)");
    const colors = properties(light).filter((name) => !/font|radius|mono/.test(name));
    assert.ok(colors.length >= 7, colors.join());
    assert.deepEqual(properties(dark.slice(0, dark.indexOf("}}"))), colors);
  });
});
