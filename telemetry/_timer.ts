/**
 * The longest delay a timer arms. A leaf shared by the api-keys and
 * rate-limits cores and their bindings.
 *
 * @module
 */

/** Longest `setTimeout`/`setInterval` delay in ms: past it Node and Deno fire after 1 ms. */
export const MAX_TIMER_MS = 2 ** 31 - 1;
