/**
 * Rules of the source tree: every library file has a test file named after it
 * (tests/<path>/<name>_test.ts, importing that file itself, not its folder's
 * mod.ts).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";

const ROOT = new URL("../", import.meta.url);
const LIBRARY_DIRS = ["api_keys", "safe_response", "client", "rate_limits"];

function sourceFiles(dir: string): string[] {
  return readdirSync(new URL(`${dir}/`, ROOT)).flatMap((name) => {
    const path = `${dir}/${name}`;
    if (statSync(new URL(path, ROOT)).isDirectory()) return sourceFiles(path);
    return name.endsWith(".ts") ? [path] : [];
  });
}

const LIBRARY_FILES = LIBRARY_DIRS.flatMap(sourceFiles).sort();

/** The modules `text` (a test at `base`) imports by relative path, as URLs. */
function importedPaths(text: string, base: URL): string[] {
  const specifiers = text.matchAll(/(?:\bfrom|^import|\bimport\()\s*"(\.{1,2}\/[^"]+)"/gm);
  return [...specifiers].map((match) => new URL(match[1], base).href);
}

describe("source tree", () => {
  it("finds the library files", () => {
    assert.ok(LIBRARY_FILES.length > 50, String(LIBRARY_FILES.length));
  });

  it("every library file has tests/<path>/<name>_test.ts importing that file itself", () => {
    const missing = LIBRARY_FILES.filter((file) => {
      const test = `tests/${file.replace(/\.ts$/, "_test.ts")}`;
      let text: string;
      try {
        text = readFileSync(new URL(test, ROOT), "utf8");
      } catch {
        return true;
      }
      // Not the entry point of its folder that re-exports it: the file itself.
      const target = new URL(file, ROOT).href;
      return !importedPaths(text, new URL(test, ROOT)).includes(target);
    });
    assert.deepEqual(missing, []);
  });
});
