import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  decodeBase64,
  derToP1363,
  importP256PublicKeyPem,
  verifyDerSignature,
} from "../../../api_keys/leaks/_ecdsa_signature.ts";
import { createSigner, GITHUB_SAMPLE, p1363ToDer, p384PublicKeyPem } from "./github_signer.ts";
import { SEED } from "../../reliability/hostile_inputs.ts";

const encode = (text: string) => new TextEncoder().encode(text);
const der = (...bytes: number[]) => new Uint8Array(bytes);
const scalar = (length: number, first = 0x11) => [first, ...Array(length - 1).fill(0x22)];
const seq = (...parts: number[][]) => {
  const body = parts.flat();
  return der(0x30, body.length, ...body);
};
const int = (value: number[]) => [0x02, value.length, ...value];

describe("ECDSA P-256 signatures (GitHub's format)", () => {
  it("verifies the published GitHub sample and rejects it on any other body", async () => {
    const key = await importP256PublicKeyPem(GITHUB_SAMPLE.public_key_pem);
    const payload = encode(GITHUB_SAMPLE.payload);
    assert.equal(await verifyDerSignature(key, GITHUB_SAMPLE.signature, payload), true);
    assert.equal(
      await verifyDerSignature(key, GITHUB_SAMPLE.signature, encode(GITHUB_SAMPLE.payload + "\n")),
      false,
    );
    const tampered = GITHUB_SAMPLE.payload.replace("some_token", "some_tokeN");
    assert.equal(await verifyDerSignature(key, GITHUB_SAMPLE.signature, encode(tampered)), false);
  });

  it("verifies signatures of a locally generated key pair, and no other key's", async () => {
    const signer = await createSigner();
    const other = await createSigner();
    const key = await importP256PublicKeyPem(signer.pem);
    const otherKey = await importP256PublicKeyPem(other.pem);
    for (let i = 0; i < 20; i++) {
      const body = encode(JSON.stringify([{ token: `t${i}`, type: "x", url: "" }]));
      const signature = await signer.sign(body);
      assert.equal(await verifyDerSignature(key, signature, body), true);
      assert.equal(await verifyDerSignature(otherKey, signature, body), false);
      const flipped = body.slice();
      flipped[i % body.length] ^= 1;
      assert.equal(await verifyDerSignature(key, signature, flipped), false);
    }
  });

  it("converts strict DER to r || s, padding short scalars on the left", () => {
    const out = derToP1363(seq(int(scalar(32)), int([0, 0x80, ...scalar(31)])));
    assert.ok(out !== null);
    assert.deepEqual([...out.subarray(0, 32)], scalar(32));
    assert.deepEqual([...out.subarray(32)], [0x80, ...scalar(31)]);
    const short = derToP1363(seq(int([1]), int([2])));
    assert.deepEqual([...short!], [...Array(31).fill(0), 1, ...Array(31).fill(0), 2]);
  });

  it("round-trips every r || s through an independent DER encoder", () => {
    const scalarBytes = fc.uint8Array({ minLength: 32, maxLength: 32 }).filter((bytes) =>
      bytes.some((byte) => byte !== 0)
    );
    fc.assert(
      fc.property(scalarBytes, scalarBytes, (r, s) => {
        const p1363 = new Uint8Array([...r, ...s]);
        assert.deepEqual(derToP1363(p1363ToDer(p1363)), p1363);
      }),
      { seed: SEED, numRuns: 2_000 },
    );
  });

  it("rejects every non-strict or malformed encoding", () => {
    const good = [int(scalar(32)), int(scalar(32))] as const;
    const cases: [string, Uint8Array][] = [
      ["empty", der()],
      ["not a sequence", der(0x31, 6, 2, 1, 1, 2, 1, 1)],
      ["sequence length too long", der(0x30, 7, 2, 1, 1, 2, 1, 1)],
      ["long-form length", der(0x30, 0x81, 6, 2, 1, 1, 2, 1, 1)],
      ["trailing byte", der(...seq(...good), 0)],
      ["trailing byte inside", seq(...good, [0])],
      ["one integer", seq(good[0])],
      ["three integers", seq(...good, int([1]))],
      ["not an integer", seq([0x04, 1, 1], good[1])],
      ["zero length integer", seq([0x02, 0], good[1])],
      ["zero", seq(int([0]), good[1])],
      ["negative", seq(int([0x80, ...scalar(31)]), good[1])],
      ["needless leading zero", seq(int([0, 0x11]), good[1])],
      ["leading zero and 32 more bytes below 0x80", seq(int([0, ...scalar(32)]), good[1])],
      ["33 value bytes", seq(int([0, 0x80, ...scalar(32)]), good[1])],
      ["integer longer than the sequence", der(0x30, 6, 2, 9, 1, 2, 1, 1)],
      ["s overruns", der(0x30, 6, 2, 1, 1, 2, 2, 1)],
      ["over 72 bytes", new Uint8Array(73).fill(0x30)],
    ];
    for (const [name, bytes] of cases) assert.equal(derToP1363(bytes), null, name);
  });

  it("never throws on arbitrary bytes and accepts only what re-encodes to the same bytes", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 80 }), (bytes) => {
        const out = derToP1363(bytes);
        if (out !== null) assert.deepEqual(p1363ToDer(out), bytes);
      }),
      { seed: SEED, numRuns: 5_000 },
    );
  });

  it("decodes only canonical padded base64 within its bound", () => {
    assert.deepEqual([...decodeBase64("AAE=", 8)!], [0, 1]);
    for (const bad of ["AAE", "AA=E", "A===", "AAE=\n", " AAE=", "AA-_", "AAE=AAE="]) {
      assert.equal(decodeBase64(bad, 100), null, bad);
    }
    assert.equal(decodeBase64("AAAA".repeat(10), 39), null);
    assert.equal(decodeBase64(42 as unknown as string, 10), null);
  });

  it("refuses keys that are not PEM P-256 public keys without echoing them", async () => {
    const p384 = await p384PublicKeyPem();
    for (
      const pem of [
        p384,
        "garbage-secret",
        "-----BEGIN PUBLIC KEY-----\n!!\n-----END PUBLIC KEY-----",
        "x".repeat(10_000),
      ]
    ) {
      await assert.rejects(importP256PublicKeyPem(pem), (error: Error) => {
        assert.ok(error instanceof TypeError);
        assert.doesNotMatch(error.message, /garbage|BEGIN|!!/);
        return true;
      });
    }
  });

  it("answers false for a malformed or over-long signature header", async () => {
    const key = await importP256PublicKeyPem(GITHUB_SAMPLE.public_key_pem);
    const payload = encode(GITHUB_SAMPLE.payload);
    for (
      const signature of [
        "",
        "not base64!",
        GITHUB_SAMPLE.signature.slice(0, -4),
        GITHUB_SAMPLE.signature + "AAAA",
        "A".repeat(100_000),
      ]
    ) {
      assert.equal(await verifyDerSignature(key, signature, payload), false);
    }
  });
});
