/**
 * Builds the npm `package.json` from `deno.json` and the packages the emitted
 * files import. Pure: the same inputs give byte-identical output.
 *
 * @module
 */

import ts from "typescript";
import { builtinModules } from "node:module";
import {
  COPIED_DIRS,
  DEFAULT_DESCRIPTION,
  type DenoJson,
  packageNameOf,
  PEERS,
  pinnedVersion,
  REPOSITORY_URL,
  TEST_ONLY_PACKAGES,
} from "./config.ts";

/** Conditions of one subpath: ESM and CJS, each with its own declarations. */
export interface SubpathExport {
  /** ESM entry. */
  import: { types: string; default: string };
  /** CommonJS entry. */
  require: { types: string; default: string };
}

/** Output path of a source file: `./api_keys/mod.ts` → `api_keys/mod`. */
export function stem(source: string): string {
  return source.replace(/^\.\//, "").replace(/\.ts$/, "");
}

/** The `exports` map: one entry per `deno.json` subpath, `./package.json` last. */
export function exportsMap(deno: DenoJson): Record<string, SubpathExport | string> {
  const map: Record<string, SubpathExport | string> = {};
  for (const subpath of Object.keys(deno.exports).sort()) {
    const file = stem(deno.exports[subpath]);
    map[subpath] = {
      import: { types: `./esm/${file}.d.ts`, default: `./esm/${file}.js` },
      require: { types: `./cjs/${file}.d.ts`, default: `./cjs/${file}.js` },
    };
  }
  map["./package.json"] = "./package.json";
  return map;
}

/** `typesVersions` for TypeScript's `node10` resolution, which ignores `exports`. */
export function typesVersions(deno: DenoJson): Record<string, Record<string, string[]>> {
  const paths: Record<string, string[]> = {};
  for (const subpath of Object.keys(deno.exports).sort()) {
    if (subpath === ".") continue;
    paths[subpath.slice(2)] = [`./cjs/${stem(deno.exports[subpath])}.d.ts`];
  }
  return { "*": paths };
}

/** Returns a copy of `record` with keys in code-point order. */
function sorted<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : 1)));
}

/** Runtime and peer dependencies derived from the imported package names. */
export interface DependencySplit {
  /** Installed with the package. */
  dependencies: Record<string, string>;
  /** Provided by the app. */
  peerDependencies: Record<string, string>;
  /** Which peers are optional. */
  peerDependenciesMeta: Record<string, { optional: true }>;
}

/**
 * Splits imported packages into dependencies and peers. Every peer in
 * `PEERS` is declared whether or not it is imported yet; throws for an import
 * that `deno.json` does not pin, and for one of `TEST_ONLY_PACKAGES`.
 */
export function splitDependencies(deno: DenoJson, imported: Iterable<string>): DependencySplit {
  const dependencies: Record<string, string> = {};
  const peerDependencies: Record<string, string> = {};
  const peerDependenciesMeta: Record<string, { optional: true }> = {};
  for (const [name, peer] of Object.entries(PEERS)) {
    peerDependencies[name] = peer.range;
    if (peer.optional) peerDependenciesMeta[name] = { optional: true };
  }
  for (const specifier of imported) {
    const name = packageNameOf(specifier);
    if (name in PEERS) continue;
    if (TEST_ONLY_PACKAGES.includes(name)) {
      throw new Error(`the package imports "${specifier}", which only the tests may use`);
    }
    const version = pinnedVersion(deno, name);
    if (version === undefined) {
      throw new Error(`the package imports "${specifier}", which deno.json does not pin`);
    }
    dependencies[name] = `^${version}`;
  }
  return {
    dependencies: sorted(dependencies),
    peerDependencies: sorted(peerDependencies),
    peerDependenciesMeta: sorted(peerDependenciesMeta),
  };
}

/**
 * The complete `package.json` object, keys in a fixed order. `effectful`: the
 * built files (relative to `cjs/` and `esm/`) whose top level acts, e.g. defines
 * a custom element; `sideEffects` lists them in both formats, so a bundler keeps
 * them on a bare `import` and drops any other file nothing is read from.
 */
export function packageJson(
  deno: DenoJson,
  imported: Iterable<string>,
  effectful: readonly string[],
): Record<string, unknown> {
  const split = splitDependencies(deno, imported);
  const pkg: Record<string, unknown> = {
    name: deno.name,
    version: deno.version,
    description: deno.description ?? DEFAULT_DESCRIPTION,
    license: deno.license,
    repository: { type: "git", url: `git+${REPOSITORY_URL}.git` },
    homepage: `${REPOSITORY_URL}#readme`,
    bugs: { url: `${REPOSITORY_URL}/issues` },
    keywords: ["api-keys", "nestjs", "openapi", "problem-details", "response-envelope"],
    engines: { node: ">=20" },
    type: "commonjs",
    sideEffects: ["cjs", "esm"].flatMap((format) => effectful.map((file) => `./${format}/${file}`))
      .sort(),
    main: `./cjs/${stem(deno.exports["."])}.js`,
    module: `./esm/${stem(deno.exports["."])}.js`,
    types: `./cjs/${stem(deno.exports["."])}.d.ts`,
    exports: exportsMap(deno),
    typesVersions: typesVersions(deno),
    files: ["CHANGELOG.md", "cjs/", "esm/", ...COPIED_DIRS.map((dir) => `${dir}/`)],
  };
  if (Object.keys(split.dependencies).length > 0) pkg.dependencies = split.dependencies;
  pkg.peerDependencies = split.peerDependencies;
  pkg.peerDependenciesMeta = split.peerDependenciesMeta;
  return pkg;
}

/**
 * The README as packed: the tarball holds no docs, so each relative link
 * (`docs/x.md#y`, `LICENSE`) becomes an absolute link into the repository;
 * in-page anchors and absolute links are kept.
 */
export function packedReadme(markdown: string): string {
  return markdown.replace(
    /\]\((?!https?:|#|mailto:)([^)\s]+)\)/g,
    (_, target: string) => `](${REPOSITORY_URL}/blob/main/${target.replace(/^\.\//, "")})`,
  );
}

/**
 * Bare module specifiers (not relative, not Node built-ins) that emitted JS or
 * `.d.ts` text imports or requires. Comments (doc examples) are ignored.
 */
export function bareSpecifiers(code: string): string[] {
  const found = new Set<string>();
  const info = ts.preProcessFile(code, true, true);
  for (const { fileName } of [...info.importedFiles, ...info.typeReferenceDirectives]) {
    if (fileName.startsWith(".") || fileName.startsWith("/")) continue;
    if (fileName.startsWith("node:") || builtinModules.includes(fileName)) continue;
    if (fileName === "node") continue; // `/// <reference types="node" />`
    found.add(fileName);
  }
  return [...found].sort();
}
