/**
 * Base62 helpers: unbiased random strings from the platform CSPRNG and
 * fixed-width encoding of 32-bit integers.
 *
 * @module
 */

/** The base62 alphabet, digits then upper then lower case. */
export const BASE62_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** Largest multiple of 62 that fits in a byte: bytes at or above it are rejected. */
const REJECTION_LIMIT = 248;

/**
 * Returns `length` base62 characters drawn with `crypto.getRandomValues` and
 * rejection sampling (bytes >= 248 are discarded), so every character is
 * exactly uniform.
 */
export function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    const bytes = crypto.getRandomValues(new Uint8Array(length - out.length + 8));
    for (let i = 0; i < bytes.length && out.length < length; i++) {
      const byte = bytes[i];
      if (byte < REJECTION_LIMIT) out += BASE62_ALPHABET[byte % 62];
    }
  }
  return out;
}

/**
 * Encodes an unsigned 32-bit integer as exactly `width` base62 characters
 * (most significant first, zero-padded). Six characters hold any 32-bit value.
 */
export function encodeBase62Fixed(value: number, width: number): string {
  let rest = value >>> 0;
  let out = "";
  for (let i = 0; i < width; i++) {
    out = BASE62_ALPHABET[rest % 62] + out;
    rest = Math.floor(rest / 62);
  }
  return out;
}
