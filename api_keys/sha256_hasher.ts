/**
 * The spec's synchronous hasher, `Sha256Hasher`, in a file of its own: it
 * loads `@noble/hashes` (HMAC, SHA-256), which the service's own hasher
 * (`WebCryptoSha256Hasher`, `./hasher.ts`) does not need at import.
 *
 * @module
 */
import { hmac } from "@noble/hashes/hmac";
import { sha256 } from "@noble/hashes/sha2";
import {
  digestsEqual,
  DUMMY_HASH,
  DUMMY_SIGNATURE,
  encoder,
  fromBase64Url,
  readHasherOptions,
  SHA256_HASHER_CONFIGS,
  toBase64Url,
  utf8,
} from "./hasher.ts";
import type { HashedSecret, HasherOptions } from "./types.ts";

/**
 * The spec's hasher: HMAC-SHA-256 over versioned peppers, synchronous
 * (`@noble/hashes`), so `if (!hasher.verify(...))` means what it says. Its
 * hashes and verdicts are `WebCryptoSha256Hasher`'s; `ApiKeysService` takes
 * one as its `hasher` option. Comparison is constant-time; an unknown version
 * or a malformed hash does the same work and answers false. The constructor
 * throws a `TypeError` naming the problem with the options.
 *
 * @example
 * ```ts
 * import { Sha256Hasher } from "./sha256_hasher.ts";
 * const hasher = new Sha256Hasher({ peppers: { 1: "a-pepper-of-at-least-thirty-two-bytes" } });
 * const { hash, pepperVersion } = hasher.hash("secret");
 * hasher.verify("secret", hash, pepperVersion); // true
 * ```
 */
export class Sha256Hasher {
  /** Version used for new hashes. */
  readonly currentVersion: number;
  readonly #macs = new Map<number, ReturnType<typeof hmac.create>>();

  /** Validates options; throws a `TypeError` naming the problem. */
  constructor(options: HasherOptions) {
    const config = readHasherOptions(options);
    this.currentVersion = config.currentVersion;
    for (const [version, pepper] of config.peppers) {
      this.#macs.set(version, hmac.create(sha256, encoder.encode(pepper)));
    }
    SHA256_HASHER_CONFIGS.set(this, config);
  }

  #mac(version: number, secret: string): Uint8Array {
    return this.#macs.get(version)!.clone().update(utf8(secret)).digest();
  }

  /** Hashes `secret` with the current pepper. */
  hash(secret: string): HashedSecret {
    const hash = toBase64Url(this.#mac(this.currentVersion, secret));
    return { hash, pepperVersion: this.currentVersion };
  }

  /** Whether `secret` hashes to `expectedHash` under `pepperVersion`. */
  verify(secret: string, expectedHash: string, pepperVersion: number): boolean {
    const expected = fromBase64Url(expectedHash);
    const known = this.#macs.has(pepperVersion);
    const actual = this.#mac(known ? pepperVersion : this.currentVersion, secret);
    return digestsEqual(actual, expected ?? DUMMY_SIGNATURE) && known && expected !== null;
  }

  /** Does the work of a real verify against nothing; always false. */
  dummyVerify(secret: string): boolean {
    return this.verify(secret, DUMMY_HASH, 0);
  }
}
