/**
 * ECDSA P-256 / SHA-256 signatures as GitHub's secret scanning sends them:
 * base64 of an ASN.1 DER `SEQUENCE { INTEGER r, INTEGER s }`, verified with
 * Web Crypto after conversion to IEEE P1363 (`r || s`, 64 bytes). Public keys
 * are PEM SubjectPublicKeyInfo. Every parser here is bounded and linear.
 *
 * @module
 */

/** Bytes of one P-256 scalar. */
const SCALAR_BYTES = 32;
/** Longest DER signature: 2 + 2 * (2 + 33) bytes. */
const MAX_DER_BYTES = 2 + 2 * (2 + SCALAR_BYTES + 1);
/** Longest base64 text of a DER signature. */
const MAX_SIGNATURE_BASE64 = Math.ceil(MAX_DER_BYTES / 3) * 4;
/** Longest PEM public key accepted (a P-256 SPKI is 178 characters). */
const MAX_PEM_LENGTH = 4096;

const ALGORITHM = { name: "ECDSA", namedCurve: "P-256" } as const;
const SIGNATURE = { name: "ECDSA", hash: "SHA-256" } as const;
/** Canonical padded base64 (no whitespace). Linear: no alternative can backtrack far. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const PEM = /^-----BEGIN PUBLIC KEY-----([A-Za-z0-9+/=\r\n]+)-----END PUBLIC KEY-----$/;

/**
 * Decodes canonical padded base64 of at most `maxChars` characters; null when
 * malformed or too long.
 */
export function decodeBase64(text: string, maxChars: number): Uint8Array<ArrayBuffer> | null {
  if (typeof text !== "string" || text.length > maxChars || !BASE64.test(text)) return null;
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/**
 * Reads a strict DER INTEGER holding a positive P-256 scalar at `offset`:
 * minimal length, no sign bit, not zero, at most 32 value bytes.
 */
function readScalar(der: Uint8Array, offset: number): { value: Uint8Array; end: number } | null {
  if (der[offset] !== 0x02 || offset + 2 > der.length) return null;
  const length = der[offset + 1];
  let start = offset + 2;
  const end = start + length;
  if (length < 1 || end > der.length) return null;
  if (der[start] & 0x80) return null; // negative
  if (der[start] === 0) {
    // a leading zero only to clear the sign bit of the next byte (zero itself is invalid)
    if (length === 1 || !(der[start + 1] & 0x80)) return null;
    start++;
  }
  if (end - start > SCALAR_BYTES) return null;
  return { value: der.subarray(start, end), end };
}

/**
 * Converts a strict DER ECDSA P-256 signature to IEEE P1363 (`r || s`, 64
 * bytes); null for anything else (long form lengths, padding, trailing bytes,
 * negative or zero scalars, scalars over 32 bytes).
 */
export function derToP1363(der: Uint8Array): Uint8Array<ArrayBuffer> | null {
  if (der.length < 8 || der.length > MAX_DER_BYTES) return null;
  if (der[0] !== 0x30 || der[1] !== der.length - 2) return null;
  const r = readScalar(der, 2);
  if (r === null) return null;
  const s = readScalar(der, r.end);
  if (s === null || s.end !== der.length) return null;
  const out = new Uint8Array(2 * SCALAR_BYTES);
  out.set(r.value, SCALAR_BYTES - r.value.length);
  out.set(s.value, 2 * SCALAR_BYTES - s.value.length);
  return out;
}

/**
 * Imports a PEM `PUBLIC KEY` (SPKI) of curve P-256 for ECDSA verification.
 * Rejects with a `TypeError` (naming no key material) when malformed.
 */
export async function importP256PublicKeyPem(pem: string): Promise<CryptoKey> {
  const body = typeof pem === "string" && pem.length <= MAX_PEM_LENGTH
    ? PEM.exec(pem.trim())?.[1]
    : undefined;
  const der = body === undefined ? null : decodeBase64(body.replace(/[\r\n]/g, ""), MAX_PEM_LENGTH);
  if (der === null) throw new TypeError("public key is not a PEM PUBLIC KEY");
  try {
    return await crypto.subtle.importKey("spki", der, ALGORITHM, false, ["verify"]);
  } catch {
    throw new TypeError("public key is not an ECDSA P-256 key");
  }
}

/**
 * Whether `signatureBase64` (base64 DER) is a valid ECDSA P-256 / SHA-256
 * signature of `data` under `key`. A malformed signature is `false`.
 */
export async function verifyDerSignature(
  key: CryptoKey,
  signatureBase64: string,
  data: Uint8Array<ArrayBuffer>,
): Promise<boolean> {
  const der = decodeBase64(signatureBase64, MAX_SIGNATURE_BASE64);
  const signature = der === null ? null : derToP1363(der);
  if (signature === null) return false;
  return await crypto.subtle.verify(SIGNATURE, key, signature, data);
}
