/**
 * Entry guards of the npm build: the CommonJS file of an entry point whose code
 * imports an optional peer (`pg`, `@nestjs/swagger`, the Nest packages) turns
 * Node's "Cannot find module" for one of them into an error naming the install
 * command, only once loading has failed: nothing is resolved on disk first, so
 * an app bundled with its peers (no node_modules beside it) loads.
 *
 * The ESM files stay as tsc emits them, plain static imports: a missing peer
 * fails while the graph links, before any code of the package could run, as
 * Node's `ERR_MODULE_NOT_FOUND` ("Cannot find package 'pg'"). A wrapper could
 * only catch it with a top-level `await import()`, which bundling to CommonJS
 * refuses.
 *
 * @module
 */

import ts from "typescript";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
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

/**
 * The CommonJS entry with its body in a `try`: an error loading it whose code is
 * `MODULE_NOT_FOUND` and whose message names one of `peers` (`Cannot find module 'pg'`)
 * becomes {@link missingPeerMessage} (Node's error as its `cause`), listing that peer and
 * the entry's others `require.resolve` cannot find either. Any other error passes as is.
 * Nothing is checked before loading, so a bundle holding the peers loads as it is.
 */
export function guardCjs(code: string, entry: string, peers: readonly string[]): string {
  const [head, listed, command] = missingPeerMessage(entry, ["\0"]).split("\0");
  const strict = /^"use strict";\n/;
  const body = code.replace(strict, "");
  return [
    ...(strict.test(code) ? ['"use strict";'] : []),
    "try {",
    body.trimEnd(),
    "} catch (error) {",
    `  const peers = ${JSON.stringify(peers)};`,
    `  const named = error?.code === "MODULE_NOT_FOUND" && typeof error.message === "string"`,
    "    ? peers.find((name) => error.message.includes(`'${name}'`) || error.message.includes(`'${name}/`))",
    "    : undefined;",
    "  if (named === undefined) throw error;",
    "  const missing = peers.filter((name) => {",
    "    if (name === named) return true;",
    "    try { require.resolve(name); return false; }",
    `    catch (failure) { return failure?.code === "MODULE_NOT_FOUND"; }`,
    "  });",
    `  throw new Error(${JSON.stringify(head)} + missing.join(", ") + ${
      JSON.stringify(listed)
    } + missing.join(" ") + ${JSON.stringify(command)}, { cause: error });`,
    "}",
    "",
  ].join("\n");
}

/** One entry point to guard. */
export interface GuardedEntry {
  /** Subpath, e.g. `./api-keys/postgres`. */
  subpath: string;
  /** Output path without extension, e.g. `api_keys/postgres/mod`. */
  stem: string;
}

/**
 * Guards the CommonJS file of every entry of `outDir` (`esm/` and `cjs/` built)
 * whose ESM file links an optional peer; returns `subpath → peers` for those guarded.
 */
export function guardEntries(
  outDir: string,
  packageName: string,
  entries: readonly GuardedEntry[],
  optional: ReadonlySet<string>,
): Record<string, string[]> {
  const guarded: Record<string, string[]> = {};
  for (const { subpath, stem } of entries) {
    const peers = linkedPeers(join(outDir, "esm", `${stem}.js`), optional);
    if (peers.length === 0) continue;
    guarded[subpath] = peers;
    const cjs = join(outDir, "cjs", `${stem}.js`);
    writeFileSync(
      cjs,
      guardCjs(readFileSync(cjs, "utf8"), `${packageName}${subpath.slice(1)}`, peers),
    );
  }
  return guarded;
}
