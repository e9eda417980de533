/**
 * A local stand-in for GitHub's secret-scanning signer: an ECDSA P-256 key
 * pair from Web Crypto, its PEM public key, and base64 DER signatures. The
 * DER encoder (`p1363ToDer`, the demo signer's: one home) is written
 * independently of the one under test.
 */
import { readFileSync } from "node:fs";
import { p1363ToDer } from "../../../demo/leaks/test_signer.ts";

export { p1363ToDer };

/** The published sample: key id, PEM public key, payload and signature. */
export const GITHUB_SAMPLE = JSON.parse(
  readFileSync(new URL("./github_secret_scanning_sample.json", import.meta.url), "utf8"),
) as { key_identifier: string; public_key_pem: string; payload: string; signature: string };

function base64(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
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
