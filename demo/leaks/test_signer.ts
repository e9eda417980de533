/**
 * The demo's stand-in for GitHub's secret-scanning signer: an ECDSA P-256 key
 * pair generated at start. Its public key is what the partner endpoint
 * trusts; the smoke tour signs reports with it. A real deployment trusts
 * GitHub's keys (`githubSecretScanningKeyResolver()`) instead.
 *
 * @module
 */
import type { SecretScanningPublicKey } from "../../api_keys/mod.ts";

/** A local signer: the key list to trust, and `sign` for reports. */
export interface DemoSigner {
  /** The key id sent in `Github-Public-Key-Identifier`. */
  keyIdentifier: string;
  /** The public key, as GitHub's meta endpoint lists it. */
  publicKeys: SecretScanningPublicKey[];
  /** Base64 ASN.1 DER signature of `body` (`Github-Public-Key-Signature`). */
  sign(body: string): Promise<string>;
}

const base64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));

/** DER INTEGER of an unsigned big-endian number: minimal, with a 0x00 when the top bit is set. */
function derInteger(unsigned: Uint8Array): number[] {
  let start = 0;
  while (start < unsigned.length - 1 && unsigned[start] === 0) start++;
  const value = [...unsigned.subarray(start)];
  if (value[0] & 0x80) value.unshift(0);
  return [0x02, value.length, ...value];
}

/**
 * IEEE P1363 `r || s` (64 bytes, what Web Crypto signs) to ASN.1 DER
 * `SEQUENCE { r, s }` (what GitHub sends); also the tests' signer's, written
 * apart from the library's decoder.
 */
export function p1363ToDer(signature: Uint8Array): Uint8Array {
  const body = [...derInteger(signature.subarray(0, 32)), ...derInteger(signature.subarray(32))];
  return new Uint8Array([0x30, body.length, ...body]);
}

/** Generates a fresh key pair. */
export async function createDemoSigner(keyIdentifier = "demo-local-signer"): Promise<DemoSigner> {
  const pair = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, [
    "sign",
    "verify",
  ]);
  const spki = new Uint8Array(await crypto.subtle.exportKey("spki", pair.publicKey));
  const pem = `-----BEGIN PUBLIC KEY-----\n${base64(spki)}\n-----END PUBLIC KEY-----\n`;
  return {
    keyIdentifier,
    publicKeys: [{ key_identifier: keyIdentifier, key: pem, is_current: true }],
    async sign(body) {
      const p1363 = new Uint8Array(
        await crypto.subtle.sign(
          { name: "ECDSA", hash: "SHA-256" },
          pair.privateKey,
          new TextEncoder().encode(body),
        ),
      );
      return base64(p1363ToDer(p1363));
    },
  };
}
