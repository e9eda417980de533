/**
 * SHA-256 (FIPS 180-4) in plain JavaScript, synchronous: the digest of the
 * legacy hash schemes. Web Crypto's `digest` is asynchronous, and an extra
 * await on legacy records would make their verification differ from the
 * current scheme's; this runs inside the same step. Inputs are short (a
 * secret and a pepper).
 *
 * @module
 */

const K = new Int32Array([
  0x428a2f98,
  0x71374491,
  0xb5c0fbcf,
  0xe9b5dba5,
  0x3956c25b,
  0x59f111f1,
  0x923f82a4,
  0xab1c5ed5,
  0xd807aa98,
  0x12835b01,
  0x243185be,
  0x550c7dc3,
  0x72be5d74,
  0x80deb1fe,
  0x9bdc06a7,
  0xc19bf174,
  0xe49b69c1,
  0xefbe4786,
  0x0fc19dc6,
  0x240ca1cc,
  0x2de92c6f,
  0x4a7484aa,
  0x5cb0a9dc,
  0x76f988da,
  0x983e5152,
  0xa831c66d,
  0xb00327c8,
  0xbf597fc7,
  0xc6e00bf3,
  0xd5a79147,
  0x06ca6351,
  0x14292967,
  0x27b70a85,
  0x2e1b2138,
  0x4d2c6dfc,
  0x53380d13,
  0x650a7354,
  0x766a0abb,
  0x81c2c92e,
  0x92722c85,
  0xa2bfe8a1,
  0xa81a664b,
  0xc24b8b70,
  0xc76c51a3,
  0xd192e819,
  0xd6990624,
  0xf40e3585,
  0x106aa070,
  0x19a4c116,
  0x1e376c08,
  0x2748774c,
  0x34b0bcb5,
  0x391c0cb3,
  0x4ed8aa4a,
  0x5b9cca4f,
  0x682e6ff3,
  0x748f82ee,
  0x78a5636f,
  0x84c87814,
  0x8cc70208,
  0x90befffa,
  0xa4506ceb,
  0xbef9a3f7,
  0xc67178f2,
]);
const INITIAL = new Int32Array([
  0x6a09e667,
  0xbb67ae85,
  0x3c6ef372,
  0xa54ff53a,
  0x510e527f,
  0x9b05688c,
  0x1f83d9ab,
  0x5be0cd19,
]);
const W = new Int32Array(64);

/** One compression of the 64-byte block of `bytes` at `offset` into `state`. */
function compress(state: Int32Array, bytes: Uint8Array, offset: number): void {
  for (let i = 0; i < 16; i++) {
    const j = offset + i * 4;
    W[i] = (bytes[j] << 24) | (bytes[j + 1] << 16) | (bytes[j + 2] << 8) | bytes[j + 3];
  }
  for (let i = 16; i < 64; i++) {
    const x = W[i - 15];
    const y = W[i - 2];
    const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
    const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
    W[i] = (W[i - 16] + s0 + W[i - 7] + s1) | 0;
  }
  let a = state[0], b = state[1], c = state[2], d = state[3];
  let e = state[4], f = state[5], g = state[6], h = state[7];
  for (let i = 0; i < 64; i++) {
    const s1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    const t1 = (h + s1 + ((e & f) ^ (~e & g)) + K[i] + W[i]) | 0;
    const s0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    const t2 = (s0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
    h = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  state[0] = (state[0] + a) | 0;
  state[1] = (state[1] + b) | 0;
  state[2] = (state[2] + c) | 0;
  state[3] = (state[3] + d) | 0;
  state[4] = (state[4] + e) | 0;
  state[5] = (state[5] + f) | 0;
  state[6] = (state[6] + g) | 0;
  state[7] = (state[7] + h) | 0;
}

/**
 * Number of 64-byte blocks SHA-256 compresses for a message of `length` bytes.
 *
 * @example
 * ```ts
 * import { sha256Blocks } from "./_sha256.ts";
 * sha256Blocks(55); // 1
 * sha256Blocks(56); // 2
 * ```
 */
export function sha256Blocks(length: number): number {
  return ((length + 8) >>> 6) + 1;
}

/**
 * SHA-256 of `first` followed by `second` (no copy of the two into one
 * message), then as many further compressions of a discarded state as
 * `minBlocks` asks beyond the message's own: callers equalise the work of
 * digests of different lengths.
 *
 * @example
 * ```ts
 * import { sha256 } from "./_sha256.ts";
 * const text = new TextEncoder().encode("abc");
 * sha256(text, new Uint8Array(0))[0].toString(16); // "ba"
 * ```
 */
export function sha256(first: Uint8Array, second: Uint8Array, minBlocks = 0): Uint8Array {
  const length = first.length + second.length;
  const blocks = sha256Blocks(length);
  const message = new Uint8Array(blocks * 64);
  message.set(first);
  message.set(second, first.length);
  message[length] = 0x80;
  const bits = length * 8;
  const end = message.length;
  message[end - 5] = Math.floor(bits / 2 ** 32) & 0xff;
  message[end - 4] = bits >>> 24;
  message[end - 3] = bits >>> 16;
  message[end - 2] = bits >>> 8;
  message[end - 1] = bits;
  const state = INITIAL.slice();
  for (let block = 0; block < blocks; block++) compress(state, message, block * 64);
  if (minBlocks > blocks) {
    const discarded = state.slice();
    for (let block = blocks; block < minBlocks; block++) compress(discarded, message, 0);
  }
  const out = new Uint8Array(32);
  for (let i = 0; i < 8; i++) {
    const word = state[i];
    out[i * 4] = word >>> 24;
    out[i * 4 + 1] = word >>> 16;
    out[i * 4 + 2] = word >>> 8;
    out[i * 4 + 3] = word;
  }
  return out;
}
