/**
 * Regenerates what the compatibility matrix (`matrix.json`) determines: each consumer app's
 * `package.json` and lockfile under `apps/` (npm resolves the app's third-party dependencies
 * only; the package under test is installed from the fresh tarball at run time, never locked),
 * removes apps the matrix no longer lists, and rewrites `docs/compatibility.md`.
 *
 * ```sh
 * deno task update:consumers          # apps and page
 * deno task update:consumers --docs   # the page only (no network)
 * ```
 *
 * A lockfile is kept as it is while its `package.json` does not change, and updated in place
 * (npm keeps the locked versions that still fit) when it does; delete it to re-resolve all.
 *
 * @module
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { inherit } from "../../scripts/npm_build/run.ts";
import {
  appId,
  appPackageJson,
  type Matrix,
  renderCompatibilityDoc,
  validateMatrix,
} from "./matrix.ts";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, "..", "..");
/** The matrix file. */
export const MATRIX_FILE: string = join(HERE, "matrix.json");
/** One folder per app: `package.json` and `package-lock.json`. */
export const APPS_DIR: string = join(HERE, "apps");
/** The generated compatibility page. */
export const DOC_FILE: string = join(ROOT, "docs", "compatibility.md");

/** Reads and validates `matrix.json`. */
export function readMatrix(): Matrix {
  const matrix = JSON.parse(readFileSync(MATRIX_FILE, "utf8")) as Matrix;
  validateMatrix(matrix);
  return matrix;
}

/** Writes `text` to `path` when it differs; returns whether it did. */
function writeIfChanged(path: string, text: string): boolean {
  if (existsSync(path) && readFileSync(path, "utf8") === text) return false;
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
  return true;
}

if (import.meta.main) {
  const matrix = readMatrix();
  if (!Deno.args.includes("--docs")) {
    const ids = new Set<string>();
    for (const app of matrix.apps) {
      const id = appId(matrix, app);
      ids.add(id);
      const dir = join(APPS_DIR, id);
      const pkg = `${JSON.stringify(appPackageJson(matrix, app), null, 2)}\n`;
      const changed = writeIfChanged(join(dir, "package.json"), pkg);
      const locked = existsSync(join(dir, "package-lock.json"));
      if (locked && !changed) continue;
      console.log(`--- ${id}: ${locked ? "updating" : "resolving"} its lockfile`);
      const code = await inherit("npm", [
        "install",
        "--package-lock-only",
        "--ignore-scripts",
        "--no-audit",
        "--no-fund",
        "--loglevel=error",
      ], dir);
      if (code !== 0) {
        console.error(`${id}: npm could not resolve the set (exit ${code})`);
        Deno.exit(1);
      }
    }
    for (const name of existsSync(APPS_DIR) ? readdirSync(APPS_DIR) : []) {
      if (!ids.has(name)) {
        console.log(`--- ${name}: no longer in the matrix, removed`);
        rmSync(join(APPS_DIR, name), { recursive: true, force: true });
      }
    }
  }
  const wrote = writeIfChanged(DOC_FILE, renderCompatibilityDoc(matrix));
  console.log(`${DOC_FILE.replace(`${ROOT}/`, "")}: ${wrote ? "rewritten" : "up to date"}`);
}
