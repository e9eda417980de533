/**
 * Entry guards of the npm build: an entry point whose code imports an optional
 * peer (`pg`, `@nestjs/swagger`, the Nest packages) checks, before anything
 * else loads, that each is installed, and throws one error naming the install
 * command instead of Node's bare "Cannot find module".
 *
 * CommonJS: the check runs first in the entry (`require` runs in order). ESM:
 * a static import fails while the graph links, before any code runs, so the
 * entry becomes a wrapper that checks with `import.meta.resolve`, then loads
 * the real entry (renamed `*.impl.js`) with `import()` and re-exports its
 * values by name.
 *
 * @module
 */

import ts from "typescript";
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { packageNameOf } from "./config.ts";

/** Static (linked) import and re-export specifiers of emitted JavaScript. */
function staticSpecifiers(code: string): string[] {
  const file = ts.createSourceFile("x.js", code, ts.ScriptTarget.Latest, false, ts.ScriptKind.JS);
  const found: string[] = [];
  for (const statement of file.statements) {
    if (
      (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) &&
      statement.moduleSpecifier !== undefined && ts.isStringLiteral(statement.moduleSpecifier)
    ) {
      found.push(statement.moduleSpecifier.text);
    }
  }
  return found;
}

/**
 * The optional peers an ESM file links, itself or through the relative
 * modules it imports statically (dynamic imports do not count: they load
 * only when used). `file` is absolute; the answer is sorted.
 */
export function linkedPeers(file: string, optional: ReadonlySet<string>): string[] {
  const peers = new Set<string>();
  const seen = new Set<string>();
  const queue = [file];
  while (queue.length > 0) {
    const current = queue.pop()!;
    if (seen.has(current) || !existsSync(current)) continue;
    seen.add(current);
    for (const specifier of staticSpecifiers(readFileSync(current, "utf8"))) {
      if (specifier.startsWith(".")) queue.push(join(dirname(current), specifier));
      else if (optional.has(packageNameOf(specifier))) peers.add(packageNameOf(specifier));
    }
  }
  return [...peers].sort();
}

/** The message of a missing peer: what needs it and the command that installs it. */
export function missingPeerMessage(entry: string, missing: readonly string[]): string {
  return `${entry} needs ${missing.join(", ")}, not installed: run \`npm install ${
    missing.join(" ")
  }\``;
}

/** Source that throws {@link missingPeerMessage} when a peer `resolve(name)` cannot find is missing. */
function checkSource(entry: string, peers: readonly string[], resolve: string, code: string) {
  const [head, listed, command] = missingPeerMessage(entry, ["\0"]).split("\0");
  return [
    `const missing = ${JSON.stringify(peers)}.filter((name) => {`,
    `  try { ${resolve}(name); return false; }`,
    `  catch (error) { return error?.code === ${JSON.stringify(code)}; }`,
    `});`,
    `if (missing.length > 0) {`,
    `  throw new Error(${JSON.stringify(head)} + missing.join(", ") + ${
      JSON.stringify(listed)
    } + missing.join(" ") + ${JSON.stringify(command)});`,
    `}`,
  ].join("\n");
}

/** The CommonJS entry with the check first (after `"use strict"`). */
export function guardCjs(code: string, entry: string, peers: readonly string[]): string {
  const check = `{\n${checkSource(entry, peers, "require.resolve", "MODULE_NOT_FOUND")}\n}\n`;
  const strict = /^"use strict";\n/;
  return strict.test(code) ? code.replace(strict, (head) => head + check) : check + code;
}

/** The ESM wrapper of `impl` (a sibling file name) re-exporting `names`. */
export function esmWrapper(
  impl: string,
  entry: string,
  peers: readonly string[],
  names: readonly string[],
): string {
  const values = names.filter((name) => name !== "default");
  return [
    `// Checks the optional peers ${peers.join(", ")} before loading ${entry}.`,
    checkSource(entry, peers, "import.meta.resolve", "ERR_MODULE_NOT_FOUND"),
    `const entry = await import(${JSON.stringify(`./${impl}`)});`,
    ...(values.length > 0 ? [`export const { ${values.join(", ")} } = entry;`] : []),
    ...(names.includes("default") ? ["export default entry.default;"] : []),
    "",
  ].join("\n");
}

/** One entry point to guard. */
export interface GuardedEntry {
  /** Subpath, e.g. `./api-keys/postgres`. */
  subpath: string;
  /** Output path without extension, e.g. `api_keys/postgres/mod`. */
  stem: string;
  /** Names of the values it exports. */
  names: readonly string[];
}

/**
 * Guards every entry of `outDir` (`esm/` and `cjs/` built) that links an
 * optional peer; returns `subpath → peers` for those guarded.
 */
export function guardEntries(
  outDir: string,
  packageName: string,
  entries: readonly GuardedEntry[],
  optional: ReadonlySet<string>,
): Record<string, string[]> {
  const guarded: Record<string, string[]> = {};
  for (const { subpath, stem, names } of entries) {
    const esm = join(outDir, "esm", `${stem}.js`);
    const peers = linkedPeers(esm, optional);
    if (peers.length === 0) continue;
    guarded[subpath] = peers;
    const entry = `${packageName}${subpath.slice(1)}`;
    const impl = `${stem}.impl.js`;
    renameSync(esm, join(outDir, "esm", impl));
    const sibling = relative(dirname(esm), join(outDir, "esm", impl));
    writeFileSync(esm, esmWrapper(sibling, entry, peers, names));
    const cjs = join(outDir, "cjs", `${stem}.js`);
    writeFileSync(cjs, guardCjs(readFileSync(cjs, "utf8"), entry, peers));
  }
  return guarded;
}
