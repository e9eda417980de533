/**
 * `<api-keys-manager>`: a standard custom element, with no dependencies, for
 * the page where an app's customers list, create, copy, rotate, rename and
 * revoke their API keys over the admin routes the app mounts
 * (`./api-keys/admin`). A browser module: importing it defines the element as
 * `api-keys-manager` (when the page has no element of that name yet).
 *
 * @example
 * ```ts
 * import { ApiKeysManagerElement } from "@saferoute/api-kit/client/elements";
 * const manager = document.querySelector("api-keys-manager") as ApiKeysManagerElement;
 * manager.getToken = () => sessionToken();
 * manager.i18n = { title: "Clés d'API" };
 * declare function sessionToken(): string;
 * ```
 *
 * @module
 */
import { ApiKeysManagerElement } from "./api_keys_manager.ts";

export { ApiKeysManagerElement };
export {
  API_KEYS_MANAGER_STRINGS,
  type ApiKeysManagerStrings,
  type PluralForms,
  type PluralString,
} from "./strings.ts";

/**
 * The element's tag for `HTMLElementTagNameMap`. JSR packages may not augment
 * global types, so the app adds it once; then `document.querySelector` and
 * `document.createElement` know the element.
 *
 * @example
 * ```ts
 * import type { ApiKeysManagerTagNameMap } from "@saferoute/api-kit/client/elements";
 * declare global {
 *   interface HTMLElementTagNameMap extends ApiKeysManagerTagNameMap {}
 * }
 * ```
 */
export interface ApiKeysManagerTagNameMap {
  /** `<api-keys-manager>`. */
  "api-keys-manager": ApiKeysManagerElement;
}

/**
 * Defines the element under `name` unless that name is taken; a no-op where
 * there is no `customElements` registry.
 *
 * @example
 * ```ts
 * import { defineApiKeysManager } from "@saferoute/api-kit/client/elements";
 * defineApiKeysManager("my-keys");
 * ```
 */
export function defineApiKeysManager(name = "api-keys-manager"): void {
  const registry = globalThis.customElements;
  if (registry && !registry.get(name)) {
    registry.define(
      name,
      name === "api-keys-manager" ? ApiKeysManagerElement : class extends ApiKeysManagerElement {},
    );
  }
}

defineApiKeysManager();
