/**
 * The rule for text the library stores or sends in UTF-8 (PostgreSQL, Redis):
 * no lone surrogate. A leaf shared by the api-keys and rate-limits cores.
 *
 * @module
 */

/** `String.prototype.isWellFormed` (ES2024: Node 20+, Deno, Bun), which the npm build's ES2023 types lack. */
type WellFormed = { isWellFormed(): boolean };

/**
 * Whether `text` holds a lone surrogate, which UTF-8 sends as U+FFFD (so two
 * texts would read as one) and PostgreSQL's `jsonb` refuses. The runtime's
 * `isWellFormed` answers a text of Latin-1 characters without reading it (a
 * check's subject, read on every check).
 *
 * @example
 * ```ts
 * import { hasLoneSurrogate } from "./_text.ts";
 * hasLoneSurrogate("user-\uD800"); // true
 * ```
 */
export function hasLoneSurrogate(text: string): boolean {
  return !(text as unknown as WellFormed).isWellFormed();
}
