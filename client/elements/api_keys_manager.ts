/**
 * `<api-keys-manager>`: the customer's API-keys settings page as one custom
 * element over the admin routes (`./api-keys/admin`).
 *
 * @module
 */
import { AdminApiError, type Auth, call } from "./_api.ts";
import {
  configOf,
  expiresSoon,
  fill,
  keysOf,
  type KeyView,
  type ManagerConfig,
  type Preset,
  usageOf,
} from "./_model.ts";
import { STYLES } from "./_styles.ts";
import { API_KEYS_MANAGER_STRINGS, type ApiKeysManagerStrings } from "./strings.ts";

type Child = Node | string | null | undefined | false;
type Props = Record<string, string | boolean | undefined | ((event: Event) => void)>;

/** An element with attributes, listeners (`on*`) and children. */
function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (typeof value === "function") element.addEventListener(name.slice(2), value);
    else if (value === true) element.setAttribute(name, "");
    else if (typeof value === "string") element.setAttribute(name, value);
  }
  for (const child of children) {
    if (child !== null && child !== undefined && child !== false) element.append(child);
  }
  return element;
}

/** An SVG element with attributes. */
function svg<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attributes: Record<string, string | number>,
): SVGElementTagNameMap[K] {
  const element = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  return element;
}

/** The hourly counts (oldest first, 24) as a bar chart named `label`. */
function chart(counts: number[], label: string): SVGSVGElement {
  const root = svg("svg", {
    viewBox: "0 0 72 18",
    width: 72,
    height: 18,
    role: "img",
    "aria-label": label,
    part: "usage-chart",
  });
  const max = Math.max(1, ...counts);
  counts.forEach((count, index) => {
    const height = count > 0 ? Math.max(1, Math.round((count / max) * 18)) : 0;
    root.append(
      svg("rect", { x: index * 3, y: 18 - height, width: 2, height, fill: "currentColor" }),
    );
  });
  return root;
}

/**
 * Where there is no `HTMLElement` (a server importing the module), a bare
 * class stands in for it while the element class is defined, then goes.
 */
const standIn = globalThis.HTMLElement === undefined ? class {} : undefined;
if (standIn !== undefined) Object.assign(globalThis, { HTMLElement: standIn });

/**
 * Lists the tenant's API keys and creates, reveals once, rotates, renames and
 * revokes them through the admin routes at `base-url`. Authenticates with the
 * page's cookies (`credentials` attribute: `same-origin` by default, or
 * `include`) or a bearer token from {@linkcode ApiKeysManagerElement.getToken}.
 * Fires `api-key-created`, `api-key-rotated`, `api-key-renamed`,
 * `api-key-revoked` (detail: `id`, `name`, `prefix`; never the secret) and
 * `api-keys-error` (detail: `code`, `message`).
 *
 * Importing it where there is no DOM (a server) does not throw.
 *
 * @example
 * ```ts
 * import "@saferoute/api-kit/client/elements";
 * const manager = document.createElement("api-keys-manager");
 * manager.setAttribute("base-url", "/account/api-keys");
 * document.body.append(manager);
 * ```
 */
export class ApiKeysManagerElement extends HTMLElement {
  /** Attributes whose change reloads the element. */
  static observedAttributes: string[] = ["base-url", "credentials"];
  /** Returns the bearer token for each request; unset, the page's cookies authenticate. */
  getToken?: (() => string | Promise<string>) | undefined;
  #strings: ApiKeysManagerStrings = { ...API_KEYS_MANAGER_STRINGS };
  #overrides: Partial<ApiKeysManagerStrings> = {};
  #config: ManagerConfig | null = null;
  #keys: KeyView[] = [];
  #usage = new Map<string, number[]>();
  #state: "idle" | "loading" | "ready" | "error" = "idle";
  #loads = 0;
  #onClose: (() => void) | undefined;
  #shadow: ShadowRoot;
  #title = h("h2", { id: "t", part: "title" });
  #create = h("button", {
    type: "button",
    class: "p",
    part: "button create-button",
    disabled: true,
  });
  #status = h("p", { role: "status", part: "status", class: "m" });
  #errorText = h("span");
  #retry = h("button", { type: "button", part: "button" });
  #error = h(
    "div",
    { role: "alert", part: "error", class: "alert" },
    this.#errorText,
    " ",
    this.#retry,
  );
  #body = h("div", { part: "body" });
  #dialog = h("dialog", { part: "dialog" });

  /** Builds the shadow root. */
  constructor() {
    super();
    this.#shadow = this.attachShadow({ mode: "open" });
    this.#create.addEventListener("click", () => this.#openCreate());
    this.#retry.addEventListener("click", () => this.refresh());
    this.#dialog.addEventListener("close", () => {
      if (!this.#dialog.open) this.#close();
    });
    this.#shadow.append(
      h("style", {}, STYLES),
      h(
        "section",
        { part: "root", "aria-labelledby": "t" },
        h("header", { part: "header" }, this.#title, this.#create),
        this.#status,
        this.#error,
        this.#body,
        this.#dialog,
      ),
    );
    this.#render();
  }

  /** The replaced strings (see `ApiKeysManagerStrings`); the others stay English. */
  get i18n(): Partial<ApiKeysManagerStrings> {
    return { ...this.#overrides };
  }
  set i18n(strings: Partial<ApiKeysManagerStrings>) {
    this.#overrides = Object.fromEntries(
      Object.entries(strings ?? {}).filter(([name, value]) =>
        name in API_KEYS_MANAGER_STRINGS && typeof value === "string"
      ),
    );
    this.#strings = { ...API_KEYS_MANAGER_STRINGS, ...this.#overrides };
    this.#render();
  }

  /** Loads on connection. */
  connectedCallback(): void {
    if (this.#state === "idle") this.refresh();
  }

  /** Reloads when `base-url` or `credentials` change. */
  attributeChangedCallback(): void {
    this.#config = null;
    if (this.isConnected) this.refresh();
  }

  /** Reloads the configuration (once) and the keys. */
  async refresh(): Promise<void> {
    const load = ++this.#loads;
    this.#state = "loading";
    this.#render();
    try {
      const [config, keys] = await Promise.all([
        this.#config ?? this.#call("/config").then(configOf),
        this.#call("/keys").then(keysOf),
      ]);
      if (load !== this.#loads) return;
      this.#config = config;
      this.#keys = keys;
      this.#state = "ready";
      this.#errorText.textContent = "";
      this.#render();
      if (config.capabilities.usage) this.#loadUsage(keys, load);
    } catch (error) {
      if (load !== this.#loads) return;
      this.#state = "error";
      this.#fail(error);
    }
  }

  #call(path: string, method?: string, body?: unknown): Promise<unknown> {
    const credentials = this.getAttribute("credentials") === "include" ? "include" : "same-origin";
    const auth: Auth = { credentials, getToken: this.getToken, csrf: this.#config?.csrf };
    return call(this.getAttribute("base-url") ?? "", path, auth, method, body);
  }

  async #loadUsage(keys: KeyView[], load: number): Promise<void> {
    await Promise.all(
      keys.filter((key) => key.status !== "revoked").map(async (key) => {
        try {
          const path = `/keys/${encodeURIComponent(key.id)}/usage`;
          const counts = usageOf(await this.#call(path), Date.now());
          if (load === this.#loads) this.#usage.set(key.id, counts);
        } catch {
          // No chart for this key.
        }
      }),
    );
    if (load === this.#loads) this.#render();
  }

  #emit(name: string, detail: unknown): void {
    this.dispatchEvent(new CustomEvent(name, { detail, bubbles: true, composed: true }));
  }

  #announce(text: string): void {
    this.#status.textContent = "";
    setTimeout(() => (this.#status.textContent = text), 50);
  }

  #fail(error: unknown): void {
    const { code, message } = error instanceof AdminApiError
      ? error
      : new AdminApiError("ERROR", "unexpected error");
    this.#emit("api-keys-error", { code, message });
    const text = `${this.#strings.error} ${message}`;
    const inDialog = this.#dialog.open && this.#dialog.querySelector<HTMLElement>(".alert");
    if (inDialog) {
      inDialog.textContent = text;
      return;
    }
    this.#errorText.textContent = text;
    this.#render();
  }

  #date(date: Date | null, none: string): string {
    if (!date) return none;
    return new Intl.DateTimeFormat(this.#lang(), {
      dateStyle: "medium",
    }).format(date);
  }

  #render(): void {
    const s = this.#strings;
    this.#title.textContent = s.title;
    this.#create.textContent = s.create;
    this.#create.disabled = this.#config === null;
    this.#retry.textContent = s.retry;
    this.#error.hidden = this.#errorText.textContent === "";
    if (this.#keys.length > 0) this.#body.replaceChildren(this.#table());
    else if (this.#state === "loading") {
      this.#body.replaceChildren(h("p", { class: "m" }, s.loading));
    } else if (this.#state === "ready") {
      this.#body.replaceChildren(h("p", { part: "empty", class: "m" }, s.empty));
    } else this.#body.replaceChildren();
  }

  #table(): HTMLTableElement {
    const s = this.#strings;
    const usage = this.#config?.capabilities.usage === true;
    const credits = this.#keys.some((key) => key.credits !== null);
    const statuses: Record<string, string> = {
      active: s.statusActive,
      rotating: s.statusRotating,
      expired: s.statusExpired,
      revoked: s.statusRevoked,
    };
    const headings = [s.name, s.prefix, s.environment, s.scopes, s.status, s.created, s.lastUsed];
    if (usage) headings.push(s.usage);
    if (credits) headings.push(s.credits);
    headings.push(s.actions);
    const now = Date.now();
    return h(
      "table",
      { part: "table" },
      h("thead", {}, h("tr", {}, ...headings.map((text) => h("th", { scope: "col" }, text)))),
      h(
        "tbody",
        {},
        ...this.#keys.map((key) => {
          const counts = this.#usage.get(key.id);
          const total = counts?.reduce((sum, count) => sum + count, 0) ?? 0;
          const live = key.status !== "revoked" && key.status !== "expired";
          return h(
            "tr",
            { part: "key" },
            h(
              "th",
              { scope: "row" },
              key.name,
              expiresSoon(key, now) && h("span", { class: "badge", part: "badge" }, s.expiresSoon),
            ),
            h("td", {}, h("code", { part: "prefix" }, key.prefix)),
            h("td", {}, key.environment),
            h("td", {}, key.scopes.join(", ")),
            h("td", {}, statuses[key.status] ?? key.status),
            h("td", {}, this.#date(key.createdAt, "")),
            h(
              "td",
              { class: key.lastUsedAt ? undefined : "m" },
              this.#date(key.lastUsedAt, s.neverUsed),
            ),
            usage &&
              h(
                "td",
                {},
                counts ? chart(counts, fill(s.usageLabel, { count: String(total) })) : "",
              ),
            credits &&
              h(
                "td",
                {},
                key.credits === null ? "" : new Intl.NumberFormat(this.#lang()).format(key.credits),
              ),
            h(
              "td",
              {},
              live && this.#config?.capabilities.rename === true &&
                this.#action(s.rename, key, () => this.#openRename(key)),
              live && this.#action(s.rotate, key, () => this.#openRotate(key)),
              live && this.#action(s.revoke, key, () => this.#openRevoke(key), "x"),
            ),
          );
        }),
      ),
    );
  }

  #action(text: string, key: KeyView, run: () => void, style = ""): HTMLButtonElement {
    return h("button", {
      type: "button",
      class: style,
      part: "button action",
      "aria-label": `${text} ${key.name}`,
      onclick: run,
    }, text);
  }

  /** Closes the dialog, empties it and runs its `onClose`. */
  #close(): void {
    if (this.#dialog.open) this.#dialog.close();
    this.#dialog.replaceChildren();
    const onClose = this.#onClose;
    this.#onClose = undefined;
    onClose?.();
    if (!this.#shadow.activeElement) this.#create.focus();
  }

  /** Opens the dialog; `focus` gets the focus, `onClose` runs when it closes. */
  #open(
    title: string,
    alert: boolean,
    content: Node[],
    focus: HTMLElement,
    onClose?: () => void,
  ): void {
    const dialog = this.#dialog;
    dialog.replaceChildren(h("h3", { id: "dt" }, title), ...content);
    dialog.setAttribute("role", alert ? "alertdialog" : "dialog");
    dialog.setAttribute("aria-labelledby", "dt");
    if (alert) dialog.setAttribute("aria-describedby", "dd");
    else dialog.removeAttribute("aria-describedby");
    this.#onClose = onClose;
    dialog.showModal();
    focus.focus();
  }

  /** A form with a `role="alert"` line and Cancel + submit buttons; `submit` runs on submit. */
  #form(fields: Child[], label: string, submit: () => Promise<void>, style = "p"): {
    form: HTMLFormElement;
    cancel: HTMLButtonElement;
    confirm: HTMLButtonElement;
  } {
    const cancel = h("button", {
      type: "button",
      part: "button",
      onclick: () => this.#close(),
    }, this.#strings.cancel);
    const confirm = h("button", { type: "submit", class: style, part: "button" }, label);
    const form = h(
      "form",
      {
        onsubmit: async (event) => {
          event.preventDefault();
          if (confirm.disabled) return;
          confirm.disabled = true;
          try {
            await submit();
          } catch (error) {
            this.#fail(error);
          } finally {
            confirm.disabled = false;
          }
        },
      },
      ...fields,
      h("p", { class: "alert", role: "alert" }),
      h("div", { class: "row" }, cancel, confirm),
    );
    return { form, cancel, confirm };
  }

  /** A select of presets, `preferred` chosen when offered. */
  #select(options: Preset[], preferred = ""): HTMLSelectElement {
    return h(
      "select",
      {},
      ...options.map(({ value, label }) =>
        h(
          "option",
          { value, selected: value === preferred },
          label === value ? this.#preset(value) : label,
        )
      ),
    );
  }

  /** A preset's label: `none`, `never`, or a duration such as `24h` in the page's language. */
  #preset(value: string): string {
    if (value === "none") return this.#strings.presetNone;
    if (value === "never") return this.#strings.presetNever;
    const unit = ({ h: "hour", d: "day", w: "week", y: "year" } as Record<string, string>)[
      value.slice(-1)
    ];
    const count = Number(value.slice(0, -1));
    if (!unit || !/^\d{1,4}$/.test(value.slice(0, -1))) return value;
    return new Intl.NumberFormat(this.#lang(), { style: "unit", unit, unitDisplay: "long" })
      .format(count);
  }

  #lang(): string | undefined {
    return document.documentElement.lang || undefined;
  }

  #openCreate(): void {
    const config = this.#config;
    if (!config) return;
    const s = this.#strings;
    const name = h("input", { required: true, maxlength: "200", autocomplete: "off" });
    const environment = this.#select(
      config.environments.map((value) => ({ value, label: value })),
    );
    const scopes = config.scopes.map(({ scope, description }) => ({
      scope,
      box: h("input", { type: "checkbox", value: scope }),
      description,
    }));
    const expiry = this.#select(config.expiryPresets, "never");
    const { form } = this.#form(
      [
        h("label", {}, s.name, name),
        h("label", {}, s.environment, environment),
        scopes.length > 0 &&
        h(
          "fieldset",
          {},
          h("legend", {}, s.scopes),
          ...scopes.map(({ scope, box, description }) =>
            h(
              "label",
              { class: "check" },
              box,
              h("code", {}, scope),
              description && h("span", { class: "m" }, ` ${description}`),
            )
          ),
        ),
        h("label", {}, s.expiry, expiry),
      ],
      s.create,
      async () => {
        const created = await this.#call("/keys", "POST", {
          name: name.value,
          environment: environment.value,
          scopes: scopes.filter(({ box }) => box.checked).map(({ scope }) => scope),
          expiresIn: expiry.value,
        });
        this.#reveal(created, "api-key-created");
      },
    );
    this.#open(s.create, false, [form], name);
  }

  #openRotate(key: KeyView): void {
    const s = this.#strings;
    const grace = this.#select(this.#config?.gracePresets ?? [], "24h");
    const { form } = this.#form([h("label", {}, s.grace, grace)], s.rotate, async () => {
      const rotated = await this.#call(`/keys/${encodeURIComponent(key.id)}/rotate`, "POST", {
        grace: grace.value,
      });
      this.#reveal(rotated, "api-key-rotated");
    });
    this.#open(`${s.rotate}: ${key.name}`, false, [form], grace);
  }

  #openRename(key: KeyView): void {
    const s = this.#strings;
    const name = h("input", {
      required: true,
      maxlength: "200",
      autocomplete: "off",
      value: key.name,
    });
    const { form } = this.#form([h("label", {}, s.name, name)], s.save, async () => {
      await this.#call(`/keys/${encodeURIComponent(key.id)}`, "PATCH", { name: name.value });
      this.#emit("api-key-renamed", { id: key.id, name: name.value, prefix: key.prefix });
      this.#close();
      await this.refresh();
    });
    this.#open(`${s.rename}: ${key.name}`, false, [form], name);
  }

  #openRevoke(key: KeyView): void {
    const s = this.#strings;
    const typed = h("input", { autocomplete: "off", "aria-describedby": "dd" });
    const { form, cancel, confirm } = this.#form(
      [
        h("p", { id: "dd" }, fill(s.revokePrompt, { name: key.name })),
        h("label", {}, s.name, typed),
      ],
      s.revoke,
      async () => {
        await this.#call(`/keys/${encodeURIComponent(key.id)}`, "DELETE");
        this.#emit("api-key-revoked", { id: key.id, name: key.name, prefix: key.prefix });
        this.#close();
        this.#announce(s.revoked);
        await this.refresh();
      },
      "x p",
    );
    confirm.disabled = true;
    typed.addEventListener("input", () => (confirm.disabled = typed.value !== key.name));
    this.#open(`${s.revoke}: ${key.name}`, true, [form], cancel);
  }

  /** Shows a new key's secret once; closing the dialog drops it. */
  #reveal(data: unknown, event: string): void {
    const created = keysOf([(data as { record?: unknown } | null)?.record])[0];
    let secret: string | null = typeof (data as { key?: unknown })?.key === "string"
      ? (data as { key: string }).key
      : null;
    if (created) this.#emit(event, { id: created.id, name: created.name, prefix: created.prefix });
    this.#close();
    void this.refresh();
    if (secret === null) return;
    const s = this.#strings;
    const copy = h("button", {
      type: "button",
      class: "p",
      part: "button copy-button",
      onclick: async () => {
        try {
          await navigator.clipboard.writeText(secret ?? "");
          this.#announce(s.copied);
        } catch {
          this.#announce(s.copyFailed);
        }
      },
    }, s.copy);
    this.#open(
      s.revealTitle,
      true,
      [
        h("p", { id: "dd" }, h("strong", {}, s.revealWarning)),
        h("code", { class: "secret", part: "secret" }, secret),
        h(
          "div",
          { class: "row" },
          copy,
          h(
            "button",
            { type: "button", part: "button", onclick: () => this.#close() },
            s.done,
          ),
        ),
      ],
      copy,
      () => (secret = null),
    );
  }
}

if (standIn !== undefined) Reflect.deleteProperty(globalThis, "HTMLElement");
