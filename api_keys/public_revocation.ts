/**
 * The core of a public revocation endpoint: anyone may report a key; the
 * answer is the same fixed `202` for every report, given before any work, and
 * the key is verified and revoked afterwards from a bounded queue.
 *
 * @module
 */
import {
  bodyBytes,
  compileLeakCore,
  jsonResponse,
  optionalFunction,
  positiveInteger,
  revokeExposedKey,
} from "./_leak_core.ts";
import { generateKey } from "./key_format.ts";
import type {
  LeakedKeyHandlerOptions,
  LeakReportHandler,
  LeakReportRequest,
  LeakReportResponse,
} from "./leaked_keys.ts";

/**
 * Options of `createPublicRevocationHandler`.
 *
 * @example
 * ```ts
 * import type { PublicRevocationOptions } from "./public_revocation.ts";
 * import { ApiKeysService } from "./service.ts";
 * import { InMemoryApiKeyStorage } from "./in_memory_storage.ts";
 * const options: PublicRevocationOptions = {
 *   service: new ApiKeysService({
 *     peppers: { 1: "a-pepper-of-at-least-thirty-two-bytes" },
 *     storage: new InMemoryApiKeyStorage(),
 *   }),
 *   maxQueued: 500,
 * };
 * ```
 */
export interface PublicRevocationOptions extends LeakedKeyHandlerOptions {
  /** Reports waiting at most (default 1,000); a report past it is answered the same and dropped. */
  maxQueued?: number;
  /** Largest body read, in bytes (default 4,096); a larger one is handled as no key. */
  maxBodyBytes?: number;
  /**
   * Receives the failure of a queued report (a storage error; never key
   * material). Default: one console warning, then silence.
   */
  onError?: (error: unknown) => void;
}

/**
 * The handler: call it per request; `drain()` resolves once every queued
 * report is done (for shutdown and tests).
 *
 * @example
 * ```ts
 * import type { PublicRevocationHandler } from "./public_revocation.ts";
 * async function shutdown(handler: PublicRevocationHandler) {
 *   await handler.drain();
 * }
 * ```
 */
export interface PublicRevocationHandler extends LeakReportHandler {
  /** Answers the fixed `202` and queues the report. */
  (request: LeakReportRequest): Promise<LeakReportResponse>;
  /** Resolves when the queue is empty and no report is in progress. */
  drain(): Promise<void>;
}

/** The one answer of every report. */
const ACCEPTED_BODY = JSON.stringify({
  success: true,
  statusCode: 202,
  data: { status: "received" },
});
/** Longest content type kept. */
const MAX_CONTENT_TYPE_LENGTH = 128;

interface Report {
  body: Uint8Array<ArrayBuffer>;
  contentType: string;
}

/**
 * The key a report names: `{"key": "..."}` for `application/json`,
 * `key=...` for `application/x-www-form-urlencoded`, else the whole body
 * trimmed. `""` when there is none.
 */
function reportedKey({ body, contentType }: Report): string {
  const text = new TextDecoder().decode(body);
  if (contentType.startsWith("application/json")) {
    try {
      const key = (JSON.parse(text) as { key?: unknown } | null)?.key;
      return typeof key === "string" ? key : "";
    } catch {
      return "";
    }
  }
  if (contentType.startsWith("application/x-www-form-urlencoded")) {
    return new URLSearchParams(text).get("key") ?? "";
  }
  return text.trim();
}

/**
 * Builds the handler of public key reports. Every report gets the same `202`
 * (same status, headers and body) at once, whether the key exists, is unknown
 * or is not a key at all; nothing in the answer depends on the input. After
 * the answer, a queue (at most `maxQueued` waiting, one at a time) verifies
 * each report with the service; a report that is not a well-formed key of the
 * namespace in one of the service's layouts is replaced by a random well-formed key drawn once per handler
 * (so the substitution costs nothing per report): every report costs the same
 * verification (one prefix lookup, one HMAC). A key that verifies emits
 * `api_key.exposed` (`source: "public_report"`, `url: null`) and is revoked.
 * Rate-limit the route in the app (see docs/security.md, "Leaked keys").
 *
 * @example
 * ```ts
 * import { createPublicRevocationHandler } from "./public_revocation.ts";
 * import { ApiKeysService } from "./service.ts";
 * import { InMemoryApiKeyStorage } from "./in_memory_storage.ts";
 *
 * const service = new ApiKeysService({
 *   peppers: { 1: "a-pepper-of-at-least-thirty-two-bytes" },
 *   storage: new InMemoryApiKeyStorage(),
 * });
 * const report = createPublicRevocationHandler({ service });
 * const { key } = await service.create({
 *   tenantId: "t1", name: "ci", scopes: [{ resource: "orders", level: "read" }],
 * });
 * const response = await report({ body: key, headers: () => undefined });
 * response.status; // 202
 * await report.drain(); // the key is revoked now
 * ```
 */
export function createPublicRevocationHandler(
  options: PublicRevocationOptions,
): PublicRevocationHandler {
  const label = "PublicRevocationOptions";
  const core = compileLeakCore(options, label);
  const maxQueued = positiveInteger(options.maxQueued, 1_000, `${label}.maxQueued`);
  const maxBodyBytes = positiveInteger(options.maxBodyBytes, 4_096, `${label}.maxBodyBytes`);
  optionalFunction(options.onError, `${label}.onError`);
  const onError = options.onError;
  /** Verified in place of a report that names no key of the namespace. */
  const standIn = generateKey({ environment: "live", namespace: core.service.namespace }).raw;
  const queue: Report[] = [];
  let running: Promise<void> | undefined;
  let warned = false;

  const fail = (error: unknown): void => {
    if (onError !== undefined) {
      try {
        onError(error);
      } catch {
        // the error handler itself failed: nothing left to tell
      }
    } else if (!warned) {
      warned = true;
      const name = error instanceof Error ? error.name : typeof error;
      console.warn(`api-keys: a public revocation report failed (${name}); further are not logged`);
    }
  };

  async function work(): Promise<void> {
    // A later task: the answer is on its way before any verification starts.
    await new Promise((resolve) => setTimeout(resolve, 0));
    for (let report = queue.shift(); report !== undefined; report = queue.shift()) {
      const candidate = reportedKey(report);
      const key = core.isServiceKey(candidate) ? candidate : standIn;
      try {
        await revokeExposedKey(core, key, "public_report", null);
      } catch (error) {
        fail(error);
      }
    }
  }

  function start(): void {
    running ??= work().finally(() => {
      running = undefined;
      if (queue.length > 0) start();
    });
  }

  const handler = (request: LeakReportRequest): Promise<LeakReportResponse> => {
    if (queue.length < maxQueued) {
      let report: Report = { body: new Uint8Array(0), contentType: "" };
      try {
        const contentType = request.headers("content-type");
        report = {
          body: bodyBytes(request.body, maxBodyBytes) ?? new Uint8Array(0),
          contentType: typeof contentType === "string"
            ? contentType.slice(0, MAX_CONTENT_TYPE_LENGTH).toLowerCase()
            : "",
        };
      } catch {
        // an unreadable request is a report of no key: the same work, the same answer
      }
      queue.push(report);
      start();
    }
    return Promise.resolve(jsonResponse(202, ACCEPTED_BODY));
  };
  return Object.assign(handler, {
    maxBodyBytes,
    async drain(): Promise<void> {
      while (running !== undefined) await running;
    },
  });
}
