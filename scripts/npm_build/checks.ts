/**
 * Checks of the built package: `publint`, `@arethetypeswrong/cli`, the
 * `npm pack --dry-run` file list, both module formats loading on Node, and the
 * declarations of its Node entry points compiling without the DOM library.
 *
 * @module
 */

import ts from "typescript";
import { join } from "node:path";
import { ATTW, COPIED_FILES, PUBLINT } from "./config.ts";
import { nodeTypesRoot } from "./compile.ts";
import { capture, inherit } from "./run.ts";

/** Files a user needs: declarations, JS, folder-level package.json, docs, schema, migrations. */
const ALLOWED = [
  /^package\.json$/,
  ...COPIED_FILES.map((file) => new RegExp(`^${file.replace(".", "\\.")}$`)),
  /^(esm|cjs)\/package\.json$/,
  /^(esm|cjs)\/.+\.(js|d\.ts)$/,
  /^prisma\/schema\.prisma$/,
  /^prisma\/migrations\/migration_lock\.toml$/,
  /^prisma\/migrations\/\d{4}_[a-z0-9_]+\/migration\.sql$/,
];

/** Returns the packed paths that are not in the allowed set. */
export function unexpectedPackedFiles(paths: string[]): string[] {
  return paths.filter((path) => !ALLOWED.some((pattern) => pattern.test(path)));
}

/** Runs `publint --strict`; returns an error message or undefined. */
export async function runPublint(dir: string): Promise<string | undefined> {
  console.log(`--- ${PUBLINT} --strict`);
  const code = await inherit("npx", ["--yes", PUBLINT, "--strict", "."], dir);
  return code === 0 ? undefined : `publint failed (exit ${code})`;
}

/** Runs `attw --pack` with the strict profile (node10, node16 CJS/ESM, bundler). */
export async function runAttw(dir: string): Promise<string | undefined> {
  console.log(`--- ${ATTW}: attw --pack`);
  const code = await inherit(
    "npx",
    ["--yes", "-p", ATTW, "attw", "--pack", ".", "--profile", "strict", "--format", "table"],
    dir,
  );
  return code === 0 ? undefined : `attw found problems (exit ${code})`;
}

/** Runs `npm pack --dry-run --json` and checks the file list; returns problems. */
export async function checkPackList(dir: string, expected: string[]): Promise<string[]> {
  console.log("--- npm pack --dry-run");
  const result = await capture("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], dir);
  if (result.code !== 0) return [`npm pack --dry-run failed: ${result.stderr}`];
  const [info] = JSON.parse(result.stdout) as [{ files: { path: string }[]; size: number }];
  const paths = info.files.map((file) => file.path).sort();
  const problems = unexpectedPackedFiles(paths).map((path) => `unexpected file in pack: ${path}`);
  for (const path of expected) {
    if (!paths.includes(path)) problems.push(`missing from pack: ${path}`);
  }
  console.log(`${paths.length} files, ${info.size} bytes packed`);
  return problems;
}

/**
 * Loads `./api-keys` on Node with `require` (CommonJS) and `import` (ESM) and
 * hashes with the synchronous `Sha256Hasher`, so its dependency
 * (`@noble/hashes`) loads in both formats, and `./client/elements` as a
 * server-rendered app does (no DOM: `defineApiKeysManager()` is a no-op);
 * returns problems.
 */
export async function checkBothFormatsLoad(dir: string): Promise<string[]> {
  console.log("--- require and import of ./api-keys and ./client/elements on Node");
  const use = `({ Sha256Hasher }) => {
    const hasher = new Sha256Hasher({ peppers: { 1: "p".repeat(32) } });
    if (hasher.verify("s", hasher.hash("s").hash, 1) !== true) process.exit(3);
  }`;
  // A server-rendered app imports the element on the server: no throw, no definition.
  const element = `({ defineApiKeysManager }) => defineApiKeysManager()`;
  const runs = {
    cjs: [
      "-e",
      `(${use})(require("./cjs/api_keys/mod.js")); (${element})(require("./cjs/client/elements/mod.js"))`,
    ],
    esm: [
      "--input-type=module",
      "-e",
      `(${use})(await import("./esm/api_keys/mod.js"));
      (${element})(await import("./esm/client/elements/mod.js"))`,
    ],
  };
  const problems: string[] = [];
  for (const [format, args] of Object.entries(runs)) {
    const result = await capture("node", args, dir);
    if (result.code !== 0) problems.push(`${format} build fails to load: ${result.stderr}`);
  }
  return problems;
}

/**
 * The server-side entry points whose declarations must compile in a Node app without the DOM
 * library (no peer needed: the Nest, OpenAPI and telemetry ones, and the browser client, apart).
 */
const NODE_ENTRY_DECLARATIONS = [
  "mod",
  "api_keys/mod",
  "api_keys/fetch/mod",
  "api_keys/leaks/mod",
  "api_keys/admin/mod",
  "api_keys/audit/mod",
  "api_keys/postgres/mod",
  "safe_response/mod",
  "safe_response/fetch/mod",
  "rate_limits/mod",
  "rate_limits/redis/mod",
  "rate_limits/postgres/mod",
];

/**
 * Compiles the ESM declarations of `NODE_ENTRY_DECLARATIONS` as a strict Node app does:
 * `lib: ["es2022"]`, `@types/node`, `skipLibCheck: false`, nodenext. A DOM-only type in them
 * (`TextEncoder`, `CryptoKey`, `HeadersInit`) fails such an app; returns problems.
 */
export function checkTypesWithoutDom(dir: string): string[] {
  console.log("--- the Node entry points' declarations without the DOM library");
  const program = ts.createProgram(
    NODE_ENTRY_DECLARATIONS.map((entry) => join(dir, "esm", `${entry}.d.ts`)),
    {
      lib: ["lib.es2022.d.ts"],
      types: ["node"],
      typeRoots: nodeTypesRoot(),
      skipLibCheck: false,
      strict: true,
      noEmit: true,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
    },
  );
  return ts.getPreEmitDiagnostics(program).map((diagnostic) =>
    `without the DOM library: ${
      diagnostic.file === undefined ? "" : `${diagnostic.file.fileName}: `
    }${ts.flattenDiagnosticMessageText(diagnostic.messageText, " ")}`
  );
}
