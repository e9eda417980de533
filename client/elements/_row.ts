/**
 * One key as a row of the list: a table row at wide sizes, a card below the
 * breakpoint (the same markup, explicit ARIA roles so the cells keep their
 * meaning when CSS turns them into blocks). Text goes in as text.
 *
 * @module
 */
import { ownValue } from "../_check.ts";
import { type Child, h, svg } from "./_dom.ts";
import type { Format } from "./_format.ts";
import { expiresSoon, fill, firstHour, type KeyView, USAGE_HOURS } from "./_model.ts";
import type { ApiKeysManagerStrings } from "./strings.ts";

/** An action a row offers. */
export interface RowAction {
  /** Visible label (`Rotate`). */
  label: string;
  /** Runs it. */
  run: () => void;
  /** A destructive one. */
  danger?: boolean;
}

/** What a row needs besides its key. */
export interface RowContext {
  /** Strings. */
  s: ApiKeysManagerStrings;
  /** Formatters. */
  f: Format;
  /** The time the row is drawn. */
  now: number;
  /** Whether the usage column is shown. */
  usage: boolean;
  /** Whether the credits column is shown. */
  credits: boolean;
  /** A key's prefix when it is on this page (to mark a rotation's pair). */
  prefixOf: (id: string) => string | null;
}

/** The columns, in order: heading string and whether shown. */
export function columns(
  s: ApiKeysManagerStrings,
  usage: boolean,
  credits: boolean,
): [string, string][] {
  const all: [string, string, boolean][] = [
    ["key", s.key, true],
    ["status", s.status, true],
    ["created", s.created, true],
    ["used", s.lastUsed, true],
    ["usage", s.usage, usage],
    ["credits", s.credits, credits],
    ["actions", s.actions, true],
  ];
  return all.filter(([, , shown]) => shown).map(([id, text]) => [id, text]);
}

/** A `<time>` showing `text`, the absolute date and time in its title. */
function time(date: Date, text: string, f: Format): HTMLTimeElement {
  return h("time", { datetime: date.toISOString(), title: f.dateTime(date) }, text);
}

/** `environment` in the page's language (`live`, `test`), others as given. */
export function environmentLabel(s: ApiKeysManagerStrings, environment: string): string {
  return environment === "live"
    ? s.environmentLive
    : environment === "test"
    ? s.environmentTest
    : environment;
}

/** The status label of `status`. */
export function statusLabel(s: ApiKeysManagerStrings, status: string): string {
  const labels = {
    active: s.statusActive,
    rotating: s.statusRotating,
    expired: s.statusExpired,
    revoked: s.statusRevoked,
  };
  return ownValue(labels, status) ?? status;
}

/** The expiry line: relative and absolute, or "never expires". */
function expiryLine(key: KeyView, { s, f, now }: RowContext): Child {
  const at = key.expiresAt;
  if (!at) return h("span", { class: "m" }, s.neverExpires);
  const template = key.status === "rotating"
    ? s.stopsAt
    : at.getTime() <= now
    ? s.expiredAt
    : s.expiresAt;
  const text = fill(template, { when: f.relative(at, now), date: f.dateTime(at) });
  return time(at, text, f);
}

/** The `USAGE_HOURS` hourly counts as a chart with its visible total; hover, focus and arrows show each hour. */
export function usageCell(counts: number[] | undefined, { s, f, now }: RowContext): Child[] {
  if (!counts) return [];
  const sum = counts.reduce((total, count) => total + count, 0);
  const total = f.number(sum);
  const tip = h("span", { class: "tip m", "aria-live": "polite" });
  const root = svg("svg", {
    viewBox: `0 0 ${USAGE_HOURS * 3} 20`,
    width: USAGE_HOURS * 3,
    height: 20,
    role: "img",
    tabindex: 0,
    "aria-label": fill(f.form(s.usageLabel, sum), { count: total }),
    part: "usage-chart",
  });
  const max = Math.max(1, ...counts);
  const bars = counts.map((count, index) => {
    const height = count > 0 ? Math.max(1, Math.round((count / max) * 20)) : 0;
    const bar = svg("rect", { x: index * 3, y: 20 - height, width: 2, height });
    root.append(bar);
    return bar;
  });
  let selected = -1;
  const last = USAGE_HOURS - 1;
  const show = (index: number) => {
    selected = Math.min(last, Math.max(0, index));
    bars.forEach((bar, i) => bar.classList.toggle("on", i === selected));
    const start = new Date(firstHour(now) + selected * 3_600_000);
    const count = counts[selected] ?? 0;
    tip.textContent = fill(f.form(s.usageHour, count), {
      time: f.time(start),
      count: f.number(count),
    });
  };
  const hide = () => {
    selected = -1;
    bars.forEach((bar) => bar.classList.remove("on"));
    tip.textContent = "";
  };
  root.addEventListener("focus", () => show(last));
  root.addEventListener("blur", hide);
  root.addEventListener("pointerleave", () => root.matches(":focus") || hide());
  root.addEventListener("pointermove", (event) => {
    const box = root.getBoundingClientRect();
    show(Math.floor(((event.clientX - box.left) / Math.max(1, box.width)) * USAGE_HOURS));
  });
  root.addEventListener("keydown", (event) => {
    const moves: Record<string, number> = {
      ArrowLeft: selected - 1,
      ArrowRight: selected + 1,
      Home: 0,
      End: last,
    };
    const move = moves[event.key];
    if (move === undefined) return;
    event.preventDefault();
    show(move);
  });
  return [
    h("span", { class: "total" }, fill(f.form(s.usageTotal, sum), { count: total })),
    root,
    tip,
  ];
}

/** The credits: remaining, next refill, and the shared-pool mark. */
function creditsCell(key: KeyView, { s, f, now }: RowContext): Child[] {
  const refill = key.creditsRefillAmount !== null && key.creditsNextRefillAt;
  return [
    key.credits !== null &&
    h("span", {}, fill(f.form(s.creditsLeft, key.credits), { count: f.number(key.credits) })),
    refill && key.creditsNextRefillAt &&
    h(
      "span",
      { class: "m" },
      fill(f.form(s.creditsRefill, key.creditsRefillAmount ?? 0), {
        amount: f.number(key.creditsRefillAmount ?? 0),
        when: f.relative(key.creditsNextRefillAt, now),
      }),
    ),
    key.creditsSharedBy === "tenant" && h("span", { class: "badge" }, s.creditsShared),
  ];
}

/** The key's row, with its actions behind one disclosure button (one tab stop per row). */
export function keyRow(
  key: KeyView,
  counts: number[] | undefined,
  actions: RowAction[],
  ctx: RowContext,
): HTMLTableRowElement {
  const { s, f, now } = ctx;
  const labels = Object.fromEntries(columns(s, ctx.usage, ctx.credits));
  const cell = (column: string, ...children: Child[]) =>
    h("td", { role: "cell", "data-col": column, "data-label": labels[column] }, ...children);
  const successor = key.replacedByKeyId && ctx.prefixOf(key.replacedByKeyId);
  const predecessor = key.replacesKeyId && ctx.prefixOf(key.replacesKeyId);
  const names = { name: key.name, prefix: key.prefix };
  const menu = h(
    "div",
    { class: "menu", hidden: true },
    ...actions.map(({ label, run, danger }) =>
      h("button", {
        type: "button",
        class: danger ? "x" : "",
        part: "button action",
        "aria-label": fill(s.actionLabel, { action: label, ...names }),
        onclick: run,
      }, label)
    ),
  );
  const toggle = actions.length > 0 && h("button", {
    type: "button",
    class: "more",
    part: "button actions-button",
    "aria-expanded": "false",
    "aria-label": fill(s.actionsFor, names),
    onclick: () => {
      const open = toggle && toggle.getAttribute("aria-expanded") !== "true";
      toggle && toggle.setAttribute("aria-expanded", String(open));
      menu.hidden = !open;
    },
  }, s.actions);
  menu.addEventListener("keydown", (event) => {
    if (event.key !== "Escape" || !toggle) return;
    event.stopPropagation();
    toggle.click();
    toggle.focus();
  });
  return h(
    "tr",
    {
      role: "row",
      part: "key",
      "data-id": key.id,
      "data-status": key.status,
      class: successor || predecessor ? "pair" : undefined,
    },
    h(
      "th",
      { role: "rowheader", scope: "row", "data-col": "key", tabindex: "-1" },
      h("span", { class: "name", title: key.name }, key.name),
      " ",
      h("code", { part: "prefix" }, key.prefix),
      h(
        "span",
        { class: "m small" },
        environmentLabel(s, key.environment),
        key.scopes.length > 0 && ` · ${key.scopes.join(", ")}`,
      ),
      successor && h("span", { class: "note" }, fill(s.replacedBy, { prefix: successor })),
      predecessor && h("span", { class: "note" }, fill(s.replaces, { prefix: predecessor })),
    ),
    cell(
      "status",
      h("span", { class: `st ${key.status}` }, statusLabel(s, key.status)),
      expiresSoon(key, now) && key.status === "active" &&
        h("span", { class: "badge", part: "badge" }, s.expiresSoon),
      // A revoked key stops for good: no expiry to tell.
      key.status !== "revoked" && h("span", { class: "small" }, expiryLine(key, ctx)),
    ),
    cell("created", key.createdAt ? time(key.createdAt, f.dateTime(key.createdAt), f) : ""),
    cell(
      "used",
      key.lastUsedAt
        ? time(key.lastUsedAt, f.past(key.lastUsedAt, now), f)
        : h("span", { class: "m" }, s.neverUsed),
      key.lastUsedAt && h("span", { class: "m small" }, f.dateTime(key.lastUsedAt)),
    ),
    ctx.usage && cell("usage", ...usageCell(counts, ctx)),
    ctx.credits && cell("credits", ...creditsCell(key, ctx)),
    cell("actions", toggle, menu),
  );
}

/** The table of `rows` with its column headings. */
export function keyTable(rows: HTMLTableRowElement[], ctx: RowContext): HTMLTableElement {
  return h(
    "table",
    { role: "table", part: "table", "aria-labelledby": "t" },
    h(
      "thead",
      {},
      h(
        "tr",
        { role: "row" },
        ...columns(ctx.s, ctx.usage, ctx.credits).map(([, text]) =>
          h("th", { role: "columnheader", scope: "col" }, text)
        ),
      ),
    ),
    h("tbody", {}, ...rows),
  );
}
