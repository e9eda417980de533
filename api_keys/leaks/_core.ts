/**
 * What both leaked-key handlers share: option checks, the verify-then-revoke
 * step with its `api_key.exposed` event, and response building.
 *
 * @module
 */
import type { ApiKeyExposedEvent } from "../events.ts";
import type { LeakedKeyHandlerOptions, LeakedKeyService, LeakReportResponse } from "./types.ts";
import { createDispatcher, type Dispatch, failureLine, logLine, type Redact } from "../_sinks.ts";
import { callDetached } from "../../telemetry/_detached.ts";
import { serviceHooks } from "../_service_hooks.ts";
import { checkedClock } from "../_input.ts";
import type { ApiKeyEvent } from "../events.ts";
import type { ApiKeyContext } from "../types.ts";
import { MAX_TIMER_MS } from "../../telemetry/_timer.ts";

/** The checked common options of a handler. */
export interface LeakCore {
  /** The service. */
  service: LeakedKeyService;
  /**
   * Whether `token` is a key of the service's namespace in one of its layouts
   * (the current one, checksum checked, or a `legacyKeyLayouts` one): offline.
   */
  isServiceKey: (token: string) => boolean;
  /** The service's `onEvent` dispatcher, when it has one. */
  emitEvent: Dispatch<ApiKeyEvent> | undefined;
  /** The service's verify of a reported key, which records no use. */
  verifyReported: (rawKey: string) => Promise<ApiKeyContext>;
  /**
   * The service's revoke that calls back only when it won, and with its
   * write's settling when the write is still pending at the storage deadline.
   */
  revokeReported: (
    keyId: string,
    onRevoked: () => void,
    onLate: (settled: Promise<void>) => void,
  ) => Promise<void>;
  /** Key ids this process claimed for a report (see `revokeExposedKey`), shared per service. */
  claims: Claims;
  /** `onExposed` behind a dispatcher that contains its failures. */
  emitExposed: Dispatch<ApiKeyExposedEvent> | undefined;
  /** The service's redaction of a log line (all its key layouts). */
  redact: Redact;
  /** Wall clock; an injected one answering anything but a valid Date throws (see `checkedClock`). */
  clock: () => Date;
}

/**
 * What became of a reported key: `revoked` (it verified and this call revoked
 * it), `known` (its secret matched a key already revoked or expired, or one
 * deleted meanwhile), `unknown` (no key has this secret).
 */
export type ExposureOutcome = "revoked" | "known" | "unknown";

/** Throws a `TypeError` naming `label` unless `value` is omitted or a function. */
export function optionalFunction(value: unknown, label: string): void {
  if (value !== undefined && typeof value !== "function") {
    throw new TypeError(`${label} must be a function`);
  }
}

/**
 * `value` when it is a safe integer from 1 to `max`, `fallback` when omitted;
 * else a `TypeError` naming `label`.
 */
export function positiveInteger(
  value: unknown,
  fallback: number,
  label: string,
  max: number = Number.MAX_SAFE_INTEGER,
): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || (value as number) < 1) {
    throw new TypeError(`${label} must be a positive integer`);
  }
  if ((value as number) > max) throw new TypeError(`${label} must be at most ${max}`);
  return value as number;
}

/** `positiveInteger` of an option a timer arms: at most `MAX_TIMER_MS`. */
export function timerMs(value: unknown, fallback: number, label: string): number {
  return positiveInteger(value, fallback, label, MAX_TIMER_MS);
}

/** Most key ids remembered as claimed per service (the oldest is forgotten first). */
const MAX_CLAIMS = 10_000;

/**
 * Key ids a report of this process claimed: the revoke in flight (a later
 * report of the key shares its outcome, a failure too), then settled.
 */
type Claims = Map<string, Promise<void>>;

const claimsByService = new WeakMap<object, Claims>();

/** The claims of `service`, one map for all its handlers. */
function claimsOf(service: object): Claims {
  let claims = claimsByService.get(service);
  if (claims === undefined) claimsByService.set(service, claims = new Map());
  return claims;
}

/** Whether `error` says the key's record is gone (nothing left to revoke). */
const recordGone = (error: unknown) => verificationCode(error) === "api_key_record_not_found";

/** Checks the options every handler takes; throws a `TypeError` naming the option. */
export function compileLeakCore(options: LeakedKeyHandlerOptions, label: string): LeakCore {
  if (typeof options !== "object" || options === null) {
    throw new TypeError(`${label} must be an object`);
  }
  const service = options.service;
  const hooks = typeof service === "object" && service !== null ? serviceHooks(service) : undefined;
  if (hooks === undefined) throw new TypeError(`${label}.service must be an ApiKeysService`);
  optionalFunction(options.onExposed, `${label}.onExposed`);
  optionalFunction(options.onExposedError, `${label}.onExposedError`);
  optionalFunction(options.clock, `${label}.clock`);
  const redact = hooks.redact;
  return {
    service: options.service,
    isServiceKey: (token) => hooks.layouts.parse(token, service.namespace) !== null,
    emitEvent: hooks.emitEvent,
    verifyReported: hooks.verifyReported,
    revokeReported: hooks.revokeReported,
    claims: claimsOf(service),
    emitExposed: createDispatcher(
      options.onExposed,
      options.onExposedError,
      "onExposed",
      true,
      redact,
    ),
    redact,
    clock: options.clock === undefined
      ? () => new Date()
      : checkedClock(options.clock, `${label}.clock`),
  };
}

/** The `code` of an API-key verification failure (recognised by shape), if it is one. */
function verificationCode(error: unknown): string | undefined {
  const code = typeof error === "object" && error !== null
    ? (error as { code?: unknown }).code
    : undefined;
  return typeof code === "string" && code.startsWith("api_key_") ? code : undefined;
}

/**
 * Verifies `rawKey` with the service's work of a verify, recording no use (a
 * report is not a use: no `lastUsedAt`, metric or auth events); when it
 * verifies, revokes it, and only the report that revoked it (the
 * compare-and-set of `markRevokedIfActive`, and a claim per process and
 * service for storages without it) emits `api_key.exposed` (to the service's
 * `onEvent`, then `onExposed`) right before `api_key.revoked`. Storage
 * failures reject, as does a failing clock (before anything is written).
 */
export async function revokeExposedKey(
  core: LeakCore,
  rawKey: string,
  source: string,
  url: string | null,
): Promise<ExposureOutcome> {
  let context;
  try {
    context = await core.verifyReported(rawKey);
  } catch (error) {
    const code = verificationCode(error);
    if (code === "api_key_revoked" || code === "api_key_expired") return "known";
    if (code === "api_key_invalid" || code === "api_key_malformed") return "unknown";
    throw error;
  }
  const { claims } = core;
  const claimed = claims.get(context.keyId);
  if (claimed !== undefined) {
    // Another report's revoke: its outcome is this one's (a failure fails both: each is retried).
    try {
      await claimed;
    } catch (error) {
      if (!recordGone(error)) throw error;
    }
    return "known";
  }
  // Read before the revoke: a failing clock rejects the report with nothing written.
  const at = core.clock();
  if (claims.size >= MAX_CLAIMS) claims.delete(claims.keys().next().value!);
  let revoked = false;
  const exposed = (): void => {
    revoked = true;
    const event: ApiKeyExposedEvent = {
      type: "api_key.exposed",
      at,
      keyId: context.keyId,
      tenantId: context.tenantId,
      prefix: context.prefix,
      environment: context.environment,
      source,
      url,
    };
    core.emitEvent?.(event);
    core.emitExposed?.(event);
  };
  const { keyId } = context;
  // Set when the write is still pending at the storage deadline: it may land yet.
  let late: Promise<void> | undefined;
  const revoking = core.revokeReported(keyId, exposed, (settled) => late = settled);
  claims.set(keyId, revoking);
  try {
    await revoking;
  } catch (error) {
    if (late === undefined) {
      // Another report may claim it again: this one revoked nothing.
      if (claims.get(keyId) === revoking) claims.delete(keyId);
    } else {
      // Until the write settles, a report of the key shares this failure (no second revoke,
      // no second api_key.exposed); then one finds it revoked, or claims it again.
      void late.then(() => {
        if (claims.get(keyId) !== revoking) return;
        if (revoked) claims.set(keyId, Promise.resolve());
        else claims.delete(keyId);
      });
    }
    if (recordGone(error)) return "known";
    throw error;
  }
  return revoked ? "revoked" : "known";
}

const encoder = new TextEncoder();

/**
 * The bytes of a request body (a string is encoded as UTF-8), or null when
 * longer than `maxBytes` (checked before any copy or encoding of a long input).
 */
export function bodyBytes(
  body: Uint8Array | string,
  maxBytes: number,
): Uint8Array<ArrayBuffer> | null {
  if (typeof body === "string") {
    if (body.length > maxBytes) return null;
    const bytes = encoder.encode(body);
    return bytes.length > maxBytes ? null : bytes;
  }
  if (!(body instanceof Uint8Array)) {
    throw new TypeError("LeakReportRequest.body must be a Uint8Array or a string");
  }
  return body.length > maxBytes ? null : new Uint8Array(body);
}

/** A JSON response that is never cached. */
export function jsonResponse(status: number, body: string): LeakReportResponse {
  return {
    status,
    headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" },
    body,
  };
}

/** An error response in the shape of the error envelope. */
export function errorResponse(
  status: number,
  code: string,
  message: string,
  details?: Record<string, unknown>,
): LeakReportResponse {
  const error = details === undefined ? { code, message } : { code, message, details };
  return jsonResponse(status, JSON.stringify({ success: false, statusCode: status, error }));
}

/**
 * The failure sink of a leaked-key handler: `onError` (its throw or rejection ignored: nothing
 * left to tell), else one console warning naming `what` and the error's name, then silence.
 */
export function failureReporter(
  onError: ((error: unknown) => void) | undefined,
  what: string,
  redact: Redact,
): (error: unknown) => void {
  let warned = false;
  return (error) => {
    if (onError !== undefined) callDetached(onError, [error], () => {});
    else if (!warned) {
      warned = true;
      logLine(console.warn, `${failureLine(what, error, redact)}; further are not logged`);
    }
  };
}
