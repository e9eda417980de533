/**
 * The rule for text the library stores or sends in UTF-8 (PostgreSQL, Redis):
 * no lone surrogate. A leaf shared by the api-keys and rate-limits cores.
 *
 * @module
 */

/** A lone surrogate (with `u`, a surrogate pair is one code point, never matched). */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * Whether `text` holds a lone surrogate, which UTF-8 sends as U+FFFD (so two
 * texts would read as one) and PostgreSQL's `jsonb` refuses: not
 * `String.prototype.isWellFormed`, which the npm build's ES2023 types lack.
 *
 * @example
 * ```ts
 * import { hasLoneSurrogate } from "./_text.ts";
 * hasLoneSurrogate("user-\uD800"); // true
 * ```
 */
export function hasLoneSurrogate(text: string): boolean {
  return LONE_SURROGATE.test(text);
}
