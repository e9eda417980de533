/**
 * Rules of the source tree: every library file has a test file named after it
 * (tests/<path>/<name>_test.ts, importing that file itself, not its folder's
 * mod.ts), and the two cores carry at most 0.6 comment lines per code line.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";

const ROOT = new URL("../", import.meta.url);
const LIBRARY_DIRS = ["api_keys", "safe_response", "client", "rate_limits", "telemetry"];

function sourceFiles(dir: string): string[] {
  return readdirSync(new URL(`${dir}/`, ROOT)).flatMap((name) => {
    const path = `${dir}/${name}`;
    if (statSync(new URL(path, ROOT)).isDirectory()) return sourceFiles(path);
    return name.endsWith(".ts") ? [path] : [];
  });
}

const LIBRARY_FILES = LIBRARY_DIRS.flatMap(sourceFiles).sort();

/** Comment lines (JSDoc included) and non-blank code lines of `text`. */
function commentAndCodeLines(text: string): { comment: number; code: number } {
  let comment = 0;
  let code = 0;
  let inBlock = false;
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "") continue;
    if (inBlock || line.startsWith("/*") || line.startsWith("//")) {
      comment++;
      if (line.startsWith("/*")) inBlock = !line.includes("*/");
      else if (inBlock && line.includes("*/")) inBlock = false;
    } else {
      code++;
    }
  }
  return { comment, code };
}

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

  for (const dir of ["api_keys", "safe_response"]) {
    it(`${dir}/ carries at most 0.6 comment lines per code line`, () => {
      let comment = 0;
      let code = 0;
      for (const file of sourceFiles(dir)) {
        const counts = commentAndCodeLines(readFileSync(new URL(file, ROOT), "utf8"));
        comment += counts.comment;
        code += counts.code;
      }
      assert.ok(comment / code <= 0.6, `${comment} comment lines / ${code} code lines`);
    });
  }

  it("counts comment and code lines", () => {
    assert.deepEqual(commentAndCodeLines("/**\n * a\n */\nconst a = 1; // b\n\n// c\nf();\n"), {
      comment: 4,
      code: 2,
    });
  });
});
