/**
 * Around the list: the search, filters and sort order (debounced, reported as one
 * `Filters` value), the tenant's pool line, and the Previous / Next pager.
 *
 * @module
 */
import { h } from "./_dom.ts";
import { firstCodePoints, MAX_API_KEY_NAME_LENGTH } from "./_limits.ts";
import type { Format } from "./_format.ts";
import { fill, type ManagerConfig, type Pool } from "./_model.ts";
import { environmentLabel } from "./_row.ts";
import type { ApiKeysManagerStrings } from "./strings.ts";

/** What the list is filtered by (`""`: the server's default). */
export interface Filters {
  /** Name or prefix. */
  q: string;
  /** `active`, `rotating`, `expired`, `revoked`, `all`. */
  status: string;
  /** `live`, `test`, ... */
  environment: string;
  /** `created_asc`, `name_asc`, `last_used_desc` (`""`: newest first). */
  sort: string;
}

/** No search nor filter, newest first: the list as it first loads. */
export const NO_FILTERS: Readonly<Filters> = Object.freeze({
  q: "",
  status: "",
  environment: "",
  sort: "",
});

/** The search field, the two filters and the sort; `changed` runs with their values after a change. */
export class Toolbar {
  /** The bar. */
  readonly root: HTMLDivElement = h("div", { class: "tools", part: "toolbar" });
  /**
   * Sends its first code points only, as many as `GET /keys` takes in `q` (a longer one is
   * refused with 400); `maxlength`, in UTF-16 units, stops typing past two a code point.
   */
  #search = h("input", {
    type: "search",
    autocomplete: "off",
    maxlength: String(2 * MAX_API_KEY_NAME_LENGTH),
  });
  #status = h("select");
  #environment = h("select");
  #sort = h("select");
  /** The labels' texts, beside their controls. */
  #labels = [new Text(), new Text(), new Text(), new Text()] as const;
  #environmentLabel = h("label", {}, this.#labels[2], this.#environment);

  /**
   * Wires the controls, built once (a control moved in the DOM would lose the
   * focus on every reload of the list); typing waits 300 ms.
   */
  constructor(changed: (filters: Filters) => void) {
    const [search, status, , sort] = this.#labels;
    this.root.append(
      h("label", { class: "grow" }, search, this.#search),
      h("label", {}, status, this.#status),
      this.#environmentLabel,
      h("label", {}, sort, this.#sort),
    );
    const report = () =>
      changed({
        q: firstCodePoints(this.#search.value.trim(), MAX_API_KEY_NAME_LENGTH),
        status: this.#status.value,
        environment: this.#environment.value,
        sort: this.#sort.value,
      });
    let typing: ReturnType<typeof setTimeout> | undefined;
    this.#search.addEventListener("input", () => {
      clearTimeout(typing);
      typing = setTimeout(report, 300);
    });
    this.#status.addEventListener("change", report);
    this.#environment.addEventListener("change", report);
    this.#sort.addEventListener("change", report);
  }

  /** Back to {@linkcode NO_FILTERS} (reported by no change). */
  clear(): void {
    this.#search.value = "";
    for (const select of [this.#status, this.#environment, this.#sort]) select.value = "";
  }

  /** Labels and options in the strings' language; hidden without a config. */
  render(config: ManagerConfig | null, hidden: boolean, s: ApiKeysManagerStrings): void {
    this.root.hidden = config === null || hidden;
    if (this.root.hidden || !config) return;
    this.#search.placeholder = s.search;
    const options = (select: HTMLSelectElement, entries: [string, string][]) => {
      const value = select.value;
      select.replaceChildren(
        ...entries.map(([v, label]) => h("option", { value: v, selected: v === value }, label)),
      );
    };
    options(this.#status, [
      ["", s.filterAll],
      ["active", s.statusActive],
      ["rotating", s.statusRotating],
      ["expired", s.statusExpired],
      ["revoked", s.statusRevoked],
      ["all", s.filterEverything],
    ]);
    options(this.#environment, [
      ["", s.environmentAll],
      ...config.environments.map((e): [string, string] => [e, environmentLabel(s, e)]),
    ]);
    options(this.#sort, [
      ["", s.sortNewest],
      ["created_asc", s.sortOldest],
      ["name_asc", s.sortName],
      ["last_used_desc", s.sortLastUsed],
    ]);
    const [search, status, environment, sort] = this.#labels;
    search.data = s.search;
    status.data = s.status;
    environment.data = s.environment;
    sort.data = s.sort;
    this.#environmentLabel.hidden = config.environments.length < 2;
  }
}

/** The tenant's pool: credits left and the next refill. */
export function poolText(pool: Pool, s: ApiKeysManagerStrings, f: Format, now: number): string {
  const refill = pool.refillAmount !== null && pool.nextRefillAt
    ? ` · ${
      fill(f.form(s.creditsRefill, pool.refillAmount), {
        amount: f.number(pool.refillAmount),
        when: f.relative(pool.nextRefillAt, now),
      })
    }`
    : "";
  return fill(f.form(s.pool, pool.credits), { count: f.number(pool.credits) }) + refill;
}

/** Previous and Next; hidden when there is one page only. */
export class Pager {
  /** The pager. */
  readonly root: HTMLDivElement = h("div", { class: "row pager", part: "pager" });
  #previous = h("button", { type: "button", part: "button" });
  #next = h("button", { type: "button", part: "button" });

  /** Wires the buttons. */
  constructor(previous: () => void, next: () => void) {
    this.#previous.addEventListener("click", previous);
    this.#next.addEventListener("click", next);
    this.root.append(this.#previous, this.#next);
  }

  /** The first of Previous and Next that is on, if any. */
  enabled(): HTMLButtonElement | undefined {
    return [this.#previous, this.#next].find((button) => !button.disabled && !this.root.hidden);
  }

  /** Shows the pager for a page that has a previous and/or a next one. */
  render(s: ApiKeysManagerStrings, previous: boolean, next: boolean, off: boolean): void {
    this.#previous.textContent = s.previous;
    this.#next.textContent = s.next;
    this.#previous.disabled = !previous || off;
    this.#next.disabled = !next || off;
    this.root.hidden = !previous && !next;
  }
}
