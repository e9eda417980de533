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
  failureReporter,
  jsonResponse,
  optionalFunction,
  positiveInteger,
  revokeExposedKey,
} from "./_core.ts";
import { generateKey } from "../key_format.ts";
import { createDispatcher } from "../_sinks.ts";
import type {
  LeakedKeyHandlerOptions,
  LeakReportHandler,
  LeakReportRequest,
  LeakReportResponse,
} from "./types.ts";

/** Options of `createPublicRevocationHandler`. */
export interface PublicRevocationOptions extends LeakedKeyHandlerOptions {
  /**
   * Distinct keys waiting at most (default 1,000); a report of a key already
   * waiting takes no place, a report past the limit is answered the same and
   * dropped (`onDropped`, `stats().dropped`).
   */
  maxQueued?: number;
  /** Receives each dropped report (sync or async; never awaited; carries no key material). */
  onDropped?: (drop: PublicReportDrop) => void | Promise<void>;
  /** Receives errors of `onDropped` (default: one console warning, then silence). */
  onDroppedError?: (error: unknown, drop: PublicReportDrop) => void;
  /** Largest body read, in bytes (default 4,096); a larger one is handled as no key. */
  maxBodyBytes?: number;
  /**
   * Receives the failure of a queued report (a storage error; never key
   * material) and of `clock` dating a dropped one; its own throw or rejection
   * is ignored. Default: one console warning, then silence.
   */
  onError?: (error: unknown) => void;
}

/** A public report dropped because the queue was full (`onDropped`). */
export interface PublicReportDrop {
  /** Type. */
  type: "api_key.public_report_dropped";
  /** When it was dropped. */
  at: Date;
  /** Reports waiting at that moment (`maxQueued`). */
  queued: number;
}

/** Counters of a public revocation handler (`stats()`), for a metric. */
export interface PublicRevocationStats {
  /** Distinct keys waiting now. */
  queued: number;
  /** Reports received since the handler was built. */
  received: number;
  /** Reports of a key already waiting (taking no place). */
  deduplicated: number;
  /** Reports dropped because the queue was full. */
  dropped: number;
}

/**
 * The handler: call it per request; `drain()` resolves once every queued
 * report is done (for shutdown and tests).
 */
export interface PublicRevocationHandler extends LeakReportHandler {
  /** Answers the fixed `202` and queues the report. */
  (request: LeakReportRequest): Promise<LeakReportResponse>;
  /** Resolves when the queue is empty and no report is in progress. */
  drain(): Promise<void>;
  /** The handler's counters now. */
  stats(): PublicRevocationStats;
}

/** The first value of `set`, if any. */
function first(set: Set<string>): string | undefined {
  return set.values().next().value;
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
 * at once, whatever the input. Afterwards a queue of distinct keys (at most
 * `maxQueued`, one at a time) verifies each; a non-key stands for a random
 * well-formed key, so every verification costs the same. A report past a full
 * queue is dropped and passed to `onDropped`. A key that verifies emits
 * `api_key.exposed` (`source: "public_report"`) and is revoked. Rate-limit
 * the route in the app (docs/security.md, "Leaked keys").
 *
 * @example
 * ```ts
 * import { createPublicRevocationHandler } from "./public_revocation.ts";
 * import { ApiKeysService } from "../service.ts";
 * import { InMemoryApiKeyStorage } from "../storage/in_memory.ts";
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
  optionalFunction(options.onDropped, `${label}.onDropped`);
  optionalFunction(options.onDroppedError, `${label}.onDroppedError`);
  const onError = options.onError;
  const emitDropped = createDispatcher(
    options.onDropped,
    options.onDroppedError,
    "onDropped",
    false,
    core.redact,
  );
  /** Verified in place of a report that names no key of the namespace. */
  const standIn = generateKey({ environment: "live", namespace: core.service.namespace }).raw;
  /** The keys waiting, in order (a set: a key waits once). */
  const queue = new Set<string>();
  const counts = { received: 0, deduplicated: 0, dropped: 0 };
  let running: Promise<void> | undefined;
  const fail = failureReporter(onError, "a public revocation report", core.redact);

  async function work(): Promise<void> {
    // A later task: the answer is on its way before any verification starts.
    await new Promise((resolve) => setTimeout(resolve, 0));
    for (let key = first(queue); key !== undefined; key = first(queue)) {
      queue.delete(key);
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
      if (queue.size > 0) start();
    });
  }

  /** The key `request` names, or the stand-in when it names no key of the service. */
  function keyOf(request: LeakReportRequest): string {
    try {
      const contentType = request.headers("content-type");
      const candidate = reportedKey({
        body: bodyBytes(request.body, maxBodyBytes) ?? new Uint8Array(0),
        contentType: typeof contentType === "string"
          ? contentType.slice(0, MAX_CONTENT_TYPE_LENGTH).toLowerCase()
          : "",
      });
      return core.isServiceKey(candidate) ? candidate : standIn;
    } catch {
      // an unreadable request is a report of no key: the same work, the same answer
      return standIn;
    }
  }

  const handler = (request: LeakReportRequest): Promise<LeakReportResponse> => {
    counts.received++;
    const key = keyOf(request);
    if (queue.has(key)) counts.deduplicated++;
    else if (queue.size < maxQueued) {
      queue.add(key);
      start();
    } else {
      counts.dropped++;
      if (emitDropped !== undefined) {
        try {
          emitDropped({
            type: "api_key.public_report_dropped",
            at: core.clock(),
            queued: queue.size,
          });
        } catch (error) {
          // A failing clock loses the notice, never the fixed answer.
          fail(error);
        }
      }
    }
    return Promise.resolve(jsonResponse(202, ACCEPTED_BODY));
  };
  return Object.assign(handler, {
    maxBodyBytes,
    async drain(): Promise<void> {
      while (running !== undefined) await running;
    },
    stats: (): PublicRevocationStats => ({ queued: queue.size, ...counts }),
  });
}
