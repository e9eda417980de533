/**
 * Error catalog: application errors defined once by key (status, message,
 * details) and thrown by key with {@link SafeException}.
 *
 * @module
 */
import { LIBRARY_ERROR } from "./_library_error.ts";
import { isHttpStatus } from "./http_status.ts";

/**
 * One catalog entry.
 *
 * @example
 * ```ts
 * import type { ErrorDefinition } from "@saferoute/api-kit/safe-response";
 * const definition: ErrorDefinition = { status: 404, message: "User not found" };
 * ```
 */
export interface ErrorDefinition {
  /** HTTP status (400-599). */
  readonly status: number;
  /** Client-safe message (a translation key when `i18n` is on). */
  readonly message: string;
  /** Default details. */
  readonly details?: unknown;
}

/**
 * Per-throw overrides of a {@link SafeException}.
 *
 * @example
 * ```ts
 * import type { SafeExceptionOptions } from "@saferoute/api-kit/safe-response";
 * const options: SafeExceptionOptions = { message: "User 42 not found", details: { id: 42 } };
 * ```
 */
export interface SafeExceptionOptions {
  /** Replaces the catalog message. */
  message?: string;
  /** Replaces the catalog details. */
  details?: unknown;
  /** The underlying error (logged, never sent). */
  cause?: unknown;
  /** Catalog of the key; default the one registered with the module. */
  catalog?: ErrorCatalog;
}

/** Brand of a `SafeException`, shared by every copy of the library. */
const SAFE_EXCEPTION = Symbol.for("@saferoute/api-kit/safe-exception");

/**
 * An error thrown by catalog key. The exception filter sends the catalog's
 * status and message (or the overrides) with `code` = the key. The type
 * parameter restricts keys: `new SafeException<ErrorKey<typeof Errors>>(...)`
 * or `Errors.exception(...)` reject unknown keys at compile time.
 *
 * @example
 * ```ts
 * import { SafeException } from "@saferoute/api-kit/safe-response";
 * throw new SafeException("USER_NOT_FOUND", { details: { id: "u1" } });
 * ```
 */
export class SafeException<K extends string = string> extends Error {
  /** The catalog key; also the error code. */
  readonly code: K;
  /** Per-throw overrides. */
  readonly overrides: Readonly<Pick<SafeExceptionOptions, "message" | "details">>;
  /** Catalog the key belongs to, when given. */
  readonly catalog?: ErrorCatalog;

  /** Creates the exception of `key`. */
  constructor(key: K, options: SafeExceptionOptions = {}) {
    const { message, details, cause, catalog } = options;
    super(
      message ?? catalog?.get(key)?.message ?? key,
      cause === undefined ? undefined : { cause },
    );
    this.name = "SafeException";
    Object.defineProperty(this, SAFE_EXCEPTION, { value: true }); // recognised across copies
    this.code = key;
    this.overrides = Object.freeze({ message, details });
    if (catalog !== undefined) this.catalog = catalog;
  }
}

Object.defineProperty(SafeException.prototype, LIBRARY_ERROR, { value: true });

/**
 * Whether `value` is a {@link SafeException} (by its brand, so copies of the
 * library loaded twice still agree).
 *
 * @example
 * ```ts
 * import { isSafeException, SafeException } from "@saferoute/api-kit/safe-response";
 * isSafeException(new SafeException("X")); // true
 * isSafeException(new Error("X")); // false
 * ```
 */
export function isSafeException(value: unknown): value is SafeException {
  return typeof value === "object" && value !== null &&
    (value as Record<symbol, unknown>)[SAFE_EXCEPTION] === true &&
    typeof (value as { code?: unknown }).code === "string";
}

/**
 * A validated, frozen set of error definitions; built by {@link defineErrors}.
 *
 * @example
 * ```ts
 * import { defineErrors } from "@saferoute/api-kit/safe-response";
 * const Errors = defineErrors({ USER_NOT_FOUND: { status: 404, message: "User not found" } });
 * Errors.get("USER_NOT_FOUND")?.status; // 404
 * ```
 */
export class ErrorCatalog<K extends string = string> {
  readonly #entries: ReadonlyMap<string, ErrorDefinition>;

  /** Validates `definitions` (throws a `TypeError` naming a bad entry). */
  constructor(definitions: Readonly<Record<K, ErrorDefinition>>) {
    if (typeof definitions !== "object" || definitions === null) {
      throw new TypeError("defineErrors: definitions must be an object");
    }
    const entries = new Map<string, ErrorDefinition>();
    for (const [key, value] of Object.entries<ErrorDefinition>(definitions)) {
      const { status, message, details } = value ?? {};
      if (!isHttpStatus(status, 400)) {
        throw new TypeError(`defineErrors: ${key}.status must be an error status (400-599)`);
      }
      if (typeof message !== "string" || message === "") {
        throw new TypeError(`defineErrors: ${key}.message must be a non-empty string`);
      }
      entries.set(key, Object.freeze(details === undefined ? { status, message } : value));
    }
    this.#entries = entries;
  }

  /** The keys, in definition order. */
  get keys(): K[] {
    return [...this.#entries.keys()] as K[];
  }

  /** The definition of `key`, or `undefined` when it is not in the catalog. */
  get(key: string): ErrorDefinition | undefined {
    return this.#entries.get(key);
  }

  /** Whether `key` is in the catalog. */
  has(key: string): key is K {
    return this.#entries.has(key);
  }

  /** A {@link SafeException} of `key` bound to this catalog (keys type-checked). */
  exception(key: K, options: Omit<SafeExceptionOptions, "catalog"> = {}): SafeException<K> {
    return new SafeException(key, { ...options, catalog: this });
  }
}

/**
 * The keys of a catalog, as a type.
 *
 * @example
 * ```ts
 * import { defineErrors, type ErrorKey, SafeException } from "@saferoute/api-kit/safe-response";
 * const Errors = defineErrors({ GONE: { status: 410, message: "Gone" } });
 * const error = new SafeException<ErrorKey<typeof Errors>>("GONE");
 * ```
 */
export type ErrorKey<C> = C extends ErrorCatalog<infer K> ? K : never;

/**
 * Defines the application's errors. Statuses must be 400-599 and messages
 * non-empty; a bad entry throws a `TypeError` naming it.
 *
 * @example
 * ```ts
 * import { defineErrors } from "@saferoute/api-kit/safe-response";
 * export const Errors = defineErrors({
 *   USER_NOT_FOUND: { status: 404, message: "User not found" },
 *   EMAIL_TAKEN: { status: 409, message: "Email already registered", details: { field: "email" } },
 * });
 * throw Errors.exception("USER_NOT_FOUND", { details: { id: "u1" } });
 * ```
 */
export function defineErrors<const D extends Record<string, ErrorDefinition>>(
  definitions: D,
): ErrorCatalog<Extract<keyof D, string>> {
  return new ErrorCatalog<Extract<keyof D, string>>(definitions);
}

/**
 * What a catalog exception resolves to: its shape, or why it cannot be resolved.
 *
 * @example
 * ```ts
 * import type { CatalogErrorShape } from "@saferoute/api-kit/safe-response";
 * const found: CatalogErrorShape = { status: 410, code: "GONE", message: "Gone" };
 * const missing: CatalogErrorShape = { missing: "SafeException: key `X` is not in the error catalog" };
 * ```
 */
export type CatalogErrorShape =
  | { status: number; code: string; message: string; details?: unknown }
  | { missing: string };

/**
 * Status, code, message and details of a {@link SafeException}: its own
 * catalog's entry, else `catalog`'s, with the per-throw overrides. A key in
 * neither gives `{ missing }`, a log line.
 *
 * @example
 * ```ts
 * import { catalogErrorShape, defineErrors, SafeException } from "@saferoute/api-kit/safe-response";
 * const Errors = defineErrors({ GONE: { status: 410, message: "Gone" } });
 * catalogErrorShape(new SafeException("GONE"), Errors); // { status: 410, code: "GONE", message: "Gone" }
 * ```
 */
export function catalogErrorShape(
  exception: SafeException,
  catalog?: Pick<ErrorCatalog, "get">,
): CatalogErrorShape {
  const key = exception.code;
  const definition = exception.catalog?.get(key) ?? catalog?.get(key);
  if (definition === undefined) {
    return {
      missing: `SafeException: key \`${key}\` is not in the ` +
        (catalog === undefined ? "error catalog (no errorCatalog registered)" : "error catalog") +
        "; sent as a 500",
    };
  }
  const { message, details } = exception.overrides;
  const shape: CatalogErrorShape = {
    status: definition.status,
    code: key,
    message: message ?? definition.message,
  };
  const sent = details ?? definition.details;
  if (sent !== undefined) shape.details = sent;
  return shape;
}
