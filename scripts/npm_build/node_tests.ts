/**
 * `--test`: runs the unit tests on Node against the BUILT package. The tests
 * are compiled to ESM into a temporary tree that mirrors the repository; then
 * every file of `npm/esm/` is copied over the same path in that tree, so the
 * tests' relative imports of the sources (entry points and internal modules
 * alike) load the published JavaScript, not a fresh compile of the sources.
 *
 * @module
 */

import { copyFileSync, existsSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { compile, compilerOptions } from "./compile.ts";
import { OUT_DIR, ROOT } from "./config.ts";
import { inherit } from "./run.ts";

/**
 * Test folders left out of the Node run: suites that need services or browsers
 * (they have their own runners) and the demo's, which drive the Deno demo app.
 */
export const HEAVY_TEST_DIRS: readonly string[] = [
  "tests/demo",
  "tests/postgres",
  "tests/limits",
  "tests/fleet",
  "tests/browser",
  "tests/consumers",
  "tests/load",
  "tests/node",
];

/** Recursively lists files under `dir` (absolute paths, sorted). */
function walk(dir: string): string[] {
  const files: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (name === "node_modules") continue;
      files.push(...walk(path));
    } else {
      files.push(path);
    }
  }
  return files;
}

/**
 * Unit tests of the repository rather than the package, left out of the Node
 * run: its test tree holds the package's files, not the manual they check.
 */
const REPOSITORY_TESTS: readonly string[] = ["tests/docs_test.ts"];

/**
 * Tests whose app imports the package by its name (`@saferoute/api-kit/...`,
 * as a user's code does), which only the import map of deno.json resolves;
 * on Node the consumer apps (tests/consumers) install the packed package.
 */
const PACKAGE_NAME_TESTS: readonly string[] = ["tests/migration/app_test.ts"];

/** Whether a repository-relative path lies in a heavy test folder. */
function isHeavy(rel: string): boolean {
  return HEAVY_TEST_DIRS.some((dir) => rel === dir || rel.startsWith(`${dir}/`));
}

/** `tests/**\/*_test.ts` outside the heavy folders and `REPOSITORY_TESTS` (absolute paths). */
export function unitTestFiles(): string[] {
  return walk(join(ROOT, "tests"))
    .filter((path) => path.endsWith("_test.ts"))
    .filter((path) => !isHeavy(relative(ROOT, path)))
    .filter((path) => !REPOSITORY_TESTS.includes(relative(ROOT, path)))
    .filter((path) => !PACKAGE_NAME_TESTS.includes(relative(ROOT, path)));
}

/**
 * The type errors of the test build that name an API newer than the build's
 * `lib` (TS2550, TS2583: "Do you need to change your target library?"), such
 * as `Array.fromAsync`, which Node 20 lacks: such a test fails there only.
 */
export function newerThanNode(errors: readonly string[]): string[] {
  return errors.filter((error) => /\berror TS(?:2550|2583):/.test(error));
}

/** Top-level files tests may read beside the sources. */
const TOP_LEVEL_DATA = ["deno.json", "jsr.json", "README.md", "CHANGELOG.md", "LICENSE"];

/**
 * Repository-relative paths of the non-JavaScript files the test tree gets:
 * `TOP_LEVEL_DATA`, every file of the entry points' folders and of the unit
 * test folders (sources, fixtures).
 */
function dataFiles(): string[] {
  const deno = JSON.parse(Deno.readTextFileSync(join(ROOT, "deno.json"))) as {
    exports: Record<string, string>;
  };
  const files = new Set(TOP_LEVEL_DATA.filter((name) => existsSync(join(ROOT, name))));
  const dirs = new Set<string>(["tests"]);
  for (const source of Object.values(deno.exports)) {
    const [first, ...rest] = source.replace(/^\.\//, "").split("/");
    if (rest.length === 0) files.add(first);
    else dirs.add(first);
  }
  for (const dir of dirs) {
    for (const file of walk(join(ROOT, dir))) {
      const rel = relative(ROOT, file);
      if (!isHeavy(rel) && !rel.endsWith(".js")) files.add(rel);
    }
  }
  return [...files].sort();
}

/** Copies `from` to `to`, creating parent folders. */
function copy(from: string, to: string): void {
  mkdirSync(dirname(to), { recursive: true });
  copyFileSync(from, to);
}

/**
 * Compiles the unit tests, overlays the built ESM files, runs `node --test`
 * and prints Node's `# pass` / `# fail` summary. Returns Node's exit code.
 */
export async function runNodeTests(): Promise<number> {
  const tests = unitTestFiles();
  if (tests.length === 0) {
    console.error("no test files found");
    return 1;
  }
  const tree = await Deno.makeTempDir({ prefix: "api-kit-node-tests-" });
  console.log(`--- compiling ${tests.length} test files into ${tree}`);
  const { written, errors } = compile(tests, compilerOptions("esm", tree, false));
  if (errors.length > 0) {
    // `deno check` is the type gate; tsc sees Node's types instead of Deno's.
    console.warn(`tsc reported ${errors.length} type errors in the test build (emitted anyway):`);
    for (const error of errors.slice(0, 20)) console.warn(error);
  }
  const newer = newerThanNode(errors);
  if (newer.length > 0) {
    console.error(`the tests use ${newer.length} APIs newer than Node 20's:`);
    for (const error of newer) console.error(error);
    return 1;
  }

  const builtEsm = join(OUT_DIR, "esm");
  let overlaid = 0;
  for (const file of walk(builtEsm)) {
    const rel = relative(builtEsm, file);
    if (!rel.endsWith(".js")) continue;
    copy(file, join(tree, rel));
    overlaid++;
  }
  const fromSources = written.filter((rel) => !existsSync(join(builtEsm, rel)));
  const untested = fromSources.filter((rel) => !rel.startsWith("tests/"));
  console.log(`${overlaid} built files from npm/esm overlaid on the test tree`);
  if (untested.length > 0) {
    console.log(`not in the package, compiled from source: ${untested.join(", ")}`);
  }

  // Files tests read as data: metadata, fixtures, and the TypeScript sources
  // themselves (some tests type-check or scan them). Node only runs the `.js`.
  for (const rel of dataFiles()) copy(join(ROOT, rel), join(tree, rel));
  Deno.writeTextFileSync(join(tree, "package.json"), '{ "type": "module" }\n');
  Deno.symlinkSync(join(ROOT, "node_modules"), join(tree, "node_modules"), { type: "dir" });

  const compiled = tests.map((path) => relative(ROOT, path).replace(/\.ts$/, ".js"));
  const tap = join(tree, "report.tap");
  const version = (await new Deno.Command("node", { args: ["--version"] }).output()).stdout;
  console.log(
    `--- node ${new TextDecoder().decode(version).trim()} --test (${compiled.length} files)`,
  );
  const code = await inherit("node", [
    "--test",
    "--test-reporter=spec",
    "--test-reporter-destination=stdout",
    "--test-reporter=tap",
    `--test-reporter-destination=${tap}`,
    ...compiled,
  ], tree);

  const summary = Deno.readTextFileSync(tap).split("\n")
    .filter((line) => /^# (tests|suites|pass|fail|cancelled|skipped|todo) \d+$/.test(line));
  console.log(summary.join("\n"));
  if (code === 0) await Deno.remove(tree, { recursive: true });
  else console.log(`test tree kept for inspection: ${tree}`);
  return code;
}
