/**
 * The proxies both demo servers trust: as if a reverse proxy on the loopback
 * interface sat in front of them.
 *
 * @module
 */

/**
 * The demo's proxies: their addresses, not a hop count, since the demo is
 * also reached directly (a hop count would trust the direct client's header).
 *
 * @example
 * ```ts
 * import { DEMO_TRUSTED_PROXIES } from "./proxies.ts";
 * DEMO_TRUSTED_PROXIES; // ["127.0.0.1", "::1"]
 * ```
 */
export const DEMO_TRUSTED_PROXIES: readonly string[] = Object.freeze(["127.0.0.1", "::1"]);
