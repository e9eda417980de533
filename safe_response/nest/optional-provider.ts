/**
 * Finds a provider of an optional peer package (nestjs-i18n, nestjs-cls) in
 * the application's own container, by the name of the provider's class token. The library
 * never imports the package, so it can never load a second copy whose class
 * would not match the application's provider.
 *
 * @module
 */
import type { ModulesContainer } from "@nestjs/core";

/** The first provider instance whose class is named `className`, or `undefined`. */
export function findProviderByClassName(
  modules: ModulesContainer,
  className: string,
): unknown {
  for (const module of modules.values()) {
    for (const wrapper of module.providers.values()) {
      const token = wrapper.token as { name?: unknown } | string | symbol;
      const tokenName = typeof token === "function" ? token.name : token;
      if (tokenName === className && wrapper.instance != null) return wrapper.instance;
    }
  }
  return undefined;
}
