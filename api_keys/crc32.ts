/**
 * CRC-32 (IEEE 802.3, the zlib polynomial) over the char codes of an ASCII
 * string, used as the checksum of API keys.
 *
 * @module
 */

const TABLE: Uint32Array = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/**
 * CRC-32 of the low byte of each char code of `text` (exact for ASCII), up
 * to `end` (default: the whole text).
 *
 * @example
 * ```ts
 * import { crc32Ascii } from "./crc32.ts";
 * crc32Ascii("123456789").toString(16); // "cbf43926"
 * ```
 */
export function crc32Ascii(text: string, end: number = text.length): number {
  let crc = 0xffffffff;
  for (let i = 0; i < end; i++) {
    crc = TABLE[(crc ^ text.charCodeAt(i)) & 0xff] ^ (crc >>> 8);
  }
  return (crc ^ 0xffffffff) >>> 0;
}
