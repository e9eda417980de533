/**
 * The `@nestarc/safe-response` names of renamed exports, kept until the next major (docs/migration.md).
 * @module
 */
import { DEFAULT_ERROR_CODES, DEFAULT_PROBLEM_TITLES } from "./http_status.ts";
import { I18nServiceAdapter, type TranslatingService } from "./i18n_adapter.ts";

/** @deprecated Use `DEFAULT_ERROR_CODES`. */
export const DEFAULT_ERROR_CODE_MAP: Readonly<Record<number, string>> = DEFAULT_ERROR_CODES;

/** @deprecated Use `DEFAULT_PROBLEM_TITLES`. */
export const DEFAULT_PROBLEM_TITLE_MAP: Readonly<Record<number, string>> = DEFAULT_PROBLEM_TITLES;

/** @deprecated Use `TranslatingService`. */
export type I18nServiceLike = TranslatingService;

/** @deprecated Use `I18nServiceAdapter` (it reads only the language an i18n middleware set). */
export const NestI18nAdapter: typeof I18nServiceAdapter = I18nServiceAdapter;

/** @deprecated Use `I18nServiceAdapter`. */
export type NestI18nAdapter = I18nServiceAdapter;
