/**
 * Deprecated names of the Nest binding: the names `@nestarc/api-keys` gave to
 * what this binding has under another name (docs/migration.md). They go in
 * the next major version.
 *
 * @module
 */
import {
  API_KEYS_ENVIRONMENT_METADATA,
  API_KEYS_MODULE_OPTIONS,
  API_KEYS_SCOPE_METADATA,
} from "./api_keys.constants.ts";

/**
 * The route metadata key of `RequireScope` (`"lib:api-keys:scope"`).
 *
 * @deprecated Use `API_KEYS_SCOPE_METADATA` (the same value).
 */
export const SCOPE_METADATA: typeof API_KEYS_SCOPE_METADATA = API_KEYS_SCOPE_METADATA;

/**
 * The route metadata key of `RequireEnvironment` (`"lib:api-keys:environment"`).
 *
 * @deprecated Use `API_KEYS_ENVIRONMENT_METADATA` (the same value).
 */
export const ENVIRONMENT_METADATA: typeof API_KEYS_ENVIRONMENT_METADATA =
  API_KEYS_ENVIRONMENT_METADATA;

/**
 * The injection token of the `ApiKeysModuleOptions` the module was given
 * (after `forRootAsync`'s factory has run).
 *
 * @deprecated Inject `ApiKeysService` instead of reading the options; the
 * token stays for code written against `@nestarc/api-keys`.
 */
export const API_KEYS_OPTIONS: symbol = API_KEYS_MODULE_OPTIONS;
