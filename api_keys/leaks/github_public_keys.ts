/**
 * GitHub's secret-scanning public keys: a resolver over a fixed list and one
 * that fetches and caches them from GitHub's meta endpoint (conditional
 * requests with ETag, bounded refreshes, stale keys served when GitHub fails).
 *
 * @module
 */
import { importP256PublicKeyPem } from "./_ecdsa_signature.ts";
import { optionalFunction, positiveInteger, timerMs } from "./_core.ts";

/** GitHub's meta endpoint of the secret-scanning public keys. */
export const GITHUB_SECRET_SCANNING_KEYS_URL =
  "https://api.github.com/meta/public_keys/secret_scanning";

/**
 * One public key as GitHub's meta endpoint lists it (`key` is a PEM `PUBLIC
 * KEY` of curve P-256).
 */
export interface SecretScanningPublicKey {
  /** Identifier GitHub names in `Github-Public-Key-Identifier`. */
  key_identifier: string;
  /** PEM SubjectPublicKeyInfo of an ECDSA P-256 key. */
  key: string;
  /** Whether GitHub signs with it now (informational; any listed key verifies). */
  is_current?: boolean;
}

/**
 * Finds the verification key a request names. Resolves null for an unknown
 * identifier; rejects when the keys cannot be had (the endpoint answers 503,
 * so GitHub retries).
 */
export interface SecretScanningKeyResolver {
  /**
   * The key named `keyIdentifier` (a Web Crypto `CryptoKey`, written as what `importKey` answers:
   * `CryptoKey` is a DOM type a Node app's `lib` may lack), or null when there is none.
   */
  resolve(
    keyIdentifier: string,
  ): Promise<Awaited<ReturnType<typeof crypto.subtle.importKey>> | null>;
}

/** Options of `githubSecretScanningKeyResolver`. */
export interface GitHubSecretScanningKeyResolverOptions {
  /** Meta endpoint (default `GITHUB_SECRET_SCANNING_KEYS_URL`): https, or http to a loopback host. */
  url?: string;
  /** Fetch function (default the global `fetch`). */
  fetch?: (url: string, init: RequestInit) => Promise<Response>;
  /**
   * GitHub token sent as `Authorization: Bearer` (no scope needed; raises the
   * rate limit). Never logged nor put in an error.
   */
  token?: string;
  /** How long fetched keys are used before a conditional re-fetch, in ms (default 3,600,000). */
  ttlMs?: number;
  /**
   * Least time between two fetches, in ms (default 60,000): an unknown key
   * identifier or a failed fetch refetches at most this often.
   */
  minRefreshIntervalMs?: number;
  /**
   * Longest time keys are trusted after their last successful fetch while
   * re-fetches fail, in ms (default 86,400,000, a day, or `ttlMs` when longer;
   * at least `ttlMs`);
   * past it, lookups reject (the handler answers 503).
   */
  maxStaleMs?: number;
  /** Deadline of one fetch, body included, in ms (default 5,000; at most 2147483647). */
  timeoutMs?: number;
  /** Monotonic clock in ms (default `performance.now`). */
  monotonicClock?: () => number;
}

/** Most keys taken from one list. */
const MAX_KEYS = 64;
/** Longest key identifier (GitHub's are 64 hex digits). */
const MAX_KEY_IDENTIFIER_LENGTH = 256;
/** Longest key text taken from a list. */
const MAX_KEY_TEXT_LENGTH = 4096;
/** Largest meta-endpoint body read. */
const MAX_RESPONSE_BYTES = 64 * 1024;
/** Longest ETag kept. */
const MAX_ETAG_LENGTH = 256;

/** Checks a key list; throws a `TypeError` naming `label` and the problem. */
function checkKeyList(value: unknown, label: string): SecretScanningPublicKey[] {
  if (!Array.isArray(value) || value.length > MAX_KEYS) {
    throw new TypeError(`${label} must be an array of at most ${MAX_KEYS} keys`);
  }
  return value.map((entry, index) => {
    const { key_identifier: id, key } = (entry ?? {}) as Partial<SecretScanningPublicKey>;
    if (
      typeof id !== "string" || id.length === 0 || id.length > MAX_KEY_IDENTIFIER_LENGTH ||
      typeof key !== "string" || key.length > MAX_KEY_TEXT_LENGTH
    ) {
      throw new TypeError(`${label}[${index}] must have a key_identifier and a PEM key`);
    }
    return { key_identifier: id, key };
  });
}

/**
 * A resolver over a fixed list of keys (checked now; a key that does not
 * import makes `resolve` of its identifier reject).
 */
export function fixedKeyResolver(keys: unknown, label: string): SecretScanningKeyResolver {
  const imported = new Map<string, Promise<CryptoKey>>();
  for (const { key_identifier, key } of checkKeyList(keys, label)) {
    const promise = importP256PublicKeyPem(key);
    promise.catch(() => {}); // reported when resolved
    imported.set(key_identifier, promise);
  }
  return {
    resolve: async (keyIdentifier) => (await imported.get(keyIdentifier)) ?? null,
  };
}

/** Reads a body as UTF-8; null when it is longer than `maxBytes` (reading stops there). */
async function readCapped(response: Response, maxBytes: number): Promise<string | null> {
  const reader = response.body?.getReader();
  if (reader === undefined) return "";
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  return new TextDecoder().decode(bytes);
}

/** A loopback host as `URL` normalizes it (IPv4 is always dotted decimal there). */
const LOOPBACK_HOST = /^(?:localhost|\[::1\]|127(?:\.\d{1,3}){3})$/;

function checkUrl(url: unknown, label: string): string {
  let parsed: URL | undefined;
  try {
    parsed = typeof url === "string" ? new URL(url) : undefined;
  } catch {
    // reported below
  }
  if (
    parsed === undefined ||
    (parsed.protocol !== "https:" &&
      !(parsed.protocol === "http:" && LOOPBACK_HOST.test(parsed.hostname)))
  ) {
    throw new TypeError(`${label} must be an https URL (http only to a loopback host)`);
  }
  return parsed.href;
}

/**
 * A resolver that fetches GitHub's secret-scanning public keys and caches them
 * for `ttlMs`; a re-fetch sends `If-None-Match` and keeps the keys on 304. An
 * identifier it does not know triggers a re-fetch (GitHub rotated its keys), at
 * most once per `minRefreshIntervalMs`; concurrent lookups share one fetch.
 * When a fetch fails, keys fetched before are still used for up to
 * `maxStaleMs` after their last successful fetch; without them, or past it,
 * the lookup rejects. The URL must be https (http only to a loopback host). Keys that do not import (another curve) are skipped.
 *
 * @example
 * ```ts
 * import { githubSecretScanningKeyResolver } from "./github_public_keys.ts";
 * const keys = githubSecretScanningKeyResolver({ token: Deno.env.get("GITHUB_TOKEN") });
 * ```
 */
export function githubSecretScanningKeyResolver(
  options: GitHubSecretScanningKeyResolverOptions = {},
): SecretScanningKeyResolver {
  const label = "GitHubSecretScanningKeyResolverOptions";
  if (typeof options !== "object" || options === null) {
    throw new TypeError(`${label} must be an object`);
  }
  const url = checkUrl(options.url ?? GITHUB_SECRET_SCANNING_KEYS_URL, `${label}.url`);
  optionalFunction(options.fetch, `${label}.fetch`);
  optionalFunction(options.monotonicClock, `${label}.monotonicClock`);
  if (options.token !== undefined && typeof options.token !== "string") {
    throw new TypeError(`${label}.token must be a string`);
  }
  const ttlMs = positiveInteger(options.ttlMs, 3_600_000, `${label}.ttlMs`);
  const minRefreshMs = positiveInteger(
    options.minRefreshIntervalMs,
    60_000,
    `${label}.minRefreshIntervalMs`,
  );
  const timeoutMs = timerMs(options.timeoutMs, 5_000, `${label}.timeoutMs`);
  const maxStaleMs = positiveInteger(
    options.maxStaleMs,
    Math.max(86_400_000, ttlMs),
    `${label}.maxStaleMs`,
  );
  if (maxStaleMs < ttlMs) throw new TypeError(`${label}.maxStaleMs must be at least ttlMs`);
  const fetchKeys = options.fetch ?? ((input, init) => fetch(input, init));
  const now = options.monotonicClock ?? (() => performance.now());
  const headers: Record<string, string> = { accept: "application/json" };
  if (options.token) headers.authorization = `Bearer ${options.token}`;

  let keys = new Map<string, CryptoKey>();
  let etag: string | undefined;
  let fetchedAt = -Infinity;
  let attemptedAt = -Infinity;
  let lastError: Error | undefined;
  let inflight: Promise<void> | undefined;

  async function load(): Promise<void> {
    attemptedAt = now();
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    try {
      const request = etag === undefined ? headers : { ...headers, "if-none-match": etag };
      const failed = () =>
        new Error(
          `GitHub public keys: ${controller.signal.aborted ? "timed out" : "request failed"}`,
        );
      let response: Response;
      try {
        response = await fetchKeys(url, { headers: request, signal: controller.signal });
      } catch {
        throw failed();
      }
      if (response.status === 304 && etag !== undefined) {
        await response.body?.cancel().catch(() => {});
        fetchedAt = now();
        return;
      }
      if (!response.ok) {
        await response.body?.cancel().catch(() => {});
        throw new Error(`GitHub public keys: HTTP ${response.status}`);
      }
      let text: string | null;
      try {
        text = await readCapped(response, MAX_RESPONSE_BYTES);
      } catch {
        throw failed();
      }
      if (text === null) {
        throw new Error(`GitHub public keys: body over ${MAX_RESPONSE_BYTES} bytes`);
      }
      let list: SecretScanningPublicKey[];
      try {
        list = checkKeyList((JSON.parse(text) as { public_keys?: unknown })?.public_keys, "keys");
      } catch {
        throw new Error("GitHub public keys: malformed response");
      }
      const imported = await Promise.allSettled(list.map(({ key }) => importP256PublicKeyPem(key)));
      const next = new Map<string, CryptoKey>();
      imported.forEach((result, index) => {
        if (result.status === "fulfilled") next.set(list[index].key_identifier, result.value);
      });
      if (next.size === 0) throw new Error("GitHub public keys: no usable P-256 key");
      keys = next;
      const tag = response.headers.get("etag");
      etag = tag !== null && tag.length <= MAX_ETAG_LENGTH ? tag : undefined;
      fetchedAt = now();
    } finally {
      clearTimeout(timer);
    }
  }

  function refresh(): Promise<void> {
    inflight ??= load().then(
      () => {
        lastError = undefined;
      },
      (error: Error) => {
        lastError = error;
      },
    ).finally(() => {
      inflight = undefined;
    });
    return inflight;
  }

  return {
    async resolve(keyIdentifier: string): Promise<CryptoKey | null> {
      if (
        typeof keyIdentifier !== "string" || keyIdentifier.length === 0 ||
        keyIdentifier.length > MAX_KEY_IDENTIFIER_LENGTH
      ) {
        return null;
      }
      const time = now();
      const wanted = time - fetchedAt >= ttlMs || !keys.has(keyIdentifier);
      if (wanted && (inflight !== undefined || time - attemptedAt >= minRefreshMs)) {
        await refresh();
      }
      const key = keys.get(keyIdentifier);
      // After a failed fetch, keys fetched before are trusted up to maxStaleMs.
      if (key !== undefined && (lastError === undefined || now() - fetchedAt < maxStaleMs)) {
        return key;
      }
      if (lastError !== undefined) throw lastError;
      return null;
    },
  };
}
