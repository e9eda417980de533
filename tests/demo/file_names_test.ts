/**
 * The demo's file names follow the library's convention: snake_case words,
 * and a Nest binding file's role after a dot (`tenant_keys.service.ts`).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const ROOT = new URL("../../", import.meta.url);
const WORDS = "[a-z0-9]+(?:_[a-z0-9]+)*";
const NAME = new RegExp(`^_?${WORDS}(?:\\.${WORDS})?\\.(?:ts|js|cjs|html|json|lock)$`);

/** Folder names .gitignore ignores at any depth (its `name/` lines), e.g. `node_modules`. */
const IGNORED = new Set(
  readFileSync(new URL(".gitignore", ROOT), "utf8").split("\n")
    .filter((line) => /^[^/*!#\s]+\/$/.test(line)).map((line) => line.slice(0, -1)),
);

/**
 * The files under `dir` (relative to `root`, a folder URL), as paths relative to `root`,
 * without the folders in {@link IGNORED}: no git needed.
 */
function files(dir: string, root: URL = ROOT): string[] {
  return readdirSync(new URL(`${dir}/`, root)).flatMap((name) => {
    const path = `${dir}/${name}`;
    if (!statSync(new URL(path, root)).isDirectory()) return [path];
    return IGNORED.has(name) ? [] : files(path, root);
  });
}

describe("demo file names", () => {
  const all = [...files("demo"), ...files("tests/demo")];

  it("skips what `npm start` installs (demo/node_modules/) and the other folders .gitignore ignores", () => {
    const root = mkdtempSync(join(tmpdir(), "demo-names-"));
    try {
      for (const path of ["demo/ok.ts", "demo/node_modules/.bin/js-yaml", "demo/generated/X.js"]) {
        mkdirSync(join(root, path, ".."), { recursive: true });
        writeFileSync(join(root, path), "");
      }
      assert.deepEqual(files("demo", pathToFileURL(`${root}/`)), ["demo/ok.ts"]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

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
