/**
 * The demo's leaked-key handlers, built once here for both demos (Nest and
 * Fetch): the public revocation handler (the page's "report a leaked key"
 * form posts to it) and GitHub's secret-scanning partner handler, trusting
 * `publicKeys` (the local test signer's in the demo, see `test_signer.ts`).
 * Both demos mount them at {@link LEAK_ROUTES}, outside the API-key check.
 *
 * @module
 */
import {
  type ApiKeysService,
  createPublicRevocationHandler,
  createSecretScanningPartnerHandler,
  type LeakReportHandler,
  type PublicRevocationHandler,
  type SecretScanningPublicKey,
} from "../../api_keys/mod.ts";

/** Where both demos serve the leaked-key handlers (`POST`). */
export const LEAK_ROUTES = {
  /** Anyone reports a key: always the same 202; revoked afterwards when genuine. */
  report: "/api/leaked-keys",
  /** GitHub's signed report (in the demo, signed by the local signer). */
  partner: "/api/github/secret-scanning",
} as const;

/** The two handlers of the demo. */
export interface DemoLeakHandlers {
  /** Public revocation (`LEAK_ROUTES.report`). */
  report: PublicRevocationHandler;
  /** GitHub's secret-scanning partner endpoint (`LEAK_ROUTES.partner`). */
  partner: LeakReportHandler;
}

/** Builds the demo's leaked-key handlers over `service`. */
export function createDemoLeakHandlers(
  service: ApiKeysService,
  publicKeys: readonly SecretScanningPublicKey[],
): DemoLeakHandlers {
  return {
    report: createPublicRevocationHandler({ service }),
    partner: createSecretScanningPartnerHandler({ service, publicKeys }),
  };
}
