/**
 * A text's digest in hex, through Web Crypto (every runtime): Redis names its
 * scripts by their SHA-1; a throttler key too long to be a subject counts as
 * its SHA-256.
 *
 * @module
 */

/**
 * The hex digest of `text` (UTF-8) by `algorithm`.
 *
 * @example
 * ```ts
 * import { hexDigest } from "./_hex_digest.ts";
 * await hexDigest("SHA-1", ""); // "da39a3ee5e6b4b0d3255bfef95601890afd80709"
 * ```
 */
export async function hexDigest(algorithm: "SHA-1" | "SHA-256", text: string): Promise<string> {
  const digest = await crypto.subtle.digest(algorithm, new TextEncoder().encode(text));
  let hex = "";
  for (const byte of new Uint8Array(digest)) hex += byte.toString(16).padStart(2, "0");
  return hex;
}
