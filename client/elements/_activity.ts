/**
 * The Activity view: the audit log (`GET {base}/audit`) of the tenant or of
 * one key, newest first, 25 at a time with "Load more": when (the user's
 * locale and time zone), who, what and which key.
 *
 * @module
 */
import { ownValue } from "../_check.ts";
import { AdminApiError } from "./_api.ts";
import { h } from "./_dom.ts";
import { errorString } from "./_errors.ts";
import type { Format } from "./_format.ts";
import { type ActivityPage, type ActivityRecord, fill } from "./_model.ts";
import type { ApiKeysManagerStrings, TextName } from "./strings.ts";

/** Records a page. */
const PAGE_SIZE = 25;

/** The string of each audit action. */
const ACTIONS: Record<string, TextName> = {
  "key.created": "auditCreated",
  "key.imported": "auditImported",
  "key.rotated": "auditRotated",
  "key.revoked": "auditRevoked",
  "key.renamed": "auditRenamed",
  "key.credits_updated": "auditCreditsUpdated",
  "key.expiring": "auditExpiring",
  "key.rotation_completed": "auditRotationCompleted",
  "key.exposed": "auditExposed",
};

/** `GET /audit` for a page: of `keyId` (or the tenant), after `cursor`. */
export function activityPath(keyId: string | null, cursor: string | null): string {
  const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
  if (keyId !== null) query.set("keyId", keyId);
  if (cursor !== null) query.set("cursor", cursor);
  return `/audit?${query}`;
}

/** What happened, in the strings' language (an unknown action as given). */
export function whatOf(
  action: string,
  outcome: ActivityRecord["outcome"],
  s: ApiKeysManagerStrings,
): string {
  const known = ownValue(ACTIONS, action);
  const text = known ? s[known] : action;
  return outcome === "refused" ? fill(s.auditRefused, { action: text }) : text;
}

/** Who did it: `system` as a string, anyone else by name. */
export function whoOf(actor: string, s: ApiKeysManagerStrings): string {
  return actor === "system" ? s.actorSystem : actor;
}

/** The view: a table, an alert line, Load more (Retry for a first page failed) and Close. */
export class Activity {
  /** The dialog's content. */
  readonly content: HTMLElement[];
  /** Closes the view; focused first. */
  readonly close: HTMLButtonElement;
  #s: ApiKeysManagerStrings;
  #f: Format;
  #load: (cursor: string | null) => Promise<ActivityPage>;
  #failed: (error: unknown) => void;
  #rows = h("tbody");
  #note: HTMLParagraphElement;
  #alert = h("p", { class: "alert", role: "alert" });
  #more: HTMLButtonElement;
  #cursor: string | null = null;
  /** A page has come. */
  #loaded = false;

  /** `load` fetches a page; `failed` shows an error; `close` closes the view. */
  constructor(
    s: ApiKeysManagerStrings,
    f: Format,
    load: (cursor: string | null) => Promise<ActivityPage>,
    failed: (error: unknown) => void,
    close: () => void,
  ) {
    this.#s = s;
    this.#f = f;
    this.#load = load;
    this.#failed = failed;
    this.#note = h("p", { class: "m" }, s.loading);
    this.#more = h("button", { type: "button", part: "button", hidden: true }, s.loadMore);
    this.#more.addEventListener("click", () => void this.more(true));
    this.close = h("button", { type: "button", part: "button", onclick: close }, s.close);
    const headings = [s.activityWhen, s.activityWho, s.activityWhat, s.activityKey];
    this.content = [
      h(
        "table",
        { role: "table", part: "activity", "aria-labelledby": "dt" },
        h(
          "thead",
          {},
          h(
            "tr",
            { role: "row" },
            ...headings.map((text) => h("th", { role: "columnheader", scope: "col" }, text)),
          ),
        ),
        this.#rows,
      ),
      this.#note,
      this.#alert,
      h("div", { class: "row" }, this.#more, this.close),
    ];
  }

  /**
   * Loads the next page; from Load more, focus stays on it or goes to the first new row. A page
   * failed can be asked again (the cursor has not moved), unless the server keeps no audit log.
   */
  async more(fromButton = false): Promise<void> {
    if (this.#more.disabled) return;
    this.#more.disabled = true;
    if (!this.#loaded) this.#note.hidden = false;
    try {
      const page = await this.#load(this.#cursor);
      const rows = page.records.map((record) => this.#row(record));
      this.#rows.append(...rows);
      this.#cursor = page.nextCursor;
      this.#more.hidden = page.nextCursor === null;
      this.#note.hidden = this.#rows.childElementCount > 0;
      this.#note.textContent = this.#s.activityEmpty;
      this.#alert.textContent = "";
      this.#more.textContent = this.#s.loadMore;
      this.#loaded = true;
      if (fromButton && this.#more.hidden) (rows[0]?.firstElementChild as HTMLElement)?.focus();
    } catch (error) {
      if (!this.#loaded) {
        this.#note.hidden = true;
        this.#more.textContent = this.#s.retry;
      }
      this.#more.hidden = error instanceof AdminApiError &&
        errorString(error) === "errorUnavailable";
      this.#failed(error);
    } finally {
      this.#more.disabled = false;
    }
  }

  #row(record: ActivityRecord): HTMLTableRowElement {
    const s = this.#s;
    const cell = (label: string, ...children: (Node | string)[]) =>
      h("td", { role: "cell", "data-label": label }, ...children);
    return h(
      "tr",
      { role: "row" },
      h(
        "th",
        { role: "rowheader", scope: "row", tabindex: "-1", "data-label": s.activityWhen },
        h("time", { datetime: record.at.toISOString() }, this.#f.dateTime(record.at)),
      ),
      cell(s.activityWho, h("span", { class: "wrap" }, whoOf(record.actor, s))),
      cell(s.activityWhat, whatOf(record.action, record.outcome, s)),
      cell(s.activityKey, record.prefix ? h("code", {}, record.prefix) : s.activityTenant),
    );
  }
}
