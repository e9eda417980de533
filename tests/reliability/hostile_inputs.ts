/**
 * Shared hostile-input generators of the reliability suite. Keys are built
 * deterministically from generated parts (no CSPRNG), so every run with the
 * same seed sees the same inputs.
 */
import fc from "fast-check";
import { BASE62_ALPHABET, encodeBase62Fixed } from "../../api_keys/_base62.ts";
import { crc32Ascii } from "../../api_keys/key_format.ts";
import { MAX_API_KEY_LENGTH } from "../../api_keys/mod.ts";

/** Seed of every property in this suite (override with `FC_SEED` to explore). */
export const SEED = Number(globalThis.process?.env?.FC_SEED ?? 20_260_510);

/** Runs per property where the issue asks for at least 10,000. */
export const RUNS = 10_000;

/** One megabyte of text, built once. */
const MEGABYTE = 1 << 20;

export function checksumOf(body: string): string {
  return encodeBase62Fixed(crc32Ascii(body), 6);
}

const base62Char = fc.constantFrom(...BASE62_ALPHABET.split(""));
const base62 = (length: number) =>
  fc.string({ unit: base62Char, minLength: length, maxLength: length });

/** A well-formed key (valid checksum) of namespace `ak` unless given. */
export function keyOf(prefix: string, secret: string, env = "live", namespace = "ak"): string {
  const body = `${namespace}_${env}_${prefix}_${secret}`;
  return body + checksumOf(body);
}

/** Well-formed keys with a correct checksum (unknown to any storage). */
export const wellFormedKey: fc.Arbitrary<string> = fc
  .tuple(base62(12), base62(32), fc.constantFrom("live", "test"))
  .map(([prefix, secret, env]) => keyOf(prefix, secret, env));

/** `base` with the character at a generated index replaced by a different one. */
export function oneCharChanged(base: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc
    .tuple(base, fc.nat(), fc.string({ unit: "binary", minLength: 1, maxLength: 1 }))
    .map(([key, at, char]) => {
      const index = at % key.length;
      const replacement = char === key[index] ? (char === "x" ? "y" : "x") : char;
      return key.slice(0, index) + replacement + key.slice(index + 1);
    });
}

/** Valid layout whose checksum is wrong. */
export const badChecksumKey: fc.Arbitrary<string> = fc
  .tuple(base62(12), base62(32), base62(6), fc.constantFrom("live", "test"))
  .map(([prefix, secret, checksum, env]) => {
    const body = `ak_${env}_${prefix}_${secret}`;
    const right = checksumOf(body);
    return body + (checksum === right ? (right[0] === "0" ? "1" : "0") + right.slice(1) : checksum);
  });

/** Fixed huge strings (generating 10,000 one-megabyte strings would be slow). */
const HUGE = [
  "a".repeat(MEGABYTE),
  "\0".repeat(MEGABYTE),
  "ak_live_" + "A".repeat(MEGABYTE),
  ("ak_live_AAAAAAAAAAAA_" + "B".repeat(38) + ",").repeat(MEGABYTE / 64),
  "Bearer " + "x".repeat(MEGABYTE),
  "\r\n".repeat(MEGABYTE / 2),
  "\u{1F600}".repeat(MEGABYTE / 2),
];

const huge = fc.tuple(fc.constantFrom(...HUGE), fc.string({ maxLength: 4 })).map(
  ([text, tail]) => text + tail,
);

/** A key with something spliced in: NUL, CR/LF, spaces, Unicode. */
const spliced = fc
  .tuple(
    fc.oneof(wellFormedKey, badChecksumKey),
    fc.nat(),
    fc.constantFrom("\0", "\r\n", "\n", "\r", " ", "\t", "\u00a0", "\u200b", "\ufeff", ","),
  )
  .map(([key, at, insert]) => {
    const index = at % (key.length + 1);
    return key.slice(0, index) + insert + key.slice(index);
  });

/** A key with extra characters appended or prepended: longer than a valid key. */
export const overLongKey: fc.Arbitrary<string> = fc
  .tuple(wellFormedKey, fc.string({ unit: base62Char, minLength: 1, maxLength: 40 }), fc.boolean())
  .map(([key, extra, before]) => before ? extra + key : key + extra);

/** Every hostile string shape of the issue, weighted towards near-valid keys. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.string({ unit: "binary", maxLength: 120 }), weight: 3 },
  { arbitrary: fc.string({ unit: "grapheme", maxLength: 120 }), weight: 1 },
  {
    arbitrary: fc.string({
      unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
      maxLength: 90,
    }),
    weight: 2,
  },
  {
    arbitrary: fc.string({ unit: base62Char, minLength: 58, maxLength: MAX_API_KEY_LENGTH }),
    weight: 1,
  },
  { arbitrary: oneCharChanged(wellFormedKey), weight: 4 },
  { arbitrary: badChecksumKey, weight: 3 },
  { arbitrary: spliced, weight: 3 },
  { arbitrary: overLongKey, weight: 2 },
  { arbitrary: wellFormedKey.map((k) => k.replace(/^ak_/, "zz_")), weight: 1 },
  { arbitrary: wellFormedKey.map((k) => k.replace(/_(live|test)_/, "_prod_")), weight: 1 },
  { arbitrary: huge, weight: 1 },
);

/** Hostile non-string values a JavaScript caller could pass. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(null, undefined, 0, -1, NaN, Infinity, true, false, 1n, Symbol("k")),
  fc.anything({ maxDepth: 2 }),
  fc.constant({
    toString() {
      throw new Error("boom");
    },
  }),
  fc.constant(new String("ak_live_x")),
);

/** Whether `value` is longer than any valid key (or not a string at all). */
export function beyondKeyLength(value: unknown): boolean {
  return typeof value !== "string" || value.length > MAX_API_KEY_LENGTH;
}

/** Longest address or CIDR text the library reads; anything longer is refused unread. */
export const MAX_ADDRESS_TEXT = 64;

/** Fixed one-megabyte address-like strings, built once. */
const HUGE_ADDRESSES = [
  ":" + ".".repeat(MEGABYTE) + ":", // the shape that made the old dotted-tail pattern backtrack
  "::" + "1.".repeat(MEGABYTE / 2),
  "0:".repeat(MEGABYTE / 2) + "1",
  "1".repeat(MEGABYTE),
  "[" + "f:".repeat(MEGABYTE / 2) + "]:80",
];

/**
 * Address-like text longer than `MAX_ADDRESS_TEXT`: valid addresses padded
 * with whitespace or zeros, long runs of groups, octets and colons, and
 * megabyte-sized strings.
 */
export const oversizedAddress: fc.Arbitrary<string> = fc.oneof(
  fc.tuple(
    fc.constantFrom("10.0.0.1", "2001:db8::1", "::ffff:10.0.0.1", "10.0.0.0/8", "[::1]:80"),
    fc.integer({ min: MAX_ADDRESS_TEXT + 1, max: 4_096 }),
    fc.constantFrom(" ", "\t", "0"),
    fc.boolean(),
  ).map(([address, length, pad, before]) => {
    const padding = pad.repeat(length - address.length);
    return before ? padding + address : address + padding;
  }),
  fc.tuple(
    fc.constantFrom("0:", "1.", "ffff:", "::", ":.", ".", "1.2.3.4:", "\\"),
    fc.integer({ min: MAX_ADDRESS_TEXT, max: 20_000 }),
  ).map(([unit, count]) => unit.repeat(count) + "1"),
  fc.constantFrom(...HUGE_ADDRESSES),
);

/** Pieces of client-written forwarding headers that try to swallow what a proxy appends. */
const smugglingPiece: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '"',
    "\\",
    '\\"',
    "\\\\",
    ",",
    ", ",
    ";",
    "=",
    " ",
    "\t",
    "for=",
    "For=",
    "x=",
    'for="',
    'x="',
    '"\\',
    "[",
    "]",
    ":",
    "for=198.51.100.7",
    'for="[2001:db8::7]:4711"',
    "for=unknown",
    "for=_hidden",
    "\u0000",
    "\u0001",
    "\u007f",
    "\u00ff",
    "\u0100",
  ),
  fc.string({ unit: fc.constantFrom(...'for=";,\\ [].:_0123456789abcdef'), maxLength: 12 }),
);

/**
 * A client-written `Forwarded` or `X-Forwarded-For` value: unterminated
 * quotes, trailing backslashes inside quotes, stray quotes, escapes, commas,
 * semicolons and control characters, in any order.
 */
export const forwardingSmuggling: fc.Arbitrary<string> = fc
  .array(smugglingPiece, { maxLength: 16 })
  .map((pieces) => pieces.join(""));
