/**
 * The demo's peppers: `API_KEY_PEPPERS` when set, otherwise one random
 * 32-byte pepper made at start. Peppers are never printed.
 *
 * @module
 */
import { notAVersion, pepperVersionOf } from "../api_keys/hasher.ts";
import { DemoCliError } from "./cli.ts";

/** Peppers by version, as `ApiKeysModule.forRoot` takes them. */
export type DemoPeppers = Record<number, string>;

/** Where the peppers came from (printed instead of the peppers themselves). */
export type PepperSource = "env" | "random";

/** Peppers and their origin. */
export interface LoadedPeppers {
  /** Peppers by version. */
  peppers: DemoPeppers;
  /** `env` (from `API_KEY_PEPPERS`) or `random` (made for this run). */
  source: PepperSource;
}

function randomPepper(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes));
}

/**
 * Reads `API_KEY_PEPPERS` (a JSON object of version to secret). Without it,
 * returns a random pepper, unless `required` (PostgreSQL mode: keys must
 * still verify after a restart). Throws `DemoCliError` on bad JSON or a
 * version the library refuses (a key that may be a pepper never quoted); the
 * library checks lengths itself.
 *
 * @example
 * ```ts
 * import { loadPeppers } from "./peppers.ts";
 * loadPeppers(undefined, false).source; // "random"
 * ```
 */
export function loadPeppers(value: string | undefined, required: boolean): LoadedPeppers {
  if (value === undefined || value.trim() === "") {
    if (required) {
      throw new DemoCliError(
        'DATABASE_URL needs API_KEY_PEPPERS (JSON such as {"1":"<at least 32 bytes>"}): ' +
          "stored keys only verify with the pepper that hashed them",
      );
    }
    return { peppers: { 1: randomPepper() }, source: "random" };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new DemoCliError('API_KEY_PEPPERS must be JSON such as {"1":"<at least 32 bytes>"}');
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new DemoCliError("API_KEY_PEPPERS must be a JSON object of version to pepper");
  }
  const peppers: DemoPeppers = {};
  for (const [key, pepper] of Object.entries(parsed)) {
    const version = pepperVersionOf(key);
    if (version === undefined) throw new DemoCliError(notAVersion("API_KEY_PEPPERS", key));
    if (typeof pepper !== "string") {
      throw new DemoCliError(`API_KEY_PEPPERS version ${version} must be a string pepper`);
    }
    peppers[version] = pepper;
  }
  return { peppers, source: "env" };
}
