/**
 * `<api-keys-manager>`: the customer's API-keys settings page as one custom
 * element over the admin routes (`./api-keys/admin`).
 *
 * @module
 */
import { Activity, activityPath } from "./_activity.ts";
import { AdminApiError, type Auth, call } from "./_api.ts";
import {
  createFields,
  type DialogFields,
  renameFields,
  revokeFields,
  rotateFields,
} from "./_dialogs.ts";
import { type Child, dropStandIn, h } from "./_dom.ts";
import { answerLost, deniedState, errorString } from "./_errors.ts";
import { type Format, formatFor, overridesOf } from "./_format.ts";
import {
  activityOf,
  configOf,
  dateOf,
  fill,
  firstHour,
  type KeyPage,
  keysOf,
  type KeyView,
  type ManagerConfig,
  pageOf,
  usageOf,
} from "./_model.ts";
import { reveal } from "./_reveal.ts";
import { keyRow, keyTable, type RowAction, usageCell } from "./_row.ts";
import { type Filters, NO_FILTERS, Pager, poolText, Toolbar } from "./_toolbar.ts";
import { adoptStyles } from "./_styles.ts";
import { API_KEYS_MANAGER_STRINGS, type ApiKeysManagerStrings, type TextName } from "./strings.ts";

/** Keys per page. */
const PAGE_SIZE = 25;
/** How long a status message stays. */
const STATUS_MS = 6_000;
/** The longest `Retry-After` (seconds) a load refused with 429 waits out before loading again. */
const MAX_RETRY_AFTER_S = 60;

/**
 * Lists the tenant's API keys, 25 a page with search and filters, and creates,
 * reveals once, rotates, renames and revokes them through the admin routes at
 * `base-url`. Authenticates with the page's cookies (`credentials` attribute:
 * `same-origin` by default, or `include`) or a bearer token from
 * {@linkcode ApiKeysManagerElement.getToken}. Its color scheme follows the
 * host page's `color-scheme` (inherited), or the `theme` attribute (`light`,
 * `dark`, `auto`: the system's). Fires `api-key-created`, `api-key-rotated`,
 * `api-key-renamed`, `api-key-revoked` (detail: `id`, `name`, `prefix`; never
 * the secret) and `api-keys-error` (detail: `code`, `message`).
 *
 * @example
 * ```ts
 * import "@saferoute/api-kit/client/elements";
 * const manager = document.createElement("api-keys-manager");
 * manager.setAttribute("base-url", "/account/api-keys");
 * manager.setAttribute("theme", "auto");
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
  #page: KeyPage = { keys: [], nextCursor: null, tenantCredits: null };
  #usage = new Map<string, number[]>();
  #state: "idle" | "loading" | "ready" | "error" | "signed-out" | "forbidden" = "idle";
  #errorKey: TextName | null = null;
  /** The error string's values (`{when}` of a 429's `Retry-After`). */
  #errorValues: Record<string, string> = {};
  /** A load refused with 429 was loaded again by itself since the last load that worked. */
  #retried = false;
  #filters: Filters = NO_FILTERS;
  #cursor: string | null = null;
  /** The cursor of the page shown (the pager follows it, not a page still loading). */
  #shown: string | null = null;
  #previous: (string | null)[] = [];
  #loads = 0;
  /** Counts the rows actions changed: a load begun before one of them is read again. */
  #edits = 0;
  /** Counts the `base-url` changes: an action sent before one changes no row of the routes now. */
  #routes = 0;
  #statusTimer: ReturnType<typeof setTimeout> | undefined;
  #afterClose: (() => void) | undefined;
  #mayClose: (() => boolean) | undefined;
  /** Reveals waiting for the dialog open now (one the user must close first), oldest first. */
  #waiting: (() => void)[] = [];
  /** Keys with an action's request running: a dialog opened on one since waits for it. */
  #inFlight = new Set<string>();
  /** Reads the last opened form's readiness again (a request of its key has ended). */
  #syncForm: () => void = () => {};
  #shadow: ShadowRoot;
  #title = h("h2", { id: "t", part: "title" });
  #create = h("button", { type: "button", class: "p", part: "button create-button" });
  #activity = h("button", { type: "button", part: "button activity-button" });
  #tools = new Toolbar((filters) => this.#filter(filters));
  #status = h("p", { role: "status", part: "status", class: "m" });
  #errorText = h("span");
  #retry = h("button", { type: "button", part: "button" });
  #error = h(
    "div",
    { role: "alert", part: "error", class: "alert", tabindex: "-1" },
    this.#errorText,
    " ",
    this.#retry,
  );
  #pool = h("p", { part: "pool", class: "pool" });
  #body = h("div", { part: "body" });
  #pager = new Pager(() => this.#turn(true), () => this.#turn(false));
  #dialog = h("dialog", { part: "dialog" });

  /** Builds the shadow root. */
  constructor() {
    super();
    this.#shadow = this.attachShadow({ mode: "open" });
    adoptStyles(this.#shadow);
    this.#create.addEventListener("click", () => this.#openCreate());
    this.#activity.addEventListener("click", () => this.#openActivity(null));
    this.#retry.addEventListener("click", () => this.refresh());
    this.#dialog.addEventListener("cancel", (event) => {
      if (this.#mayClose && !this.#mayClose()) event.preventDefault();
    });
    this.#dialog.addEventListener("close", () => {
      if (this.#dialog.open) return;
      // Chrome stops letting `cancel` be refused after a few Escapes in a row: a reveal not yet
      // copied opens again, asking (in the page only: out of it, nothing can show it).
      if (this.isConnected && this.#mayClose && !this.#mayClose()) this.#dialog.showModal();
      else this.#close();
    });
    this.#shadow.append(
      h(
        "section",
        { part: "root", "aria-labelledby": "t" },
        h(
          "header",
          { part: "header" },
          this.#title,
          h("div", { class: "acts" }, this.#activity, this.#create),
        ),
        this.#tools.root,
        this.#status,
        this.#error,
        this.#pool,
        this.#body,
        this.#pager.root,
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
    this.#overrides = overridesOf(strings);
    this.#strings = { ...API_KEYS_MANAGER_STRINGS, ...this.#overrides };
    this.#render();
  }

  /**
   * Loads on connection. A dialog open when the element left the page (no longer modal then) is
   * modal again, focus on the control it opened with; else a reveal that came while off the page opens.
   */
  connectedCallback(): void {
    if (this.#state === "idle") this.refresh();
    const dialog = this.#dialog;
    if (dialog.open && !dialog.matches(":modal")) {
      // Its close event comes later and finds it open: nothing of it closes nor drops.
      dialog.close();
      dialog.showModal();
    } else if (!dialog.open) this.#waiting.shift()?.();
  }

  /**
   * Reloads when `base-url` or `credentials` change (another `base-url` from its first page); set
   * to the same value, or before the first load (an upgrade reports each attribute), nothing:
   * connecting loads.
   */
  attributeChangedCallback(name: string, oldValue: string | null, newValue: string | null): void {
    if (oldValue === newValue || this.#state === "idle") return;
    this.#config = null;
    if (name === "base-url") this.#moved();
    if (this.isConnected) this.refresh();
  }

  /**
   * Other routes: nothing of the old ones' list stays (its page, usage, cursors, search and
   * filters), and a dialog open on it closes; a reveal stays (its secret is shown once).
   */
  #moved(): void {
    this.#routes++;
    this.#filters = NO_FILTERS;
    this.#tools.clear();
    this.#cursor = null;
    this.#shown = null;
    this.#previous = [];
    this.#page = { keys: [], nextCursor: null, tenantCredits: null };
    this.#usage = new Map();
    if (this.#dialog.open && !this.#revealing()) this.#close();
  }

  /**
   * Reloads the configuration (once), the current page of keys and its usage; once an action
   * changed rows while it loaded, loads them again (its answer may be older than theirs).
   */
  async refresh(): Promise<void> {
    const load = ++this.#loads;
    const edits = this.#edits;
    const cursor = this.#cursor;
    this.#state = "loading";
    this.#render();
    try {
      const [config, page] = await Promise.all([
        this.#config ?? this.#call("/config").then(configOf),
        this.#call(this.#listPath()).then(pageOf),
      ]);
      if (load !== this.#loads) return;
      this.#config = config;
      if (edits !== this.#edits) return this.refresh();
      this.#page = page;
      this.#shown = cursor;
      this.#usage = new Map();
      this.#state = "ready";
      this.#errorKey = null;
      this.#retried = false;
      this.#render();
      if (config.capabilities.usage && page.keys.length > 0) void this.#loadUsage(page.keys, load);
    } catch (error) {
      if (load === this.#loads) this.#fail(error, true);
    }
  }

  #listPath(): string {
    const { q, status, environment, sort } = this.#filters;
    const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
    if (this.#cursor) query.set("cursor", this.#cursor);
    if (q) query.set("q", q);
    if (status) query.set("status", status);
    if (environment) query.set("environment", environment);
    if (sort) query.set("sort", sort);
    return `/keys?${query}`;
  }

  #filter(next: Filters): void {
    if (JSON.stringify(next) === JSON.stringify(this.#filters)) return;
    this.#filters = next;
    this.#previous = [];
    this.#go(null);
  }

  /** Previous (`back`) or Next from the page shown; pressed while a page loads, nothing. */
  #turn(back: boolean): void {
    if (this.#state === "loading") return;
    if (!back) this.#previous.push(this.#cursor);
    this.#go(back ? this.#previous.pop() ?? null : this.#page.nextCursor);
  }

  #go(cursor: string | null): void {
    this.#cursor = cursor;
    void this.refresh();
  }

  #call(path: string, method?: string, body?: unknown): Promise<unknown> {
    const credentials = this.getAttribute("credentials") === "include" ? "include" : "same-origin";
    const auth: Auth = { credentials, getToken: this.getToken, csrf: this.#config?.csrf };
    return call(this.getAttribute("base-url") ?? "", path, auth, method, body);
  }

  /** One request for the page's usage; each row's chart is filled in place. */
  async #loadUsage(keys: KeyView[], load: number): Promise<void> {
    const now = Date.now();
    const query = new URLSearchParams({
      keys: keys.map((key) => key.id).join(","),
      granularity: "hour",
      from: new Date(firstHour(now)).toISOString(),
      to: new Date(now).toISOString(),
    });
    try {
      const usage = usageOf(await this.#call(`/usage?${query}`), now);
      if (load !== this.#loads) return;
      this.#usage = usage;
      const context = this.#context();
      for (const [id, counts] of usage) {
        this.#row(id)?.querySelector("[data-col=usage]")?.replaceChildren(
          ...usageCell(counts, context).filter((child): child is Node => child instanceof Node),
        );
      }
    } catch {
      // No charts.
    }
  }

  #emit(name: string, detail: unknown): void {
    this.dispatchEvent(new CustomEvent(name, { detail, bubbles: true, composed: true }));
  }

  /** Shows `text` in the status line, cleared after a while. */
  #announce(text: string): void {
    clearTimeout(this.#statusTimer);
    this.#status.textContent = "";
    setTimeout(() => (this.#status.textContent = text), 50);
    this.#statusTimer = setTimeout(() => (this.#status.textContent = ""), STATUS_MS);
  }

  /**
   * Shows `error` as a friendly string: in the open dialog, or as the element's state. The
   * error of an action whose dialog was closed meanwhile (`away`) goes to the status line:
   * it never lands in, nor closes, the dialog open now; only a session ended shuts the page.
   * A load failing behind an open form shows behind it: only a load denied closes the form.
   * `text` says it instead of the error's own string.
   */
  #fail(error: unknown, loading = false, away = false, text?: TextName): void {
    const failure = error instanceof AdminApiError
      ? error
      : new AdminApiError("ERROR", "unexpected error");
    this.#emit("api-keys-error", { code: failure.code, message: failure.message });
    const wait = failure.retryAfter;
    const now = Date.now();
    const values: Record<string, string> = wait === null
      ? {}
      : { when: this.#format().wait(wait, now) };
    // A load refused with 429 waits out a short Retry-After and loads again, once.
    const again = loading && wait !== null && errorString(failure) === "errorRetryAfter" &&
      wait <= MAX_RETRY_AFTER_S && !this.#retried;
    if (again) this.#retryLoad(wait);
    const key = again ? "errorRetrying" : text ?? errorString(failure);
    // A 403 on one action is `canManage` refusing that key (checked per key): said where it
    // happened; only a load refused, or a session ended (401), shuts the page.
    const shut = deniedState(failure);
    const denied = loading || shut === "signed-out" ? shut : null;
    if (away && !denied) return this.#announce(fill(this.#strings[key], values));
    // The reveal holds a secret shown once: it stays open, the state shows behind it.
    const revealing = this.#revealing();
    const inDialog = this.#dialog.open && this.#dialog.querySelector<HTMLElement>(".alert");
    if (inDialog && !revealing && !denied && !loading) {
      inDialog.textContent = fill(this.#strings[key], values);
      return;
    }
    if (this.#dialog.open && !revealing && (denied || !loading)) this.#dialog.close();
    this.#errorKey = key;
    this.#errorValues = values;
    this.#state = denied ?? "error";
    if (denied) {
      // Another session may come (signed in again): its configuration is read again.
      this.#page = { keys: [], nextCursor: null, tenantCredits: null };
      this.#config = null;
    }
    this.#render();
  }

  /** The dialog open now is a reveal (a secret shown once: only the user closes it). */
  #revealing(): boolean {
    return this.#dialog.open && this.#mayClose !== undefined;
  }

  /** Loads again in `seconds`, unless another load started meanwhile or the element left the page. */
  #retryLoad(seconds: number): void {
    this.#retried = true;
    const load = this.#loads;
    setTimeout(() => {
      if (load === this.#loads && this.isConnected) void this.refresh();
    }, seconds * 1000);
  }

  #format(): Format {
    return formatFor(document.documentElement.lang);
  }

  #context() {
    const keys = this.#page.keys;
    return {
      s: this.#strings,
      f: this.#format(),
      now: Date.now(),
      usage: this.#config?.capabilities.usage === true,
      credits: keys.some((key) => key.credits !== null || key.creditsSharedBy !== null),
      prefixOf: (id: string) => keys.find((key) => key.id === id)?.prefix ?? null,
    };
  }

  #render(): void {
    const had = this.#shadow.activeElement;
    this.#draw();
    this.#refocus(had);
  }

  /**
   * Focus on a control the redraw removed, turned off or hid (a row's
   * button or usage chart, Next on the last page, Retry once the list is
   * back, Activity once the server has none) moves to its row again, to the
   * other pager button, to Create key from the header, or to the first row
   * (as `#focusRow` falls back).
   */
  #refocus(had: Element | null): void {
    const focusable = had instanceof HTMLElement || had instanceof SVGElement;
    if (!focusable || this.#dialog.contains(had)) return;
    const off = had instanceof HTMLButtonElement && had.disabled;
    if (had.isConnected && !off && had.closest("[hidden]") === null) return;
    const row = had.closest<HTMLElement>("tr[data-id]")?.dataset.id;
    const pager = this.#pager.root.contains(had) ? this.#pager.enabled() : undefined;
    const create = had !== this.#create && had.closest("header") !== null && !this.#create.hidden;
    if (pager) pager.focus();
    else this.#focusRow(create ? undefined : row && this.#row(row) ? row : this.#page.keys[0]?.id);
  }

  #draw(): void {
    const s = this.#strings;
    const config = this.#config;
    const denied = this.#state === "signed-out" || this.#state === "forbidden";
    const stale = this.#state === "error";
    this.#title.textContent = s.title;
    this.#create.textContent = s.create;
    this.#create.hidden = config?.can.create === false || denied;
    this.#create.disabled = config === null || stale;
    this.#activity.textContent = s.activity;
    this.#activity.hidden = config?.can.audit !== true || denied;
    this.#retry.textContent = s.retry;
    this.#retry.hidden = this.#state === "forbidden";
    this.#errorText.textContent = this.#errorKey
      ? `${fill(s[this.#errorKey], this.#errorValues)}${
        stale && this.#page.keys.length > 0 ? ` ${s.stale}` : ""
      }`
      : "";
    this.#error.hidden = this.#errorKey === null;
    this.#tools.render(config, denied, s);
    const pool = this.#page.tenantCredits;
    this.#pool.hidden = !pool;
    if (pool) this.#pool.textContent = poolText(pool, s, this.#format(), Date.now());
    // Assistive technology waits for the list while it loads (the visible "Loading…" is no live region).
    if (this.#state === "loading") this.#body.setAttribute("aria-busy", "true");
    else this.#body.removeAttribute("aria-busy");
    const keys = this.#page.keys;
    const filtered = this.#cursor !== null || Object.values(this.#filters).some(Boolean);
    if (keys.length > 0) this.#body.replaceChildren(this.#table());
    else if (this.#state === "loading") {
      this.#body.replaceChildren(h("p", { class: "m" }, s.loading));
    } else if (this.#state === "ready") {
      this.#body.replaceChildren(
        h("p", { part: "empty", class: "m" }, filtered ? s.noMatch : s.empty),
      );
    } else this.#body.replaceChildren();
    for (const button of this.#body.querySelectorAll("button")) button.disabled = stale;
    this.#pager.render(s, this.#shown !== null, this.#page.nextCursor !== null, stale || denied);
  }

  #table(): HTMLTableElement {
    const context = this.#context();
    return keyTable(this.#page.keys.map((key) => this.#keyRow(key, context)), context);
  }

  #keyRow(key: KeyView, context = this.#context()): HTMLTableRowElement {
    return keyRow(key, this.#usage.get(key.id), this.#actions(key), context);
  }

  /** The actions the caller may take on `key`, each labelled with its name and prefix. */
  #actions(key: KeyView): RowAction[] {
    const s = this.#strings;
    const can = this.#config?.can;
    const live = key.status === "active" || key.status === "rotating";
    const actions: RowAction[] = [];
    if (live && can?.rename && this.#config?.capabilities.rename) {
      actions.push({ label: s.rename, run: () => this.#openRename(key) });
    }
    if (key.status === "active" && can?.rotate) {
      actions.push({ label: s.rotate, run: () => this.#openRotate(key) });
    }
    if (can?.audit) actions.push({ label: s.activity, run: () => this.#openActivity(key) });
    if (live && can?.revoke) {
      actions.push({ label: s.revoke, run: () => this.#openRevoke(key), danger: true });
    }
    return actions;
  }

  #row(id: string): HTMLTableRowElement | null {
    return [...this.#body.querySelectorAll<HTMLTableRowElement>("tr[data-id]")]
      .find((row) => row.dataset.id === id) ?? null;
  }

  /**
   * Replaces `key`'s row in place (focus in it moves to the new row); a key the list does not show (an answer
   * landing after a search, a filter or another page) changes nothing, unless
   * `insert` puts it first (or before `insert.before`'s row: `#add`). A key
   * spending only the tenant's pool answers the pool's balance now: the pool
   * line and every row on the pool show it (the list drawn again, as when the
   * credits column appears).
   */
  #put(key: KeyView, insert?: { before?: string | undefined }): void {
    this.#edits++;
    const keys = this.#page.keys;
    const credited = this.#context().credits;
    const index = keys.findIndex((k) => k.id === key.id);
    if (index >= 0) keys[index] = key;
    else if (insert === undefined) return;
    else keys.splice(Math.max(0, keys.findIndex((k) => k.id === insert.before)), 0, key);
    const { credits, creditsNextRefillAt, creditsRefillAmount } = key;
    const pooled = key.creditsSharedBy === "tenant" && credits !== null;
    if (pooled) {
      this.#page.tenantCredits = {
        credits,
        nextRefillAt: creditsNextRefillAt,
        refillAmount: creditsRefillAmount,
      };
      keys.forEach((k, i) => {
        if (k.creditsSharedBy === "tenant") {
          keys[i] = { ...k, credits, creditsNextRefillAt, creditsRefillAmount };
        }
      });
    }
    const row = this.#row(key.id);
    const table = this.#body.querySelector("tbody");
    if (!table || pooled || this.#context().credits !== credited) return this.#render();
    const fresh = this.#keyRow(key);
    const next = insert?.before ? this.#row(insert.before) : null;
    const had = this.#shadow.activeElement;
    if (row) row.replaceWith(fresh);
    else if (next) next.before(fresh);
    else table.prepend(fresh);
    this.#refocus(had);
  }

  /**
   * A key the list did not show (created, or a rotation's successor): its
   * row in place, first (or before `before`'s row), on the first page of the
   * default view (newest first, no search nor filter) with room for it, where
   * the server lists a new key first; else the page loaded again, so the key
   * shows where the server lists it, or not at all.
   */
  #add(key: KeyView, before?: string): void {
    const newestFirst = this.#cursor === null && !Object.values(this.#filters).some(Boolean);
    if (newestFirst && this.#page.keys.length < PAGE_SIZE) this.#put(key, { before });
    else void this.refresh();
  }

  /** The id of the row after `id`'s (else before it), where focus goes once that row is gone. */
  #neighbour(id: string | undefined): string | undefined {
    const row = id ? this.#row(id) : null;
    return ((row?.nextElementSibling ?? row?.previousElementSibling) as HTMLElement | null)
      ?.dataset.id;
  }

  /**
   * Focuses `id`'s row: its actions button, else its name; none, or a stale list (its buttons
   * off), the first of Create key, Retry and the error line that takes the focus.
   */
  #focusRow(id: string | null | undefined): void {
    const row = id && this.#state !== "error" ? this.#row(id) : null;
    const targets = [
      row?.querySelector<HTMLElement>("button.more") ?? row?.querySelector<HTMLElement>("th"),
      this.#create,
      this.#retry,
      this.#error,
    ];
    for (const target of targets) {
      target?.focus();
      if (target && this.#shadow.activeElement === target) return;
    }
  }

  /**
   * Closes the dialog, empties it and runs what comes after (focus first); then the oldest
   * reveal waiting, if any, opens.
   */
  #close(): void {
    if (this.#dialog.open) this.#dialog.close();
    this.#dialog.replaceChildren();
    this.#mayClose = undefined;
    const after = this.#afterClose;
    this.#afterClose = undefined;
    after?.();
    if (!this.#shadow.activeElement) this.#focusRow(undefined);
    this.#waiting.shift()?.();
  }

  /**
   * Opens the dialog with `content`; `focus` gets the focus, `after` runs when it closes. Over a
   * reveal open now, nothing (only the user closes it): `false`.
   */
  #open(
    title: string,
    alert: boolean,
    content: Child[],
    focus: HTMLElement,
    after?: () => void,
  ): boolean {
    if (this.#revealing()) return false;
    const dialog = this.#dialog;
    dialog.replaceChildren(
      h("h3", { id: "dt", class: "wrap" }, title),
      ...content.filter(Boolean) as Node[],
    );
    dialog.setAttribute("role", alert ? "alertdialog" : "dialog");
    dialog.setAttribute("aria-labelledby", "dt");
    if (alert) dialog.setAttribute("aria-describedby", "dd");
    else dialog.removeAttribute("aria-describedby");
    this.#afterClose = after;
    focus.autofocus = true; // also when the dialog opens again (`connectedCallback`)
    dialog.showModal();
    focus.focus();
    return true;
  }

  /**
   * Opens a form dialog: `fields`, an alert line, Cancel and `label`; `submit` on submit, once
   * at a time, and only while `ready` (revoke's typed name matches) and no request of its key
   * (`returnTo`) runs, from a dialog closed since: `label` is off otherwise. `submit` may name
   * the button anew (`relabel`); `here` says the routes are still those it sent to (`base-url`
   * unchanged): else its answer changes no row.
   */
  #openForm(
    title: string,
    { fields, focus }: DialogFields,
    label: string,
    submit: (
      current: () => boolean,
      relabel: (label: string) => void,
      here: () => boolean,
    ) => Promise<void>,
    options: { danger?: boolean; returnTo?: string; ready?: () => boolean } = {},
  ): void {
    const cancel = h(
      "button",
      { type: "button", part: "button", onclick: () => this.#close() },
      this.#strings.cancel,
    );
    const confirm = h("button", {
      type: "submit",
      class: options.danger ? "x p" : "p",
      part: "button",
    }, label);
    let running = false;
    const key = options.returnTo;
    const ready = () =>
      !running && !(key !== undefined && this.#inFlight.has(key)) && (options.ready?.() ?? true);
    const sync = () => (confirm.disabled = !ready());
    const form = h(
      "form",
      {
        oninput: sync,
        onsubmit: async (event) => {
          event.preventDefault();
          if (!ready()) return;
          running = true;
          if (key !== undefined) this.#inFlight.add(key);
          sync();
          const routes = this.#routes;
          const here = () => routes === this.#routes;
          try {
            await submit(current, (label) => (confirm.textContent = label), here);
          } catch (error) {
            this.#fail(error, false, !current());
            if (key !== undefined && here()) await this.#reread(key, error);
          } finally {
            running = false;
            if (key !== undefined) this.#inFlight.delete(key);
            sync();
            this.#syncForm(); // a dialog opened on the key since may send now
          }
        },
      },
      ...fields,
      h("p", { class: "alert", role: "alert" }),
      h("div", { class: "row" }, cancel, confirm),
    );
    sync();
    this.#syncForm = sync;
    // Still this form's dialog: not cancelled while its request ran (closing empties the dialog).
    const current = () => this.#dialog.open && this.#dialog.contains(form);
    const neighbour = this.#neighbour(options.returnTo);
    this.#open(
      title,
      options.danger === true,
      [form],
      options.danger ? cancel : focus,
      () =>
        this.#focusRow(
          this.#row(options.returnTo ?? "") ? options.returnTo : neighbour,
        ),
    );
  }

  /**
   * After an action on key `id` refused as stale (another tab rotated,
   * renamed, revoked or deleted it): 404 drops its row; 409 reads the key again and
   * updates its row in place, so it offers only what the key allows now, and
   * reads its successor (another tab's rotation) to add its row; `base-url` changed meanwhile,
   * nothing.
   */
  async #reread(id: string, error: unknown): Promise<void> {
    if (!(error instanceof AdminApiError) || (error.status !== 404 && error.status !== 409)) return;
    const routes = this.#routes;
    let fresh: KeyView | undefined;
    try {
      if (error.status === 409) {
        [fresh] = keysOf([await this.#call(`/keys/${encodeURIComponent(id)}`)]);
      }
    } catch (failure) {
      if (!(failure instanceof AdminApiError) || failure.status !== 404) return;
    }
    if (routes !== this.#routes) return;
    if (fresh) {
      this.#put(fresh);
      await this.#addSuccessor(fresh);
      return;
    }
    this.#edits++;
    this.#page.keys = this.#page.keys.filter((key) => key.id !== id);
    this.#usage.delete(id);
    if (this.#page.keys.length === 0) this.#render();
    else this.#row(id)?.remove();
  }

  /**
   * The successor of `key` (rotated elsewhere) read and added, unless listed (or `base-url`
   * changed meanwhile); returned (as listed, or as read); unreadable, none.
   */
  async #addSuccessor(key: KeyView): Promise<KeyView | undefined> {
    const routes = this.#routes;
    const id = key.replacedByKeyId;
    const listed = this.#page.keys.find((k) => k.id === id);
    if (id === null || listed) return listed;
    try {
      const [successor] = keysOf([await this.#call(`/keys/${encodeURIComponent(id)}`)]);
      if (successor && routes === this.#routes) {
        this.#add({ ...successor, replacesKeyId: successor.replacesKeyId ?? key.id }, key.id);
      }
      return successor;
    } catch {
      // Gone meanwhile, or unreadable now: the next load lists it if it is there.
      return undefined;
    }
  }

  #openCreate(): void {
    const config = this.#config;
    if (!config) return;
    const s = this.#strings;
    // A new key on the tenant's pool joins it as it is: the balance the list last read, not
    // the one `GET /config` answered at the first load.
    const pool = this.#page.tenantCredits;
    const credits = config.limits?.credits;
    const shown = pool && credits?.sharedBy === "tenant"
      ? { ...config, limits: { ...config.limits!, credits: { ...credits, amount: pool.credits } } }
      : config;
    const dialog = createFields(shown, s, this.#format());
    this.#openForm(s.create, dialog, s.create, async (current, relabel, here) => {
      let issued: unknown;
      try {
        issued = await this.#call("/keys", "POST", dialog.body());
      } catch (error) {
        if (!answerLost(error)) throw error;
        // The server may have made the key: the list loaded again shows it, and the form says
        // that sending again makes another one.
        relabel(s.createAgain);
        this.#fail(error, false, !current(), "createUnsure");
        void this.refresh();
        return;
      }
      const [created] = keysOf([(issued as { record?: unknown } | null)?.record]);
      // The key exists now: its secret is shown whatever drawing its row does.
      try {
        if (created && here()) this.#add(created);
      } finally {
        this.#reveal(issued, "api-key-created", created?.id, s.keyCreated, null, current());
      }
    });
  }

  #openRotate(key: KeyView): void {
    const config = this.#config;
    if (!config) return;
    const s = this.#strings;
    const dialog = rotateFields(config, s, this.#format());
    this.#openForm(
      fill(s.actionLabel, { action: s.rotate, name: key.name, prefix: key.prefix }),
      dialog,
      s.rotate,
      async (current, _relabel, here) => {
        let answer: { record?: unknown; graceExpiresAt?: unknown } | null;
        try {
          answer = await this.#call(
            `/keys/${encodeURIComponent(key.id)}/rotate`,
            "POST",
            dialog.body(),
          ) as typeof answer;
        } catch (error) {
          if (!answerLost(error)) throw error;
          // The server may have rotated the key: the list loaded again shows it as it is now.
          this.#fail(error, false, !current(), "rotateUnsure");
          void this.refresh();
          return;
        }
        const [created] = keysOf([answer?.record]);
        const stops = dateOf(answer?.graceExpiresAt);
        const note = stops
          ? fill(s.revealRotated, { prefix: key.prefix, when: this.#format().dateTime(stops) })
          : null;
        // The rotation happened: its secret is shown whatever updating the rows does.
        try {
          if (!here()) return; // the rows shown now are other routes'
          const madeAt = created?.createdAt;
          if (!stops || !created || !madeAt) {
            // No readable end of the grace or successor: the answer did not say when the old key
            // stops working by the server's clock, so both rows are drawn as the server lists them.
            void this.refresh();
          } else {
            this.#add({ ...created, replacesKeyId: created.replacesKeyId ?? key.id }, key.id);
            // As listed now: the successor's answer may have brought the pool's balance. Its
            // status by the server's clock (the successor was made when the grace began), not
            // the browser's.
            this.#put({
              ...this.#page.keys.find((k) => k.id === key.id) ?? key,
              status: stops.getTime() > madeAt.getTime() ? "rotating" : "expired",
              expiresAt: stops,
              replacedByKeyId: created.id,
            });
          }
        } finally {
          this.#reveal(answer, "api-key-rotated", key.id, s.rotated, note, current());
        }
      },
      { returnTo: key.id },
    );
  }

  /** The audit log of `key` (or the tenant's), "Load more" at a time; focus returns where it was. */
  #openActivity(key: KeyView | null): void {
    const s = this.#strings;
    const view = new Activity(
      s,
      this.#format(),
      async (cursor) => activityOf(await this.#call(activityPath(key?.id ?? null, cursor))),
      (error) => {
        if (!view.close.isConnected) return;
        // 501: the server keeps no audit log; Activity goes once this view closes.
        if (error instanceof AdminApiError && error.status === 501 && this.#config) {
          this.#config.can.audit = false;
        }
        this.#fail(error);
      },
      () => this.#close(),
    );
    const title = key
      ? fill(s.actionLabel, { action: s.activity, name: key.name, prefix: key.prefix })
      : s.activity;
    const opened = this.#open(
      title,
      false,
      view.content,
      view.close,
      () => {
        if (this.#config?.can.audit === false) this.#render();
        if (key) this.#focusRow(key.id);
        else this.#activity.focus();
      },
    );
    if (opened) void view.more();
  }

  #openRename(key: KeyView): void {
    const s = this.#strings;
    const dialog = renameFields(key, s, this.#format());
    // Renamed over the name this dialog opened with (a list loaded again meanwhile does not
    // change it), then over the one a 409 read again: another tab's rename is not lost.
    let over = key.name;
    let stale = false;
    this.#openForm(
      fill(s.actionLabel, { action: s.rename, name: key.name, prefix: key.prefix }),
      dialog,
      s.save,
      async (current, _relabel, here) => {
        const { name } = dialog.body() as { name: string };
        if (stale) over = (this.#page.keys.find((k) => k.id === key.id) ?? key).name;
        stale = false;
        const expectedName = this.#config?.capabilities.conditionalRename ? over : undefined;
        const answer = await this.#call(
          `/keys/${encodeURIComponent(key.id)}`,
          "PATCH",
          expectedName === undefined ? { name } : { name, expectedName },
        ).catch((error) => {
          stale = error instanceof AdminApiError && error.status === 409; // the form reads it again
          throw error;
        });
        const [renamed] = keysOf([answer]);
        const shown = renamed ?? { ...key, name };
        if (here()) this.#put(shown);
        this.#emit("api-key-renamed", { id: key.id, name, prefix: key.prefix });
        if (current()) this.#close();
        this.#announce(s.renamed);
        // Rotated elsewhere since the list loaded: its successor is the key that works on.
        if (here()) await this.#addSuccessor(shown);
      },
      { returnTo: key.id },
    );
  }

  #openRevoke(key: KeyView): void {
    const s = this.#strings;
    const dialog = revokeFields(key, s);
    const neighbour = this.#neighbour(key.id);
    this.#openForm(
      fill(s.actionLabel, { action: s.revoke, name: key.name, prefix: key.prefix }),
      dialog,
      s.revoke,
      async (current, _relabel, here) => {
        const answer = await this.#call(`/keys/${encodeURIComponent(key.id)}`, "DELETE");
        const [revoked] = keysOf([answer]);
        const gone: KeyView = { ...key, ...revoked, status: "revoked" };
        if (here()) this.#put(gone);
        this.#emit("api-key-revoked", { id: key.id, name: key.name, prefix: key.prefix });
        if (current()) {
          this.#close();
          this.#focusRow(neighbour);
        }
        this.#announce(s.revoked);
        // Rotated elsewhere since the list loaded: its successor still works, so it is said.
        const successor = here() ? await this.#addSuccessor(gone) : undefined;
        if (successor?.status === "active" || successor?.status === "rotating") {
          this.#announce(fill(s.revokedSuccessor, { prefix: successor.prefix }));
        }
      },
      { danger: true, returnTo: key.id, ready: dialog.confirmed },
    );
  }

  /**
   * Shows a new key's secret once; closing the dialog drops it, then focuses `focusId`'s row. An
   * answer without the secret is an error (`errorNoSecret`), in its form or the status line.
   * From its own form (`current`), the reveal replaces the form; else (the form cancelled while
   * its request ran) it waits for the dialog open now, as a later secret waits for the reveal
   * open now: only the user closes a reveal, then the oldest waiting opens (each names its key).
   */
  #reveal(
    data: unknown,
    event: string,
    focusId: string | undefined,
    done: string,
    note: string | null,
    current: boolean,
  ): void {
    const [created] = keysOf([(data as { record?: unknown } | null)?.record]);
    const secret = typeof (data as { key?: unknown })?.key === "string"
      ? (data as { key: string }).key
      : null;
    if (created) this.#emit(event, { id: created.id, name: created.name, prefix: created.prefix });
    if (secret === null) {
      // The key exists, its secret lost on the way: said, not announced as done; a key the
      // answer does not describe shows once the list is loaded again.
      const error = new AdminApiError("BAD_RESPONSE", "The answer carries no secret.");
      this.#fail(error, false, !current, "errorNoSecret");
      if (!created) void this.refresh();
      return;
    }
    this.#announce(done);
    this.#waiting.push(() => this.#show(secret, created, note, focusId));
    if (current) {
      this.#afterClose = undefined;
      this.#close();
    } else if (!this.#dialog.open) this.#waiting.shift()?.();
  }

  /**
   * Opens the reveal of `secret`, the key `created`; off the page (no dialog can open), it waits
   * first in line until the element is back.
   */
  #show(
    secret: string,
    created: KeyView | undefined,
    note: string | null,
    focusId: string | undefined,
  ): void {
    if (!this.isConnected) {
      this.#waiting.unshift(() => this.#show(secret, created, note, focusId));
      return;
    }
    const s = this.#strings;
    const shown = reveal(secret, note, s, () => this.#close());
    const title = created ? fill(s.revealNamed, { name: created.name }) : s.revealTitle;
    this.#open(title, true, shown.content, shown.focus, () => {
      shown.drop();
      this.#focusRow(focusId);
    });
    this.#mayClose = shown.mayClose;
  }
}

dropStandIn();
