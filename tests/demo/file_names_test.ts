/**
 * The demo's file names follow the library's convention: snake_case words,
 * and a Nest binding file's role after a dot (`tenant_keys.service.ts`).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, statSync } from "node:fs";

const ROOT = new URL("../../", import.meta.url);
const WORDS = "[a-z0-9]+(?:_[a-z0-9]+)*";
const NAME = new RegExp(`^_?${WORDS}(?:\\.${WORDS})?\\.(?:ts|js|cjs|html|json|lock)$`);

function files(dir: string): string[] {
  return readdirSync(new URL(`${dir}/`, ROOT)).flatMap((name) => {
    const path = `${dir}/${name}`;
    return statSync(new URL(path, ROOT)).isDirectory() ? files(path) : [path];
  });
}

describe("demo file names", () => {
  const all = [...files("demo"), ...files("tests/demo")];

  it("finds the demo files", () => {
    assert.ok(all.length > 60, String(all.length));
  });

  it("every name is snake_case words, with at most one role after a dot", () => {
    const broken = all.filter((path) => {
      const name = path.slice(path.lastIndexOf("/") + 1);
      return name !== "README.md" && !NAME.test(name);
    });
    assert.deepEqual(broken, []);
  });

  it("the rule refuses kebab-case, capitals and double roles", () => {
    for (const name of ["tenant-keys.service.ts", "KeyView.ts", "a.b.c.ts", "a__b.ts"]) {
      assert.equal(NAME.test(name), false, name);
    }
    for (const name of ["tenant_keys.service.ts", "scope.dto.ts", "_demo.ts", "index.html"]) {
      assert.equal(NAME.test(name), true, name);
    }
  });
});
