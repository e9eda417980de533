/**
 * What the npm build reads from the repository: `deno.json` metadata, the
 * entry points, and the peer-dependency policy.
 *
 * @module
 */

import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** Repository root (two levels above this file). */
export const ROOT: string = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** Output folder of the npm package. */
export const OUT_DIR: string = join(ROOT, "npm");

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

/** Peer range of the Nest packages: the majors a consumer app tests. */
export const NEST_PEER_RANGE = "^11 || ^12";

/**
 * Packages a Node app provides itself. `optional` peers are needed only for
 * the features that use them; `range` overrides the range derived from the
 * pinned version in `deno.json`.
 */
export const PEERS: Record<string, { optional: boolean; range?: string }> = {
  "@nestjs/common": { optional: false, range: NEST_PEER_RANGE },
  "@nestjs/core": { optional: false, range: NEST_PEER_RANGE },
  "@nestjs/swagger": { optional: true, range: NEST_PEER_RANGE },
  "nestjs-cls": { optional: true },
  "nestjs-i18n": { optional: true },
  "pg": { optional: true },
  "reflect-metadata": { optional: false },
  "rxjs": { optional: false },
};

/** Files copied next to `package.json`. */
export const COPIED_FILES: readonly string[] = ["README.md", "LICENSE", "CHANGELOG.md"];

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

/** Caret range from a pinned version: `7.8.2` → `^7.8.0`, `0.2.2` → `^0.2.0`. */
export function caretRange(version: string): string {
  const [major, minor] = version.split(".");
  return `^${major}.${minor}.0`;
}

/** Package name of a bare specifier: `@nestjs/common/x` → `@nestjs/common`. */
export function packageNameOf(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}
