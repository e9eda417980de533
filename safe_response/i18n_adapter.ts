/**
 * Translation of response messages: the adapter contract and the built-in adapter.
 * @module
 */
import { callAppFunction } from "./_app_functions.ts";

/**
 * Options passed to {@link I18nAdapter.translate}.
 */
export interface I18nTranslateOptions {
  /** Interpolation arguments. */
  args?: Record<string, unknown>;
  /** Target language. */
  lang?: string;
}

/**
 * Translates messages in the language of a request.
 * @example
 * ```ts
 * import type { I18nAdapter } from "@saferoute/api-kit/safe-response";
 * const adapter: I18nAdapter = {
 *   translate: (key, options) => (options?.lang === "fr" && key === "hello" ? "bonjour" : key),
 *   resolveLanguage: () => "fr",
 * };
 * ```
 */
export interface I18nAdapter {
  /** The translation of `key`, or `key` itself when there is none. */
  translate(key: string, options?: I18nTranslateOptions): string;
  /** The language of `request` (`undefined` lets the service choose). */
  resolveLanguage(request: unknown): string | undefined;
}

/** An i18n service the built-in adapter can wrap (e.g. nestjs-i18n's `I18nService`). */
export interface TranslatingService {
  /** Translates `key`. */
  translate(key: string, options?: I18nTranslateOptions): unknown;
}

type Bag = Record<string, unknown>;

/**
 * Built-in adapter over an i18n service (nestjs-i18n's `I18nService` fits): the language is the
 * request's `i18nLang`. `translate` throws when the service throws or returns a promise.
 * @example
 * ```ts
 * import { I18nServiceAdapter } from "@saferoute/api-kit/safe-response";
 * const adapter = new I18nServiceAdapter({
 *   translate: (key, options) => (options?.lang === "fr" ? `fr:${key}` : key),
 * });
 * adapter.translate("hello", { lang: adapter.resolveLanguage({ i18nLang: "fr" }) }); // "fr:hello"
 * ```
 */
export class I18nServiceAdapter implements I18nAdapter {
  readonly #service: TranslatingService;

  /** Wraps `service`. */
  constructor(service: TranslatingService) {
    this.#service = service;
  }

  /** Translates `key`; options without a language let the service choose. */
  translate(key: string, options?: I18nTranslateOptions): string {
    const passed: I18nTranslateOptions = {};
    if (options?.lang !== undefined) passed.lang = options.lang;
    if (options?.args !== undefined) passed.args = options.args;
    const translated = callAppFunction(
      "the i18n service's translate",
      () => this.#service.translate(key, passed),
    );
    if (!translated.ok) throw new Error(translated.failure);
    return typeof translated.value === "string" ? translated.value : key;
  }

  /** The `i18nLang` an i18n middleware set on the request, if any. */
  resolveLanguage(request: unknown): string | undefined {
    if (typeof request !== "object" || request === null) return undefined;
    const req = request as Bag;
    const raw = req.raw as Bag | undefined;
    const lang = req.i18nLang ?? raw?.i18nLang;
    return typeof lang === "string" ? lang : undefined;
  }
}
