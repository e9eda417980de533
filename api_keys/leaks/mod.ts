/**
 * Leaked-key intake: the GitHub secret-scanning partner handler, the public
 * revocation handler, GitHub's signing keys and the patterns to register.
 * Framework-free; `./api-keys/nest` and `./api-keys/fetch` serve the handlers.
 *
 * @example
 * ```ts
 * import { ApiKeysService, InMemoryApiKeyStorage } from "@saferoute/api-kit/api-keys";
 * import { createPublicRevocationHandler } from "@saferoute/api-kit/api-keys/leaks";
 *
 * const service = new ApiKeysService({
 *   peppers: { 1: "a-pepper-of-at-least-thirty-two-bytes" },
 *   storage: new InMemoryApiKeyStorage(),
 * });
 * const handle = createPublicRevocationHandler({ service });
 * const answer = await handle({ body: '{"key":"not-a-key"}', headers: () => null });
 * console.log(answer.status);
 * ```
 *
 * @module
 */
export type { ApiKeyExposedEvent } from "../events.ts";
export type {
  LeakedKeyHandlerOptions,
  LeakedKeyService,
  LeakReportHandler,
  LeakReportRequest,
  LeakReportResponse,
} from "./types.ts";
export {
  type SecretScanningPatterns,
  secretScanningPatterns,
  type SecretScanningPatternsOptions,
} from "./secret_scanning_patterns.ts";
export {
  githubSecretScanningKeyResolver,
  type GitHubSecretScanningKeyResolverOptions,
  type SecretScanningKeyResolver,
  type SecretScanningPublicKey,
} from "./github_public_keys.ts";
export {
  createSecretScanningPartnerHandler,
  SECRET_SCANNING_MAX_TOKENS,
  type SecretScanningPartnerOptions,
} from "./secret_scanning_partner.ts";
export {
  createPublicRevocationHandler,
  type PublicReportDrop,
  type PublicRevocationHandler,
  type PublicRevocationOptions,
  type PublicRevocationStats,
} from "./public_revocation.ts";
