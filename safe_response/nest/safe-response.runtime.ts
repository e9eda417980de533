/**
 * Shared runtime of the interceptor and the exception filter: settings, the
 * per-route plan cache, logging (API keys redacted), calls to the
 * application's functions, translation, and the meta both add (rate limit,
 * request context).
 *
 * @module
 */
import { type ArgumentsHost, Inject, Injectable, Logger, type OnModuleInit } from "@nestjs/common";
import { ApplicationConfig, ModulesContainer, Reflector } from "@nestjs/core";
import { redactApiKeys } from "../../api_keys/key_format.ts";
import { type AppCallOutcome, callAppFunction } from "../app_functions.ts";
import { type I18nAdapter, I18nServiceAdapter, type TranslatingService } from "../i18n_adapter.ts";
import { parseRateLimitHeaders } from "../rate_limit.ts";
import type { SafeResponseSettings } from "../settings.ts";
import { requestVersion } from "./api-version.ts";
import { getResponseHeader, type RequestLike, type ResponseLike } from "./http-exchange.ts";
import { findProviderByClassName } from "./optional-provider.ts";
import {
  readRoutePlan,
  type RouteController,
  type RouteHandler,
  type RoutePlan,
} from "./route-plan.ts";
import { SAFE_RESPONSE_SETTINGS } from "./safe-response.constants.ts";

type Bag = Record<string, unknown>;
type StoreReader = () => Bag | undefined;

const isBag = (value: unknown): value is Bag => typeof value === "object" && value !== null;

const hasMethods = (value: unknown, ...names: string[]): value is Bag =>
  typeof value === "object" && value !== null &&
  names.every((name) => typeof (value as Bag)[name] === "function");

/** Runtime state shared by `SafeResponseInterceptor` and `SafeResponseFilter`. */
@Injectable()
export class SafeResponseRuntime implements OnModuleInit {
  readonly #logger = new Logger("SafeResponse");
  #i18n?: I18nAdapter;
  #store?: StoreReader;
  #stampedAt = NaN;
  #stamp = "";
  readonly #plans = new WeakMap<RouteController, WeakMap<RouteHandler, RoutePlan>>();

  constructor(
    @Inject(SAFE_RESPONSE_SETTINGS) readonly settings: SafeResponseSettings,
    @Inject(Reflector) private readonly reflector: Reflector,
    @Inject(ModulesContainer) private readonly modules: ModulesContainer,
    @Inject(ApplicationConfig) private readonly appConfig: ApplicationConfig,
  ) {}

  /** Resolves the optional integrations (nestjs-i18n, nestjs-cls) once. */
  onModuleInit(): void {
    const { i18n, context } = this.settings;
    if (i18n === "auto") {
      const service = findProviderByClassName(this.modules, "I18nService");
      if (hasMethods(service, "translate")) {
        this.#i18n = new I18nServiceAdapter(service as unknown as TranslatingService);
      } else {
        this.#logger.warn(
          "option `i18n: true`: no nestjs-i18n I18nService found; messages are not translated",
        );
      }
    } else if (i18n !== undefined) {
      this.#i18n = i18n;
    }
    if (context !== undefined) {
      const cls = findProviderByClassName(this.modules, "ClsService");
      if (hasMethods(cls, "get")) {
        this.#store = (cls.get as () => Bag | undefined).bind(cls);
      } else {
        this.#logger.warn("option `context`: no nestjs-cls ClsService found; context meta is off");
      }
    }
  }

  /** The cached plan of a route, read on its first request. */
  plan(controller: RouteController, handler: RouteHandler): RoutePlan {
    let byHandler = this.#plans.get(controller);
    if (byHandler === undefined) this.#plans.set(controller, byHandler = new WeakMap());
    let plan = byHandler.get(handler);
    if (plan === undefined) {
      const versioning = this.appConfig.getVersioning();
      plan = readRoutePlan(
        this.reflector,
        controller,
        handler,
        this.settings,
        (statusCode) => this.successCode(statusCode),
        versioning,
      );
      byHandler.set(handler, plan);
      const problemDetails = this.settings.problemDetails !== undefined;
      if (
        plan.endpointProblemDetails !== undefined && plan.endpointProblemDetails !== problemDetails
      ) {
        this.warnOnce(
          plan,
          "problemDetails",
          `${plan.route}: the endpoint's problemDetails (${plan.endpointProblemDetails}) ` +
            `differs from the module option (${problemDetails}); errors are sent as ` +
            (problemDetails ? "problem details" : "error envelopes"),
        );
      }
    }
    return plan;
  }

  /**
   * `meta.apiVersion` of a request: a `version` function's result, else the
   * route's Nest version (the one the request names when it has several),
   * else a string `version`. Without a plan (errors thrown before the
   * interceptor), only the function (whose context has no handler or class)
   * and the string apply.
   */
  apiVersion(
    context: ArgumentsHost,
    request: RequestLike,
    plan: RoutePlan | undefined,
  ): string | undefined {
    const { version } = this.settings;
    if (typeof version === "function") {
      const chosen = this.optional("option `version`", () => version(context));
      if (typeof chosen === "string" && chosen !== "") return chosen;
    }
    if (plan === undefined) return typeof version === "string" ? version : undefined;
    if (plan.versions !== undefined) {
      const versioning = this.appConfig.getVersioning();
      const chosen = versioning && requestVersion(plan.versions, request, versioning);
      if (chosen !== undefined) return chosen;
    }
    return plan.apiVersion;
  }

  /**
   * The formatted `timestamp` of now. The formatter runs at most once per
   * millisecond (its input, a `Date`, has no finer resolution): formatting
   * was most of the envelope's own cost per request. Throws when it fails.
   */
  timestamp(): string {
    const now = Date.now();
    if (now !== this.#stampedAt) {
      const { dateFormatter } = this.settings;
      this.#stamp = this.required("option `dateFormatter`", () => dateFormatter(new Date(now)));
      this.#stampedAt = now;
    }
    return this.#stamp;
  }

  /** The `successCodeMapper` code of `statusCode`; throws when the mapper fails. */
  successCode(statusCode: number): string | undefined {
    const { successCodeMapper } = this.settings;
    return successCodeMapper === undefined
      ? undefined
      : this.required("option `successCodeMapper`", () => successCodeMapper(statusCode));
  }

  /**
   * The value of the application function `call` (`what` names it). A throw
   * or a returned promise throws an `Error` saying so, which the exception
   * filter logs and answers with a generic 500.
   */
  required<T>(what: string, call: () => T): T {
    const outcome = callAppFunction(what, call);
    if (outcome.ok) return outcome.value;
    throw new Error(outcome.failure);
  }

  /** The value of the application function `call`, or `undefined` when it fails (logged). */
  optional<T>(what: string, call: () => T): T | undefined {
    const outcome = this.#attempt(what, call);
    return outcome.ok ? outcome.value : undefined;
  }

  /** Calls the application function `call`, logging a failure. */
  #attempt<T>(what: string, call: () => T): AppCallOutcome<T> {
    const outcome = callAppFunction(what, call);
    if (!outcome.ok) this.logError(outcome.failure);
    return outcome;
  }

  /** Logs an error, API keys redacted from the line and the stack. */
  logError(line: string, stack?: string): void {
    this.#logger.error(redactApiKeys(line), stack === undefined ? undefined : redactApiKeys(stack));
  }

  /** Logs `message` once per route and key, unless `suppressWarnings`. */
  warnOnce(plan: RoutePlan, key: string, message: string): void {
    if (this.settings.suppressWarnings || plan.warned.has(key)) return;
    plan.warned.add(key);
    this.#logger.warn(message);
  }

  /**
   * `message` in the request's language, when i18n is on; untranslated when
   * the language or the translation cannot be had.
   */
  translate(message: string, request: RequestLike): string {
    const i18n = this.#i18n;
    if (i18n === undefined) return message;
    const lang = this.#attempt("i18n resolveLanguage", () => i18n.resolveLanguage(request));
    if (!lang.ok) return message;
    const options = typeof lang.value === "string" ? { lang: lang.value } : undefined;
    const translated = this.optional("i18n translate", () => i18n.translate(message, options));
    return typeof translated === "string" ? translated : message;
  }

  /** Adds `rateLimit` and request-context fields to `meta` (never overriding a field). */
  sharedMeta(meta: Bag | undefined, response: ResponseLike): Bag | undefined {
    const { rateLimit } = this.settings;
    if (rateLimit !== undefined) {
      const mirrored = parseRateLimitHeaders(
        (name) => getResponseHeader(response, name),
        rateLimit.headerPrefix,
      );
      if (mirrored !== undefined) (meta ??= {}).rateLimit ??= mirrored;
    }
    const read = this.#store;
    const store = read && this.optional("option `context`: reading the nestjs-cls store", read);
    if (isBag(store)) meta = this.#contextMeta(meta, store);
    return meta;
  }

  /** Adds the context fields: a value or a resolver that fails is left out (logged). */
  #contextMeta(meta: Bag | undefined, store: Bag): Bag | undefined {
    const { fields, resolver } = this.settings.context ?? {};
    const add = (name: string, value: unknown) => {
      if (value !== undefined && (meta === undefined || !(name in meta))) {
        (meta ??= {})[name] = value;
      }
    };
    if (fields !== undefined) {
      for (const [name, key] of Object.entries(fields)) {
        add(name, this.optional(`option \`context\`: store key \`${key}\``, () => store[key]));
      }
    }
    if (resolver !== undefined) {
      const what = "option `context.resolver`";
      const resolved = this.optional(what, () => resolver(store));
      if (isBag(resolved)) {
        for (const [name, value] of this.optional(what, () => Object.entries(resolved)) ?? []) {
          add(name, value);
        }
      }
    }
    return meta;
  }
}
