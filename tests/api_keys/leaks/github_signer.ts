/**
 * A local stand-in for GitHub's secret-scanning signer: an ECDSA P-256 key
 * pair from Web Crypto, its PEM public key, and base64 DER signatures. The
 * DER encoder here is written independently of the one under test.
 */
import { readFileSync } from "node:fs";

/** The published sample: key id, PEM public key, payload and signature. */
export const GITHUB_SAMPLE = JSON.parse(
  readFileSync(new URL("./github_secret_scanning_sample.json", import.meta.url), "utf8"),
) as { key_identifier: string; public_key_pem: string; payload: string; signature: string };

function base64(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** DER INTEGER of an unsigned big-endian number: minimal, with a 0x00 when the top bit is set. */
function derInteger(unsigned: Uint8Array): number[] {
  let start = 0;
  while (start < unsigned.length - 1 && unsigned[start] === 0) start++;
  const value = [...unsigned.subarray(start)];
  if (value[0] & 0x80) value.unshift(0);
  return [0x02, value.length, ...value];
}

/** IEEE P1363 `r || s` (64 bytes) to ASN.1 DER `SEQUENCE { r, s }`. */
export function p1363ToDer(signature: Uint8Array): Uint8Array {
  const body = [...derInteger(signature.subarray(0, 32)), ...derInteger(signature.subarray(32))];
  return new Uint8Array([0x30, body.length, ...body]);
}

/** A PEM public key of curve P-384 (not usable for GitHub's P-256 signatures). */
export async function p384PublicKeyPem(): Promise<string> {
  const pair = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-384" }, true, [
    "sign",
    "verify",
  ]);
  const spki = new Uint8Array(await crypto.subtle.exportKey("spki", pair.publicKey));
  return `-----BEGIN PUBLIC KEY-----\n${base64(spki)}\n-----END PUBLIC KEY-----\n`;
}

/** A fresh signer with its key identifier and PEM public key. */
export async function createSigner(keyIdentifier = "local-test-key") {
  const pair = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, [
    "sign",
    "verify",
  ]);
  const spki = new Uint8Array(await crypto.subtle.exportKey("spki", pair.publicKey));
  const lines = base64(spki).match(/.{1,64}/g)!.join("\n");
  return {
    keyIdentifier,
    pem: `-----BEGIN PUBLIC KEY-----\n${lines}\n-----END PUBLIC KEY-----\n`,
    /** Base64 DER signature of `body`, as in `Github-Public-Key-Signature`. */
    async sign(body: string | Uint8Array): Promise<string> {
      const data = typeof body === "string" ? new TextEncoder().encode(body) : new Uint8Array(body);
      const p1363 = await crypto.subtle.sign(
        { name: "ECDSA", hash: "SHA-256" },
        pair.privateKey,
        data,
      );
      return base64(p1363ToDer(new Uint8Array(p1363)));
    },
  };
}
