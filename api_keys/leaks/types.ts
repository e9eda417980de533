/**
 * Shared types of the leaked-key handlers (the GitHub secret-scanning partner
 * endpoint and the public revocation endpoint): a framework-free request and
 * response and the options both take (`api_key.exposed` is in `events.ts`).
 *
 * @module
 */
import type { ApiKeyExposedEvent } from "../events.ts";
import type { ApiKeysService } from "../service.ts";

/**
 * A request as the handlers read it. `headers` looks a header up
 * case-insensitively (`Headers.get` of the Fetch API fits).
 */
export interface LeakReportRequest {
  /** The raw body: the exact bytes received (a string is encoded as UTF-8). */
  body: Uint8Array | string;
  /** Case-insensitive header lookup. */
  headers: (name: string) => string | null | undefined;
}

/** What a handler answers; a binding writes it out as is. */
export interface LeakReportResponse {
  /** HTTP status. */
  status: number;
  /** Response headers. */
  headers: Record<string, string>;
  /** JSON body. */
  body: string;
}

/**
 * A leaked-key handler (`createSecretScanningPartnerHandler`,
 * `createPublicRevocationHandler`): call it per request. `maxBodyBytes` is the
 * largest body it reads, so a binding reads at most one byte more (the handler
 * then answers as it does for any body too large).
 */
export interface LeakReportHandler {
  /** Answers one report. */
  (request: LeakReportRequest): Promise<LeakReportResponse>;
  /** Largest body the handler reads, in bytes. */
  readonly maxBodyBytes: number;
  /**
   * The answer to a request its headers alone refuse (the partner handler's
   * 401 without signature headers), else `undefined`: a binding asks before
   * reading the body, so an unsigned request costs no read. The handler
   * answers the same itself.
   */
  readonly refuse?: (headers: LeakReportRequest["headers"]) => LeakReportResponse | undefined;
}

/**
 * The service whose keys the handlers check and revoke: an `ApiKeysService`
 * (checked at construction). A reported key is verified with the work of
 * `verify` but records no use (no `lastUsedAt`, `api_key.used`, metric,
 * `onAuthFailed` or first use of a rotation), then revoked with `revoke`.
 */
export type LeakedKeyService = ApiKeysService;

/** Options both leaked-key handlers take. */
export interface LeakedKeyHandlerOptions {
  /** The service whose keys are reported. */
  service: LeakedKeyService;
  /**
   * Also receives `api_key.exposed` (sync or async; never awaited). The
   * service's `onEvent` receives it anyway, before `api_key.revoked`: give
   * here only a different sink (the `onEvent` sink here too gets it twice).
   */
  onExposed?: (event: ApiKeyExposedEvent) => void | Promise<void>;
  /** Receives errors of `onExposed` (default: one console warning, then silence). */
  onExposedError?: (error: unknown, event: ApiKeyExposedEvent) => void;
  /**
   * Wall clock of event times (default `() => new Date()`), read before a
   * revoke: answering anything but a valid `Date` (or throwing) fails the
   * report with nothing revoked.
   */
  clock?: () => Date;
}
