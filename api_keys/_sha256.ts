/**
 * SHA-256 of `@noble/hashes`, loaded on first need rather than at import
 * (issue 41: `./api-keys/nest` stays light). Its users are the legacy hash
 * schemes of `WebCryptoSha256Hasher` and the counter subjects too long to keep
 * readable (`_limits.ts`); both start the load where they may come to need it
 * (a service with legacy layouts, a service with a limiter) and await it.
 *
 * @module
 */

/** Synchronous SHA-256 of bytes (`@noble/hashes/sha2`'s `sha256`). */
export type Sha256 = typeof import("@noble/hashes/sha2").sha256;

let loaded: Sha256 | undefined;
let loading: Promise<Sha256> | undefined;

/**
 * Loads SHA-256 once (a failed load is retried on the next call); resolves it.
 *
 * @example
 * ```ts
 * import { loadSha256 } from "./_sha256.ts";
 * const sha256 = await loadSha256();
 * sha256(new Uint8Array(0)).length; // 32
 * ```
 */
export function loadSha256(): Promise<Sha256> {
  loading ??= import("@noble/hashes/sha2").then(
    (module) => (loaded = module.sha256),
    (error) => {
      loading = undefined;
      throw error;
    },
  );
  return loading;
}

/**
 * SHA-256 when `loadSha256` has resolved, else `undefined` (the caller awaits
 * `loadSha256()` or fails closed).
 *
 * @example
 * ```ts
 * import { loadedSha256, loadSha256 } from "./_sha256.ts";
 * await loadSha256();
 * loadedSha256() !== undefined; // true
 * ```
 */
export function loadedSha256(): Sha256 | undefined {
  return loaded;
}
