/**
 * Dates, numbers, durations and plural forms in the page's language
 * (`<html lang>`) and the user's time zone, through `Intl`.
 *
 * @module
 */
import {
  API_KEYS_MANAGER_STRINGS,
  type ApiKeysManagerStrings,
  COUNTED_STRINGS,
  type PluralForms,
  type PluralString,
} from "./strings.ts";

/** The plural categories of `Intl.PluralRules`, the keys a `PluralForms` may have. */
const CATEGORIES: readonly string[] = ["zero", "one", "two", "few", "many", "other"];

/** The English defaults' plural forms: chosen by English rules on any page ("0 requests"). */
const ENGLISH_FORMS: ReadonlySet<unknown> = new Set(
  Object.values(API_KEYS_MANAGER_STRINGS).filter((value) => typeof value !== "string"),
);

/**
 * The replacements of `strings` the element takes (its `i18n`): for a known
 * name, a string, or for a string with a number in it (`COUNTED_STRINGS`) a
 * frozen copy of its plural forms (an object's own string forms keyed by
 * plural category, `other` among them); anything else left out (that string
 * stays English).
 *
 * @example
 * ```ts
 * import { overridesOf } from "./_format.ts";
 * overridesOf({ title: "Clés", usageTotal: { one: "{count} appel", other: "{count} appels" } });
 * overridesOf(JSON.parse('{"usageTotal": {"one": "{count} appel"}}')); // {}: no other
 * ```
 */
export function overridesOf(
  strings: Partial<ApiKeysManagerStrings>,
): Partial<ApiKeysManagerStrings> {
  const kept: Record<string, PluralString> = {};
  for (const [name, value] of Object.entries(strings ?? {})) {
    if (!Object.hasOwn(API_KEYS_MANAGER_STRINGS, name)) continue;
    if (typeof value === "string") kept[name] = value;
    else if (COUNTED_STRINGS.has(name as keyof ApiKeysManagerStrings)) {
      const forms = pluralForms(value);
      if (forms !== undefined) kept[name] = forms;
    }
  }
  return kept as Partial<ApiKeysManagerStrings>;
}

/** A frozen copy of `value`'s own string forms by plural category, if `other` is among them. */
function pluralForms(value: unknown): PluralForms | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const copy = Object.fromEntries(Object.entries(value));
  const valid = Object.entries(copy).every(([category, form]) =>
    CATEGORIES.includes(category) && typeof form === "string"
  );
  return valid && typeof copy.other === "string" ? Object.freeze(copy as PluralForms) : undefined;
}

const UNITS: Record<string, [Intl.RelativeTimeFormatUnit, number]> = {
  m: ["minute", 60_000],
  h: ["hour", 3_600_000],
  d: ["day", 86_400_000],
  w: ["week", 604_800_000],
  y: ["year", 31_536_000_000],
};
const STEPS: [Intl.RelativeTimeFormatUnit, number][] = [
  ["year", 31_536_000_000],
  ["month", 2_592_000_000],
  ["week", 604_800_000],
  ["day", 86_400_000],
  ["hour", 3_600_000],
  ["minute", 60_000],
];

/** A duration such as `30d`, `24h` or `1y`: its unit and count, `null` for anything else. */
export function durationOf(value: string): { unit: string; count: number; ms: number } | null {
  const match = /^(\d{1,4})([mhdwy])$/.exec(value);
  const unit = match?.[2] === undefined ? undefined : UNITS[match[2]];
  if (!match || !unit) return null;
  const count = Number(match[1]);
  return { unit: unit[0], count, ms: count * unit[1] };
}

/** `lang` if it is a tag `Intl` takes, else `undefined` (the browser's language): `en_US` is refused. */
function supported(lang: string | undefined): string | undefined {
  try {
    return lang ? Intl.getCanonicalLocales(lang)[0] : undefined;
  } catch {
    return undefined;
  }
}

let last: { lang: string; format: Format } | undefined;
/** English plural rules, made at the first default string's form. */
let english: Intl.PluralRules | undefined;

/** The formatters for `lang` (`<html lang>`), made again only when it changes. */
export function formatFor(lang: string): Format {
  if (last?.lang !== lang) last = { lang, format: new Format(lang) };
  return last.format;
}

/** Formatters for one language (`undefined`, empty or refused by `Intl`: the browser's). */
export class Format {
  #lang: string | undefined;
  #dateTime: Intl.DateTimeFormat;
  #time: Intl.DateTimeFormat;
  #number: Intl.NumberFormat;
  #relative: Intl.RelativeTimeFormat;
  #plural: Intl.PluralRules;

  /** Formatters for `lang`. */
  constructor(lang: string | undefined) {
    const tag = supported(lang);
    this.#lang = tag;
    this.#dateTime = new Intl.DateTimeFormat(tag, { dateStyle: "medium", timeStyle: "short" });
    this.#time = new Intl.DateTimeFormat(tag, { hour: "numeric", minute: "2-digit" });
    this.#number = new Intl.NumberFormat(tag);
    this.#relative = new Intl.RelativeTimeFormat(tag, { numeric: "auto" });
    this.#plural = new Intl.PluralRules(tag);
  }

  /**
   * The form of `template` for the number `n`: its plural category's, else
   * `other`; the category by the page's language, or English for the defaults.
   */
  form(template: PluralString, n: number): string {
    if (typeof template === "string") return template;
    const rules = ENGLISH_FORMS.has(template)
      ? (english ??= new Intl.PluralRules("en"))
      : this.#plural;
    const category = rules.select(n);
    return Object.hasOwn(template, category)
      ? template[category as keyof PluralForms]!
      : template.other;
  }

  /** Date and time, e.g. `Nov 29, 2026, 9:05 AM`. */
  dateTime(date: Date): string {
    return this.#dateTime.format(date);
  }

  /** Time of day, e.g. `9:05 AM`. */
  time(date: Date): string {
    return this.#time.format(date);
  }

  /** A number with the language's grouping. */
  number(value: number): string {
    return this.#number.format(value);
  }

  /** `date` relative to `now`, e.g. `in 3 days`, `2 hours ago`. */
  relative(date: Date, now: number): string {
    const exact = date.getTime() - now;
    const delta = Math.round(exact / 60_000) * 60_000;
    for (const [unit, ms] of STEPS) {
      if (Math.abs(delta) >= ms) return this.#relative.format(Math.round(delta / ms), unit);
    }
    return this.#relative.format(Math.round(exact / 1000), "second");
  }

  /** A past event's `date` relative to `now`; ahead of it (the server's clock ahead of ours): now. */
  past(date: Date, now: number): string {
    return this.relative(date, Math.max(now, date.getTime()));
  }

  /** A wait of `seconds` from `now`: `in 30 seconds` under a minute, else as `relative` words it. */
  wait(seconds: number, now: number): string {
    return seconds < 60
      ? this.#relative.format(seconds, "second")
      : this.relative(new Date(now + seconds * 1000), now);
  }

  /** A duration (`30d`, `1h`) in words, e.g. `30 days`; anything else as given. */
  duration(value: string): string {
    const duration = durationOf(value);
    if (!duration) return value;
    return new Intl.NumberFormat(this.#lang, {
      style: "unit",
      unit: duration.unit,
      unitDisplay: "long",
    }).format(duration.count);
  }

  /** A window in milliseconds in words, in its largest whole unit, e.g. `1 minute`. */
  window(ms: number): string {
    const found = Object.entries(UNITS).reverse().find(([, [, size]]) => ms % size === 0);
    return found ? this.duration(`${ms / found[1][1]}${found[0]}`) : `${this.number(ms)} ms`;
  }
}
