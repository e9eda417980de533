/**
 * Builds the npm package into `npm/`: ESM (`npm/esm/`) and CommonJS
 * (`npm/cjs/`) with declarations beside each, compiled by the TypeScript
 * compiler API (`rewriteRelativeImportExtensions`; in CommonJS the package's
 * own files are required on first use, `npm_build/lazy_requires.ts`), plus `package.json`,
 * README, LICENSE, CHANGELOG and `prisma/` (the schema and the SQL migrations). Then checks
 * it with `publint`, `@arethetypeswrong/cli` and `npm pack --dry-run`.
 *
 * ```sh
 * deno run -A scripts/build_npm.ts               # build + checks
 * deno run -A scripts/build_npm.ts --test        # ... + unit tests on Node against npm/
 * deno run -A scripts/build_npm.ts --skip-checks # build only
 * ```
 *
 * The output is deterministic: same sources, same bytes. `package.json`'s
 * `buildId` is the digest of everything else built (printed at the end of the
 * build), so an installed copy tells which build it is.
 *
 * @module
 */

import { createHash } from "node:crypto";
import {
  copyFileSync,
  cpSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
} from "node:fs";
import { join, relative } from "node:path";
import {
  checkBothFormatsLoad,
  checkPackList,
  checkTypesWithoutDom,
  runAttw,
  runPublint,
} from "./npm_build/checks.ts";
import { compile, compilerOptions, type ModuleFormat } from "./npm_build/compile.ts";
import {
  COPIED_DIRS,
  COPIED_FILES,
  OUT_DIR,
  PEERS,
  readDenoJson,
  ROOT,
} from "./npm_build/config.ts";
import { runNodeTests } from "./npm_build/node_tests.ts";
import { effectfulFiles, lazyRequiresIn } from "./npm_build/lazy_requires.ts";
import { guardEntries } from "./npm_build/peer_guards.ts";
import { bareSpecifiers, packageJson, packedReadme, stem } from "./npm_build/package_json.ts";

/** Lists files under `dir`, relative to it, sorted. */
function listFiles(dir: string, base = dir): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...listFiles(path, base));
    else out.push(relative(base, path));
  }
  return out;
}

/** SHA-256 over every file's path and bytes under `dir`. */
function treeDigest(dir: string): string {
  const hash = createHash("sha256");
  for (const rel of listFiles(dir)) {
    hash.update(`${rel}\0`);
    hash.update(readFileSync(join(dir, rel)));
  }
  return hash.digest("hex");
}

/** Compiles the entry points in one module format; throws on type errors. */
function emit(format: ModuleFormat, entries: string[]): void {
  const outDir = join(OUT_DIR, format);
  const { written, errors } = compile(
    entries,
    compilerOptions(format, outDir, true),
  );
  if (errors.length > 0) {
    throw new Error(`tsc (${format}) reported ${errors.length} errors:\n${errors.join("\n")}`);
  }
  const type = format === "esm" ? "module" : "commonjs";
  Deno.writeTextFileSync(join(outDir, "package.json"), `${JSON.stringify({ type })}\n`);
  console.log(`${format}: ${written.length} files`);
}

/** Builds `npm/`; returns the package's expected entry files. */
function build(): string[] {
  const deno = readDenoJson();
  console.log(`--- building ${deno.name}@${deno.version} into npm/`);
  rmSync(OUT_DIR, { recursive: true, force: true });
  mkdirSync(OUT_DIR, { recursive: true });
  const entries = Object.values(deno.exports).sort().map((file) => join(ROOT, file));
  emit("esm", entries);
  emit("cjs", entries);
  const effectful = effectfulFiles(join(OUT_DIR, "cjs"));
  const late = lazyRequiresIn(
    join(OUT_DIR, "cjs"),
    new Set(Object.values(deno.exports).map((source) => `${stem(source)}.js`)),
  );
  console.log(`cjs: ${late} files require the package's own files on first use`);
  const optional = new Set(Object.keys(PEERS).filter((name) => PEERS[name].optional));
  const guarded = guardEntries(
    OUT_DIR,
    deno.name,
    Object.entries(deno.exports).map(([subpath, source]) => ({ subpath, stem: stem(source) })),
    optional,
  );
  for (const [subpath, peers] of Object.entries(guarded)) {
    console.log(
      `${subpath} (CommonJS): names the install command of ${peers.join(", ")} when missing`,
    );
  }

  const imported = new Set<string>();
  for (const rel of listFiles(join(OUT_DIR, "esm"))) {
    if (!rel.endsWith(".js") && !rel.endsWith(".d.ts")) continue;
    const code = Deno.readTextFileSync(join(OUT_DIR, "esm", rel));
    for (const specifier of bareSpecifiers(code)) imported.add(specifier);
  }
  const pkg = packageJson(deno, [...imported].sort(), effectful);
  const writePackageJson = () =>
    Deno.writeTextFileSync(join(OUT_DIR, "package.json"), `${JSON.stringify(pkg, null, 2)}\n`);
  writePackageJson();
  for (const file of COPIED_FILES) copyFileSync(join(ROOT, file), join(OUT_DIR, file));
  for (const dir of COPIED_DIRS) cpSync(join(ROOT, dir), join(OUT_DIR, dir), { recursive: true });
  const readme = Deno.readTextFileSync(join(ROOT, "README.md"));
  Deno.writeTextFileSync(join(OUT_DIR, "README.md"), packedReadme(readme));
  console.log(`imports: ${[...imported].sort().join(", ") || "(none)"}`);
  // The build's id: the digest of everything built, recorded in the package so an installed copy
  // tells which build it is (the consumer apps assert they run the tarball just packed).
  pkg.buildId = `sha256:${treeDigest(OUT_DIR)}`;
  writePackageJson();
  console.log(`npm/ build id ${pkg.buildId}`);

  const expected = [
    "package.json",
    ...COPIED_FILES,
    ...COPIED_DIRS.flatMap((dir) => listFiles(join(ROOT, dir)).map((rel) => `${dir}/${rel}`)),
  ];
  for (const source of Object.values(deno.exports).sort()) {
    for (const dir of ["esm", "cjs"]) {
      expected.push(`${dir}/${stem(source)}.js`, `${dir}/${stem(source)}.d.ts`);
    }
  }
  return expected;
}

/** Runs the package checks; returns the problems found. */
async function check(expected: string[]): Promise<string[]> {
  const problems: string[] = [];
  const publint = await runPublint(OUT_DIR);
  if (publint) problems.push(publint);
  const attw = await runAttw(OUT_DIR);
  if (attw) problems.push(attw);
  problems.push(...await checkPackList(OUT_DIR, expected));
  problems.push(...await checkBothFormatsLoad(OUT_DIR));
  problems.push(...checkTypesWithoutDom(OUT_DIR));
  return problems;
}

if (import.meta.main) {
  const args = new Set(Deno.args);
  let expected: string[];
  try {
    expected = build();
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    Deno.exit(1);
  }
  if (!args.has("--skip-checks")) {
    const problems = await check(expected);
    if (problems.length > 0) {
      for (const problem of problems) console.error(`build_npm: ${problem}`);
      Deno.exit(1);
    }
    console.log("package checks: publint, attw, pack list OK");
  }
  if (args.has("--test")) Deno.exit(await runNodeTests());
}
