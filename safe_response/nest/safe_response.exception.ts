/**
 * `SafeException` for Nest: the catalog exception as an `HttpException`.
 * @module
 */
import { HttpException } from "@nestjs/common";
import {
  type CatalogErrorShape,
  catalogErrorShape,
  type ErrorCatalog,
  type SafeExceptionOptions,
} from "../error_catalog.ts";
import { definedCatalogOf, initSafeException, isErrorCatalog } from "../_safe_exception.ts";

/**
 * The core's catalog exception as a Nest `HttpException`. Its catalog is `options.catalog`, else
 * the one `defineErrors()` catalog with the key; a key in none or several is a 500 until
 * `SafeResponseFilter` resolves it.
 * @example
 * ```ts
 * import { defineErrors } from "@saferoute/api-kit/safe-response";
 * import { SafeException } from "@saferoute/api-kit/safe-response/nest";
 * const Errors = defineErrors({ USER_NOT_FOUND: { status: 404, message: "User not found" } });
 * new SafeException("USER_NOT_FOUND", { catalog: Errors }).getStatus(); // 404
 * ```
 */
export interface SafeException<K extends string = string> extends Error {
  /** The catalog key; also the error code. */
  readonly code: K;
  /** Per-throw overrides. */
  readonly overrides: Readonly<Pick<SafeExceptionOptions, "message" | "details">>;
  /** Catalog the key belongs to, when given. */
  readonly catalog?: ErrorCatalog;
  /** `@nestarc/safe-response` 0.14's name of {@link code} (read-only). */
  readonly errorKey: K;
  /** `@nestarc/safe-response` 0.14's name of `overrides.message` (read-only). */
  readonly overrideMessage?: string;
  /** `@nestarc/safe-response` 0.14's name of `overrides.details` (read-only). */
  readonly overrideDetails?: unknown;
  /** The catalog's status, or 500 when no catalog (or several) has the key. */
  getStatus(): number;
  /** `{ statusCode, code, message, details? }` as sent, or the message when no catalog has the key. */
  getResponse(): string | object;
}

/** Constructor of `SafeException` (an `HttpException` subclass). */
export const SafeException: new <K extends string = string>(
  key: K,
  options?: SafeExceptionOptions,
) => SafeException<K> = class SafeException<K extends string = string> extends HttpException {
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
    const { message, details, cause, catalog } = options;
    const known = catalog === undefined
      ? undefined
      : sent(catalogErrorShape({ code: key, overrides: { message, details }, catalog }));
    super(known?.body ?? message ?? key, known?.status ?? 500, { cause });
    this.name = "SafeException";
    initSafeException(this, key, options);
  }

  /** The status of the exception's catalog, else of the one defined catalog with the key. */
  override getStatus(): number {
    return this.#resolved()?.status ?? super.getStatus();
  }

  /** The body sent, from the same catalog as {@link getStatus}. */
  override getResponse(): string | object {
    return this.#resolved()?.body ?? super.getResponse();
  }

  /** The status and body of a key thrown without its catalog, from the defined catalogs. */
  #resolved(): Sent | undefined {
    if (this.catalog !== undefined) return undefined; // given to the constructor
    const catalog = definedCatalogOf(this.code);
    return catalog === undefined ? undefined : sent(catalogErrorShape(this, catalog));
  }
};

/** A status and the `HttpException` body sent with it. */
interface Sent {
  status: number;
  body: object;
}

/** The status and body of a resolved shape, or `undefined` when the key is missing. */
function sent(shape: CatalogErrorShape): Sent | undefined {
  if ("missing" in shape) return undefined;
  const { status, ...rest } = shape;
  return { status, body: { statusCode: status, ...rest } };
}

/** Constructor of the `SafeException` subclass bound to one catalog (see {@link createSafeException}). */
export type CatalogSafeException<K extends string> = new (
  key: K,
  options?: Omit<SafeExceptionOptions, "catalog">,
) => SafeException<K>;

/**
 * A `SafeException` subclass bound to `catalog` (seed 0.15): its keys are type-checked, its status
 * and body come from the catalog without `options.catalog`. A key outside the catalog throws a
 * `TypeError`, as does a catalog not made by `defineErrors()`.
 * @example
 * ```ts
 * import { defineErrors } from "@saferoute/api-kit/safe-response";
 * import { createSafeException } from "@saferoute/api-kit/safe-response/nest";
 * const Errors = defineErrors({ USER_NOT_FOUND: { status: 404, message: "User not found" } });
 * const AppException = createSafeException(Errors);
 * new AppException("USER_NOT_FOUND").getStatus(); // 404
 * ```
 */
export function createSafeException<K extends string>(
  catalog: ErrorCatalog<K>,
): CatalogSafeException<K> {
  if (!isErrorCatalog(catalog)) { // a catalog of either build (ESM, CommonJS) of the library
    throw new TypeError("createSafeException: the catalog must be made by defineErrors()");
  }
  return class extends SafeException<K> {
    constructor(key: K, options: Omit<SafeExceptionOptions, "catalog"> = {}) {
      if (!catalog.has(key)) {
        throw new TypeError(`createSafeException: \`${key}\` is not in the catalog`);
      }
      super(key, { ...options, catalog });
    }
  };
}
