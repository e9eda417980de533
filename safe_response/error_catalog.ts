/**
 * Error catalog: application errors defined once by key and thrown by key with {@link SafeException}.
 * @module
 */
import { isHttpStatus } from "./http_status.ts";
import {
  ERROR_CATALOG,
  initSafeException,
  rememberDefinedCatalog,
  SAFE_EXCEPTION,
} from "./_safe_exception.ts";

/** One catalog entry. */
export interface ErrorDefinition {
  /** HTTP status (400-599). */
  readonly status: number;
  /** Client-safe message (a translation key when `i18n` is on). */
  readonly message: string;
  /** Description of the error response in the OpenAPI document (never sent). */
  readonly description?: string;
  /** Default details. */
  readonly details?: unknown;
}

/**
 * Per-throw overrides of a {@link SafeException}.
 */
export interface SafeExceptionOptions {
  /** Replaces the catalog message. */
  message?: string;
  /** Replaces the catalog details; `null` sends none (`undefined` keeps the catalog's). */
  details?: unknown;
  /** The underlying error (logged with a 5xx status, never sent). */
  cause?: unknown;
  /** Catalog of the key; default the one registered with the module. */
  catalog?: ErrorCatalog;
}

/**
 * An error thrown by catalog key: sent with the catalog's status and message (or the overrides)
 * and `code` = the key. `Errors.exception(...)` type-checks the key.
 * @example
 * ```ts
 * import { SafeException } from "@saferoute/api-kit/safe-response";
 * throw new SafeException("USER_NOT_FOUND", { details: { id: "u1" } });
 * ```
 */
export class SafeException<K extends string = string> extends Error {
  /** The catalog key; also the error code. */
  declare readonly code: K;
  /** Per-throw overrides. */
  declare readonly overrides: Readonly<Pick<SafeExceptionOptions, "message" | "details">>;
  /** Catalog the key belongs to, when given. */
  declare readonly catalog?: ErrorCatalog;
  /** `@nestarc/safe-response` 0.14's name of {@link code} (read-only). */
  declare readonly errorKey: K;
  /** `@nestarc/safe-response` 0.14's name of `overrides.message` (read-only). */
  declare readonly overrideMessage?: string;
  /** `@nestarc/safe-response` 0.14's name of `overrides.details` (read-only). */
  declare readonly overrideDetails?: unknown;

  /** Creates the exception of `key`. */
  constructor(key: K, options: SafeExceptionOptions = {}) {
    const { message, cause, catalog } = options;
    super(
      message ?? catalog?.get(key)?.message ?? key,
      cause === undefined ? undefined : { cause },
    );
    this.name = "SafeException";
    initSafeException(this, key, options);
  }
}

/**
 * Whether `value` is a {@link SafeException} (by brand, so two loaded copies of the library agree).
 * @example
 * ```ts
 * import { isSafeException, SafeException } from "@saferoute/api-kit/safe-response";
 * isSafeException(new SafeException("X")); // true
 * ```
 */
export function isSafeException(value: unknown): value is SafeException {
  return typeof value === "object" && value !== null &&
    (value as Record<symbol, unknown>)[SAFE_EXCEPTION] === true &&
    typeof (value as { code?: unknown }).code === "string";
}

/**
 * A validated, frozen set of error definitions, built by {@link defineErrors}; each entry is also
 * a property of the catalog (`Errors.USER_NOT_FOUND.status`).
 * @example
 * ```ts
 * import { ErrorCatalog } from "@saferoute/api-kit/safe-response";
 * new ErrorCatalog({ GONE: { status: 410, message: "Gone" } }).get("GONE")?.status; // 410
 * ```
 */
export class ErrorCatalog<K extends string = string> {
  readonly #entries: ReadonlyMap<string, ErrorDefinition>;

  /** Throws a `TypeError` naming a bad entry or a key that would shadow a member. */
  constructor(definitions: Readonly<Record<K, ErrorDefinition>>) {
    if (typeof definitions !== "object" || definitions === null) {
      throw new TypeError("defineErrors: definitions must be an object");
    }
    const entries = new Map<string, ErrorDefinition>();
    for (const [key, value] of Object.entries<ErrorDefinition>(definitions)) {
      if (key in this) {
        throw new TypeError(
          `defineErrors: key \`${key}\` would shadow the catalog's own member; rename it`,
        );
      }
      const entry = Object.freeze(validEntry(key, value));
      entries.set(key, entry);
      Object.defineProperty(this, key, { value: entry, enumerable: true });
    }
    this.#entries = entries;
    Object.freeze(this);
    rememberDefinedCatalog(this);
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

Object.defineProperty(ErrorCatalog.prototype, ERROR_CATALOG, { value: true });

/** A copy of the definition of `key` with only the known fields, or a `TypeError` naming it. */
function validEntry(key: string, value: ErrorDefinition): ErrorDefinition {
  const { status, message, description, details } = value ?? {};
  if (!isHttpStatus(status, 400)) {
    throw new TypeError(`defineErrors: ${key}.status must be an error status (400-599)`);
  }
  if (typeof message !== "string" || message === "") {
    throw new TypeError(`defineErrors: ${key}.message must be a non-empty string`);
  }
  if (description !== undefined && typeof description !== "string") {
    throw new TypeError(`defineErrors: ${key}.description must be a string`);
  }
  return {
    status,
    message,
    ...(description === undefined ? {} : { description }),
    ...(details === undefined ? {} : { details }),
  };
}

/** The entries of a catalog by key, as {@link defineErrors} returns them. */
export type ErrorEntries<K extends string> = { readonly [P in K]: ErrorDefinition };

/**
 * The keys of a catalog, as a type.
 * @example
 * ```ts
 * import { defineErrors, type ErrorKey, SafeException } from "@saferoute/api-kit/safe-response";
 * const Errors = defineErrors({ GONE: { status: 410, message: "Gone" } });
 * const error = new SafeException<ErrorKey<typeof Errors>>("GONE");
 * ```
 */
export type ErrorKey<C> = C extends ErrorCatalog<infer K> ? K : never;

/**
 * Defines the application's errors (statuses 400-599, non-empty messages). A bad entry, or a key
 * that would shadow a member of the catalog (`get`, `keys`, `toString`...), throws a `TypeError`.
 * @example
 * ```ts
 * import { defineErrors } from "@saferoute/api-kit/safe-response";
 * export const Errors = defineErrors({
 *   USER_NOT_FOUND: { status: 404, message: "User not found" },
 *   EMAIL_TAKEN: { status: 409, message: "Email already registered", details: { field: "email" } },
 * });
 * Errors.EMAIL_TAKEN.status; // 409
 * throw Errors.exception("USER_NOT_FOUND", { details: { id: "u1" } });
 * ```
 */
export function defineErrors<const D extends Record<string, ErrorDefinition>>(
  definitions: D,
): ErrorCatalog<Extract<keyof D, string>> & ErrorEntries<Extract<keyof D, string>> {
  return new ErrorCatalog(definitions) as
    & ErrorCatalog<Extract<keyof D, string>>
    & ErrorEntries<Extract<keyof D, string>>;
}

/** What a catalog exception resolves to: its shape, or why it cannot be resolved. */
export type CatalogErrorShape =
  | { status: number; code: string; message: string; details?: unknown }
  | { missing: string };

/**
 * Status, code, message and details of a {@link SafeException} from its own catalog, else
 * `catalog`, with the overrides; a key in neither gives `{ missing }`, a log line.
 * @example
 * ```ts
 * import { catalogErrorShape, defineErrors, SafeException } from "@saferoute/api-kit/safe-response";
 * const Errors = defineErrors({ GONE: { status: 410, message: "Gone" } });
 * catalogErrorShape(new SafeException("GONE"), Errors); // { status: 410, code: "GONE", message: "Gone" }
 * ```
 */
export function catalogErrorShape(
  exception: Pick<SafeException, "code" | "overrides" | "catalog">,
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
  const sent = details === undefined ? definition.details : details;
  if (sent !== undefined && sent !== null) shape.details = sent;
  return shape;
}
