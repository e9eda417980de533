/**
 * The core of a GitHub secret-scanning partner endpoint: checks GitHub's
 * signature over the raw body, checks each reported token offline against the
 * service's layouts (`legacyKeyLayouts` included),
 * revokes each key that verifies and, when enabled, answers feedback.
 *
 * @module
 */
import { storableTextProblem } from "../_input.ts";
import { verifyDerSignature } from "./_ecdsa_signature.ts";
import {
  bodyBytes,
  compileLeakCore,
  errorResponse,
  type ExposureOutcome,
  failureReporter,
  jsonResponse,
  optionalFunction,
  positiveInteger,
  revokeExposedKey,
  timerMs,
} from "./_core.ts";
import {
  fixedKeyResolver,
  type SecretScanningKeyResolver,
  type SecretScanningPublicKey,
} from "./github_public_keys.ts";
import type {
  LeakedKeyHandlerOptions,
  LeakReportHandler,
  LeakReportRequest,
  LeakReportResponse,
} from "./types.ts";

/**
 * Default most tokens one request may carry. At the default concurrency of 8
 * and about 10 ms per storage call (a verify and a revoke are three), 1,000
 * keys take about 4 s, well within GitHub's 30 s timeout.
 */
export const SECRET_SCANNING_MAX_TOKENS = 1000;

/** Options of `createSecretScanningPartnerHandler`. */
export interface SecretScanningPartnerOptions extends LeakedKeyHandlerOptions {
  /** GitHub's public keys: a fixed list, or a resolver such as `githubSecretScanningKeyResolver()`. */
  publicKeys: readonly SecretScanningPublicKey[] | SecretScanningKeyResolver;
  /**
   * Answer GitHub's feedback (default false): one `{ token_hash, token_type,
   * label }` per distinct token, `token_hash` the hex SHA-256 of the token
   * (never the raw token), `token_type` GitHub's `type` (at most 256
   * characters, null when not a string), `label` `true_positive` when its secret matched a
   * key (revoked now or before, or expired), else `false_positive`.
   */
  feedback?: boolean;
  /** Most tokens per request (default `SECRET_SCANNING_MAX_TOKENS`); more is 413. */
  maxTokens?: number;
  /** Largest body in bytes (default 1 MiB); larger is 413. */
  maxBodyBytes?: number;
  /** Tokens verified and revoked at once (default 8). */
  concurrency?: number;
  /**
   * Time for all tokens, in ms (default 25,000, under GitHub's 30 s; at most
   * 2147483647): past it the answer is 503 and GitHub retries (replays are safe).
   */
  deadlineMs?: number;
  /**
   * Receives why a report was answered 503 (a storage error, the deadline passed, the public
   * keys unavailable; never key material): GitHub retries, but the key stays valid until one
   * succeeds. Its own throw or rejection is ignored. Default: one console warning, then silence.
   */
  onError?: (error: unknown) => void;
}

/** One reported match, checked. */
interface Match {
  token: string;
  /** GitHub's `type`, cut to `MAX_TYPE_LENGTH`; null when not a string. */
  type: string | null;
  url: string | null;
  source: string;
}

/** Longest `type`, `source` and `url` accepted. */
const MAX_TYPE_LENGTH = 256;
const MAX_SOURCE_LENGTH = 64;
const MAX_URL_LENGTH = 4096;
const IDENTIFIER_HEADER = "github-public-key-identifier";
const SIGNATURE_HEADER = "github-public-key-signature";
/** Longest key identifier header read. */
const MAX_KEY_IDENTIFIER_LENGTH = 256;
const utf8 = new TextDecoder("utf-8", { fatal: true });

/** `value` when a non-empty string of at most `max` characters, else null. */
const boundedString = (value: unknown, max: number): string | null =>
  typeof value === "string" && value !== "" && value.length <= max ? value : null;

/**
 * `boundedString`, and null for text the audit log cannot store (U+0000 or a
 * lone surrogate, see `storableTextProblem`): `source` goes into the
 * `key.exposed` record.
 */
const storableString = (value: unknown, max: number): string | null => {
  const text = boundedString(value, max);
  return text !== null && storableTextProblem(text) === undefined ? text : null;
};

/**
 * The distinct matches of a body (the first of each token kept), `too_many`
 * past `maxTokens`, or null when it is not GitHub's payload (an array of
 * objects with a string `token`). One entry's `url`, `source` or `type` never
 * fails the batch: an over-long or non-string `url` reads as null, `source`
 * as "unknown" (also one holding U+0000 or a lone surrogate); `type` is cut
 * to its bound, null when not a string.
 */
function parseMatches(body: Uint8Array, maxTokens: number): Match[] | "too_many" | null {
  let value: unknown;
  try {
    value = JSON.parse(utf8.decode(body));
  } catch {
    return null;
  }
  if (!Array.isArray(value)) return null;
  if (value.length > maxTokens) return "too_many";
  const matches = new Map<string, Match>();
  for (const entry of value) {
    if (typeof entry !== "object" || entry === null) return null;
    const { token, type, url, source } = entry as Record<string, unknown>;
    if (typeof token !== "string") return null;
    if (matches.has(token)) continue;
    matches.set(token, {
      token,
      type: typeof type === "string" ? type.slice(0, MAX_TYPE_LENGTH) : null,
      url: boundedString(url, MAX_URL_LENGTH),
      source: storableString(source, MAX_SOURCE_LENGTH) ?? "unknown",
    });
  }
  return [...matches.values()];
}

async function sha256Hex(text: string): Promise<string> {
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)),
  );
  let hex = "";
  for (const byte of digest) hex += byte.toString(16).padStart(2, "0");
  return hex;
}

/**
 * Builds the handler of GitHub's secret-scanning partner requests:
 *
 * 1. without the `Github-Public-Key-Identifier` and `Github-Public-Key-Signature`
 *    headers it is 401, before the body is read (`refuse`);
 * 2. a body over `maxBodyBytes` is 413;
 * 3. the signature (base64 DER ECDSA P-256 / SHA-256 over the raw body) must
 *    verify with the key named by the identifier, else 401 (503 when the keys
 *    cannot be fetched);
 * 4. the body must be `[{ token, type?, url?, source? }]`, each `token` a
 *    string (else 400; an odd `type`, `url` or `source` is bounded, see
 *    `parseMatches`), with at most `maxTokens` entries (else 413);
 * 5. each distinct token that is a key of the service (checksum checked
 *    offline) is verified; one that verifies emits `api_key.exposed` and is
 *    revoked. A storage failure or the deadline gives 503;
 * 6. 200 with the feedback array, or `[]` when feedback is off.
 *
 * A replay revokes and reports nothing again. Throws a `TypeError` naming a bad option.
 *
 * @example
 * ```ts
 * import { createSecretScanningPartnerHandler } from "./secret_scanning_partner.ts";
 * import { githubSecretScanningKeyResolver } from "./github_public_keys.ts";
 * import { ApiKeysService } from "../service.ts";
 * import { InMemoryApiKeyStorage } from "../storage/in_memory.ts";
 *
 * const service = new ApiKeysService({
 *   peppers: { 1: "a-pepper-of-at-least-thirty-two-bytes" },
 *   storage: new InMemoryApiKeyStorage(),
 * });
 * const handle = createSecretScanningPartnerHandler({
 *   service,
 *   publicKeys: githubSecretScanningKeyResolver(),
 * });
 * Deno.serve(async (request) => {
 *   const response = await handle({
 *     body: new Uint8Array(await request.arrayBuffer()),
 *     headers: (name) => request.headers.get(name),
 *   });
 *   return new Response(response.body, response);
 * });
 * ```
 */
export function createSecretScanningPartnerHandler(
  options: SecretScanningPartnerOptions,
): LeakReportHandler {
  const label = "SecretScanningPartnerOptions";
  const core = compileLeakCore(options, label);
  const publicKeys = options.publicKeys;
  const resolver: SecretScanningKeyResolver = Array.isArray(publicKeys)
    ? fixedKeyResolver(publicKeys, `${label}.publicKeys`)
    : publicKeys as SecretScanningKeyResolver;
  if (typeof resolver?.resolve !== "function") {
    throw new TypeError(`${label}.publicKeys must be a key list or a resolver`);
  }
  if (options.feedback !== undefined && typeof options.feedback !== "boolean") {
    throw new TypeError(`${label}.feedback must be a boolean`);
  }
  const feedback = options.feedback ?? false;
  const maxTokens = positiveInteger(
    options.maxTokens,
    SECRET_SCANNING_MAX_TOKENS,
    `${label}.maxTokens`,
  );
  const maxBodyBytes = positiveInteger(options.maxBodyBytes, 1 << 20, `${label}.maxBodyBytes`);
  const concurrency = positiveInteger(options.concurrency, 8, `${label}.concurrency`);
  const deadlineMs = timerMs(options.deadlineMs, 25_000, `${label}.deadlineMs`);
  optionalFunction(options.onError, `${label}.onError`);
  const fail = failureReporter(options.onError, "a secret scanning report", core.redact);

  /** Verifies and revokes every match; null when one failed or the deadline passed. */
  async function processAll(matches: Match[]): Promise<ExposureOutcome[] | null> {
    const outcomes: ExposureOutcome[] = new Array(matches.length);
    let next = 0;
    let done = 0;
    let stopped = false;
    const worker = async () => {
      while (!stopped && next < matches.length) {
        const index = next++;
        const { token, source, url } = matches[index];
        try {
          outcomes[index] = core.isServiceKey(token)
            ? await revokeExposedKey(core, token, source, url)
            : "unknown";
          done++;
        } catch (error) {
          if (!stopped) fail(error); // the first failure of this report
          stopped = true;
        }
      }
    };
    const workers = Array.from({ length: Math.min(concurrency, matches.length) }, worker);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<void>((resolve) => timer = setTimeout(resolve, deadlineMs));
    await Promise.race([Promise.all(workers), deadline]);
    clearTimeout(timer);
    if (!stopped && done < matches.length) {
      fail(
        new Error(
          `${matches.length - done} of ${matches.length} token(s) not processed within ` +
            `deadlineMs (${deadlineMs} ms)`,
        ),
      );
    }
    stopped = true;
    return done === matches.length ? outcomes : null;
  }

  const unsigned = () =>
    errorResponse(401, "secret_scanning_signature_invalid", "Signature is invalid");
  /** The signature headers, or `undefined` when one is missing (or the identifier too long). */
  const signatureOf = (headers: LeakReportRequest["headers"]) => {
    const keyIdentifier = headers(IDENTIFIER_HEADER);
    const signature = headers(SIGNATURE_HEADER);
    return typeof keyIdentifier === "string" &&
        keyIdentifier.length <= MAX_KEY_IDENTIFIER_LENGTH && typeof signature === "string"
      ? { keyIdentifier, signature }
      : undefined;
  };
  const refuse = (headers: LeakReportRequest["headers"]) =>
    signatureOf(headers) === undefined ? unsigned() : undefined;

  const handler = async (request: LeakReportRequest): Promise<LeakReportResponse> => {
    const signed = signatureOf(request.headers);
    if (signed === undefined) return unsigned();
    const body = bodyBytes(request.body, maxBodyBytes);
    if (body === null) {
      return errorResponse(413, "secret_scanning_payload_too_large", "Payload too large");
    }
    let key: CryptoKey | null;
    try {
      key = await resolver.resolve(signed.keyIdentifier);
    } catch (error) {
      fail(error);
      return errorResponse(
        503,
        "secret_scanning_keys_unavailable",
        "Signature keys are unavailable; retry later",
      );
    }
    if (key === null || !await verifyDerSignature(key, signed.signature, body)) return unsigned();
    const matches = parseMatches(body, maxTokens);
    if (matches === null) {
      return errorResponse(400, "secret_scanning_payload_invalid", "Payload is invalid");
    }
    if (matches === "too_many") {
      return errorResponse(
        413,
        "secret_scanning_payload_too_large",
        `At most ${maxTokens} tokens per request`,
      );
    }
    const outcomes = await processAll(matches);
    if (outcomes === null) {
      return errorResponse(
        503,
        "secret_scanning_incomplete",
        "Not every token was processed; retry",
      );
    }
    if (!feedback) return jsonResponse(200, "[]");
    const entries = await Promise.all(matches.map(async ({ token, type }, index) => ({
      token_hash: await sha256Hex(token),
      token_type: type,
      label: outcomes[index] === "unknown" ? "false_positive" : "true_positive",
    })));
    return jsonResponse(200, JSON.stringify(entries));
  };
  return Object.assign(handler, { maxBodyBytes, refuse });
}
