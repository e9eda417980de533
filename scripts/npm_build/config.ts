/**
 * What the npm build reads from the repository: `deno.json` metadata, the
 * entry points, and the peer dependencies (from the compatibility matrix).
 *
 * @module
 */

import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Matrix, peerRanges } from "../../tests/consumers/matrix.ts";

/** Repository root (two levels above this file). */
export const ROOT: string = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** Output folder of the npm package: `npm/`, or `API_KIT_NPM_OUT` (a private build, ./fresh.ts). */
export const OUT_DIR: string = Deno.env.get("API_KIT_NPM_OUT") ?? join(ROOT, "npm");

/** Subset of `deno.json` the build uses. */
export interface DenoJson {
  /** Package name, e.g. `@saferoute/api-kit`. */
  name: string;
  /** Semver version. */
  version: string;
  /** SPDX license. */
  license: string;
  /** Optional description. */
  description?: string;
  /** Subpath → source file (`./mod.ts`). */
  exports: Record<string, string>;
  /** Bare name → `npm:name@x.y.z`. */
  imports: Record<string, string>;
}

/** Reads and returns `deno.json`. */
export function readDenoJson(): DenoJson {
  return JSON.parse(Deno.readTextFileSync(join(ROOT, "deno.json"))) as DenoJson;
}

/** Default description when `deno.json` has none. */
export const DEFAULT_DESCRIPTION =
  "API keys (peppered hashes, rotation, revocation, a Nest guard) and a uniform response " +
  "envelope (pagination, problem details, OpenAPI) for NestJS apps.";

/** The compatibility matrix: the tested version sets the peer ranges are derived from. */
export const MATRIX_FILE: string = join(ROOT, "tests", "consumers", "matrix.json");

/**
 * Packages a Node app provides itself, with their ranges: each the union of the majors the
 * compatibility matrix tests, from the lowest tested version of each (see `peerRanges`).
 * `optional` peers are needed only for the features that use them.
 */
export const PEERS: Record<string, { range: string; optional: boolean }> = peerRanges(
  JSON.parse(Deno.readTextFileSync(MATRIX_FILE)) as Matrix,
);

/**
 * Packages the tests use beside the library (the scenario suite's Hono app and
 * its Node server): never a dependency of the package, whatever it imports.
 */
export const TEST_ONLY_PACKAGES: readonly string[] = ["hono", "@hono/node-server"];

/**
 * The repository: `package.json`'s `repository`, `homepage` and `bugs`, and
 * the base of the packed README's links (the docs are not packed).
 */
export const REPOSITORY_URL = "https://github.com/saferoute/api-kit";

/** Files copied next to `package.json` (README.md with its links made absolute). */
export const COPIED_FILES: readonly string[] = ["README.md", "LICENSE", "CHANGELOG.md"];

/**
 * Folders copied whole next to `package.json`: `prisma/`, the Prisma schema and the numbered SQL
 * migrations users apply (docs/operations.md, "Migrations").
 */
export const COPIED_DIRS: readonly string[] = ["prisma"];

/** Pinned versions of the package linters, run through `npx`. */
export const PUBLINT = "publint@0.3.25";
/** `@arethetypeswrong/cli`, run through `npx`. */
export const ATTW = "@arethetypeswrong/cli@0.18.5";

/** Returns the exact version `deno.json` pins for a bare npm name, if any. */
export function pinnedVersion(deno: DenoJson, name: string): string | undefined {
  const target = deno.imports[name];
  const match = target?.match(/^npm:(?:@[^/]+\/)?[^@]+@(\d+\.\d+\.\d+.*)$/);
  return match?.[1];
}

/** Package name of a bare specifier: `@nestjs/common/x` → `@nestjs/common`. */
export function packageNameOf(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}
