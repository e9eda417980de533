/**
 * API keys, runtime-neutral core: generation, peppered hashing, verification,
 * rotation, revocation, storage adapters. Imports nothing from Nest.
 *
 * @example
 * ```ts
 * import { ApiKeyError } from "@saferoute/api-kit/api-keys";
 * new ApiKeyError("api_key_missing").httpStatus; // 401
 * ```
 *
 * @module
 */
export * from "./types.ts";
export * from "./errors.ts";
