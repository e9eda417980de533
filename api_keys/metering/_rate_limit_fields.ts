/**
 * The names of the IETF rate-limit fields (draft-ietf-httpapi-ratelimit-headers -08 to -11) an API
 * key's answers carry: written by `rateLimitHeaders`, read into `meta.rateLimit` by
 * `./safe-response` and documented by `./safe-response/openapi`.
 * @module
 */

/** `RateLimit`: each policy's remaining units and seconds to reset. */
export const RATE_LIMIT_FIELD = "RateLimit";

/** `RateLimit-Policy`: each policy's quota and window in seconds. */
export const RATE_LIMIT_POLICY_FIELD = "RateLimit-Policy";
