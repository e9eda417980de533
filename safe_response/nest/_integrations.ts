/**
 * Discovery of the optional integrations in the application's own container:
 * nestjs-i18n's `I18nService` (option `i18n: true`) and nestjs-cls's
 * `ClsService` (option `context`), found by the name of the provider's class
 * token. The library never imports either package, so it can never load a
 * second copy whose class would not match the application's provider.
 *
 * @module
 */
import type { ModulesContainer } from "@nestjs/core";
import { I18nServiceAdapter, type TranslatingService } from "../i18n_adapter.ts";
import type { ResponderHooks, ResponderLogger } from "../responder.ts";
import type { SafeResponseSettings } from "../settings.ts";

type Bag = Record<string, unknown>;

/** The first provider instance whose class is named `className`, or `undefined`. */
function findProvider(modules: ModulesContainer, className: string): unknown {
  for (const module of modules.values()) {
    for (const wrapper of module.providers.values()) {
      const token = wrapper.token as { name?: unknown } | string | symbol;
      const tokenName = typeof token === "function" ? token.name : token;
      if (tokenName === className && wrapper.instance != null) return wrapper.instance;
    }
  }
  return undefined;
}

const hasMethod = (value: unknown, name: string): value is Bag =>
  typeof value === "object" && value !== null && typeof (value as Bag)[name] === "function";

/**
 * Fills `hooks` with the integrations the settings ask for, warning through
 * `logger` when one is not in the container (the feature is then off).
 */
export function discoverIntegrations(
  modules: ModulesContainer,
  settings: SafeResponseSettings,
  hooks: ResponderHooks,
  logger: ResponderLogger,
): void {
  if (settings.i18n === "auto") {
    const service = findProvider(modules, "I18nService");
    if (hasMethod(service, "translate")) {
      hooks.i18n = new I18nServiceAdapter(service as unknown as TranslatingService);
    } else {
      logger.warn(
        "option `i18n: true`: no nestjs-i18n I18nService found; messages are not translated",
      );
    }
  }
  if (settings.context !== undefined) {
    const cls = findProvider(modules, "ClsService");
    if (hasMethod(cls, "get")) hooks.store = (cls.get as () => unknown).bind(cls);
    else logger.warn("option `context`: no nestjs-cls ClsService found; context meta is off");
  }
}
