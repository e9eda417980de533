/**
 * What makes an error a catalog exception, shared by the core's
 * `SafeException` and the Nest entry's (an `HttpException`): its brand, its
 * fields, and the registry of defined catalogs the Nest entry's exception
 * reads its status from when thrown without its catalog.
 *
 * @module
 */
import { LIBRARY_ERROR } from "./_library_error.ts";

/** Brand of a `SafeException`, shared by every copy of the library. */
export const SAFE_EXCEPTION: unique symbol = Symbol.for("@saferoute/api-kit/safe-exception");

/** Brand of an `ErrorCatalog` (on its prototype), shared by every copy of the library. */
export const ERROR_CATALOG: unique symbol = Symbol.for("@saferoute/api-kit/error-catalog");

/** Whether `value` is an `ErrorCatalog` of any copy of the library. */
export function isErrorCatalog(value: unknown): boolean {
  return typeof value === "object" && value !== null &&
    (value as { [ERROR_CATALOG]?: unknown })[ERROR_CATALOG] === true;
}

/** The fields a catalog exception carries (the 0.14 names read them). */
interface SafeExceptionFields {
  readonly code: string;
  readonly overrides: Readonly<{ message?: string; details?: unknown }>;
}

/** The 0.14 names: read-only, non-enumerable getters. */
const LEGACY_FIELDS: PropertyDescriptorMap = {
  errorKey: {
    get(this: SafeExceptionFields) {
      return this.code;
    },
  },
  overrideMessage: {
    get(this: SafeExceptionFields) {
      return this.overrides.message;
    },
  },
  overrideDetails: {
    get(this: SafeExceptionFields) {
      return this.overrides.details;
    },
  },
};

/**
 * Makes `target` (just constructed) the catalog exception of `key`: its
 * fields (with the 0.14 names), and the brands that every copy of the library recognises.
 */
export function initSafeException(
  target: object,
  key: string,
  options: { message?: string; details?: unknown; catalog?: object },
): void {
  const { message, details, catalog } = options;
  Object.defineProperties(target, {
    [SAFE_EXCEPTION]: { value: true },
    [LIBRARY_ERROR]: { value: true },
    ...LEGACY_FIELDS,
  });
  Object.assign(target, { code: key, overrides: Object.freeze({ message, details }) });
  if (catalog !== undefined) Object.assign(target, { catalog });
}

/** What the registry needs of a catalog (an `ErrorCatalog` fits). */
interface DefinedCatalog {
  has(key: string): boolean;
  get(key: string): { status: number; message: string; details?: unknown } | undefined;
}

/** The catalogs defined so far and still reachable (weakly held: a dropped catalog leaves). */
interface Registry {
  readonly defined: Set<WeakRef<DefinedCatalog>>;
  readonly forget: FinalizationRegistry<WeakRef<DefinedCatalog>>;
}

/**
 * One registry for every copy of the library in the process (an app loading both the ESM and the
 * CommonJS build): an exception of one copy finds a catalog defined by the other.
 */
const REGISTRY = Symbol.for("@saferoute/api-kit/defined-catalogs");
const { defined: DEFINED, forget: FORGET } = ((globalThis as { [REGISTRY]?: Registry })[
  REGISTRY
] ??= (() => {
  const defined = new Set<WeakRef<DefinedCatalog>>();
  return { defined, forget: new FinalizationRegistry((ref) => defined.delete(ref)) };
})());

/** Records `catalog` (a new `ErrorCatalog`) as defined. */
export function rememberDefinedCatalog(catalog: DefinedCatalog): void {
  const ref = new WeakRef(catalog);
  DEFINED.add(ref);
  FORGET.register(catalog, ref);
}

/**
 * The one defined catalog that has `key`, or `undefined` when none has it or
 * several do (which status would be a guess).
 */
export function definedCatalogOf(key: string): DefinedCatalog | undefined {
  let found: DefinedCatalog | undefined;
  for (const ref of DEFINED) {
    const catalog = ref.deref();
    if (catalog === undefined || !catalog.has(key)) continue;
    if (found !== undefined) return undefined;
    found = catalog;
  }
  return found;
}
