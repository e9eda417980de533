/**
 * Time-ordered UUIDv7 ids (RFC 9562), the default record id factory, and the
 * one call of the factory (loaded with the create and import flows, not at
 * import).
 *
 * @module
 */
import { keyIdProblem } from "./_input.ts";

const HEX: string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

/** A new UUIDv7: 48-bit Unix milliseconds, then 74 random bits. */
export function uuidV7(now: number = Date.now()): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  let time = now;
  for (let i = 5; i >= 0; i--) {
    bytes[i] = time % 256;
    time = Math.floor(time / 256);
  }
  bytes[6] = 0x70 | (bytes[6] & 0x0f);
  bytes[8] = 0x80 | (bytes[8] & 0x3f);
  let out = "";
  for (let i = 0; i < 16; i++) {
    if (i === 4 || i === 6 || i === 8 || i === 10) out += "-";
    out += HEX[bytes[i]];
  }
  return out;
}

/**
 * A new record id from the `idFactory` option (default {@link uuidV7}); a
 * factory answering anything but a key id (`keyIdProblem`) is a `TypeError`.
 */
export function newRecordId(idFactory: (() => string) | undefined): string {
  const id = (idFactory ?? uuidV7)();
  const problem = keyIdProblem(id);
  if (problem !== undefined) {
    throw new TypeError(`ApiKeysServiceOptions.idFactory: the id ${problem}`);
  }
  return id;
}
