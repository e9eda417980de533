/**
 * The `@nestarc/safe-response` names of renamed exports, kept until the next major (docs/migration.md).
 *
 * @module
 */
import { DEFAULT_ERROR_CODES, DEFAULT_PROBLEM_TITLES } from "./http_status.ts";
import { I18nServiceAdapter, type TranslatingService } from "./i18n_adapter.ts";

/**
 * @deprecated Use `DEFAULT_ERROR_CODES`.
 * @example
 * ```ts
 * import { DEFAULT_ERROR_CODES } from "@saferoute/api-kit/safe-response";
 * DEFAULT_ERROR_CODES[404]; // "NOT_FOUND"
 * ```
 */
export const DEFAULT_ERROR_CODE_MAP: Readonly<Record<number, string>> = DEFAULT_ERROR_CODES;

/**
 * @deprecated Use `DEFAULT_PROBLEM_TITLES`.
 * @example
 * ```ts
 * import { DEFAULT_PROBLEM_TITLES } from "@saferoute/api-kit/safe-response";
 * DEFAULT_PROBLEM_TITLES[422]; // "Unprocessable Entity"
 * ```
 */
export const DEFAULT_PROBLEM_TITLE_MAP: Readonly<Record<number, string>> = DEFAULT_PROBLEM_TITLES;

/**
 * @deprecated Use `TranslatingService`.
 * @example
 * ```ts
 * import type { TranslatingService } from "@saferoute/api-kit/safe-response";
 * const service: TranslatingService = { translate: (key) => key.toUpperCase() };
 * ```
 */
export type I18nServiceLike = TranslatingService;

/**
 * @deprecated Use `I18nServiceAdapter` (it reads only the language an i18n
 * middleware set, not `Accept-Language`).
 * @example
 * ```ts
 * import { I18nServiceAdapter } from "@saferoute/api-kit/safe-response";
 * const adapter = new I18nServiceAdapter({ translate: (key) => key });
 * ```
 */
export const NestI18nAdapter: typeof I18nServiceAdapter = I18nServiceAdapter;

/**
 * @deprecated Use `I18nServiceAdapter`.
 * @example
 * ```ts
 * import { I18nServiceAdapter } from "@saferoute/api-kit/safe-response";
 * const adapter: I18nServiceAdapter = new I18nServiceAdapter({ translate: (key) => key });
 * ```
 */
export type NestI18nAdapter = I18nServiceAdapter;
