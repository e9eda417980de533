/**
 * Deprecated names: the names `@nestarc/safe-response` gave to what this
 * library exports under another name, kept so that code migrating from it
 * compiles with only its import lines changed (docs/migration.md). Each is
 * the renamed export itself; they go in the next major version.
 *
 * @module
 */
import { DEFAULT_ERROR_CODES, DEFAULT_PROBLEM_TITLES } from "./http_status.ts";
import { I18nServiceAdapter, type TranslatingService } from "./i18n_adapter.ts";

/**
 * The default error code of each mapped HTTP status.
 *
 * @deprecated Use `DEFAULT_ERROR_CODES` (its name in `@nestarc/safe-response`
 * was `DEFAULT_ERROR_CODE_MAP`).
 *
 * @example
 * ```ts
 * import { DEFAULT_ERROR_CODES } from "@saferoute/api-kit/safe-response";
 * DEFAULT_ERROR_CODES[404]; // "NOT_FOUND"
 * ```
 */
export const DEFAULT_ERROR_CODE_MAP: Readonly<Record<number, string>> = DEFAULT_ERROR_CODES;

/**
 * The default problem title of each mapped HTTP status.
 *
 * @deprecated Use `DEFAULT_PROBLEM_TITLES` (its name in
 * `@nestarc/safe-response` was `DEFAULT_PROBLEM_TITLE_MAP`).
 *
 * @example
 * ```ts
 * import { DEFAULT_PROBLEM_TITLES } from "@saferoute/api-kit/safe-response";
 * DEFAULT_PROBLEM_TITLES[422]; // "Unprocessable Entity"
 * ```
 */
export const DEFAULT_PROBLEM_TITLE_MAP: Readonly<Record<number, string>> = DEFAULT_PROBLEM_TITLES;

/**
 * An i18n service the built-in adapter can wrap.
 *
 * @deprecated Use `TranslatingService` (its name in `@nestarc/safe-response`
 * was `I18nServiceLike`).
 *
 * @example
 * ```ts
 * import type { TranslatingService } from "@saferoute/api-kit/safe-response";
 * const service: TranslatingService = { translate: (key) => key.toUpperCase() };
 * ```
 */
export type I18nServiceLike = TranslatingService;

/**
 * The built-in adapter over an i18n service (nestjs-i18n's `I18nService`).
 * Unlike `@nestarc/safe-response`'s, it reads only the language an i18n
 * middleware set (`i18nLang`), not `Accept-Language` (see docs/migration.md).
 *
 * @deprecated Use `I18nServiceAdapter` (its name in `@nestarc/safe-response`
 * was `NestI18nAdapter`).
 *
 * @example
 * ```ts
 * import { I18nServiceAdapter } from "@saferoute/api-kit/safe-response";
 * const adapter = new I18nServiceAdapter({ translate: (key) => key });
 * ```
 */
export const NestI18nAdapter: typeof I18nServiceAdapter = I18nServiceAdapter;

/**
 * An instance of the built-in i18n adapter.
 *
 * @deprecated Use `I18nServiceAdapter` (its name in `@nestarc/safe-response`
 * was `NestI18nAdapter`).
 *
 * @example
 * ```ts
 * import { I18nServiceAdapter } from "@saferoute/api-kit/safe-response";
 * const adapter: I18nServiceAdapter = new I18nServiceAdapter({ translate: (key) => key });
 * ```
 */
export type NestI18nAdapter = I18nServiceAdapter;
