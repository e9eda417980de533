/**
 * The name, the message and the kind of a thrown value, read without a throw,
 * for the log lines of every component (a failed caller-supplied function is
 * reported by its error's name only, never its message; a store's error by
 * both) and for telling a bug from an outage. Imports nothing.
 *
 * @module
 */

/**
 * The name of a thrown value: an `Error`'s `name`, else its type; `"unknown"`
 * when it cannot be read (a revoked `Proxy`, a throwing getter). Never throws.
 *
 * @example
 * ```ts
 * import { errorNameOf } from "./_error_name.ts";
 * errorNameOf(new TypeError("bad")); // "TypeError"
 * errorNameOf("down"); // "string"
 * ```
 */
export function errorNameOf(error: unknown): string {
  try {
    return error instanceof Error ? String(error.name) : typeof error;
  } catch {
    return "unknown";
  }
}

/** Most characters `errorMessageOf` answers. */
export const MESSAGE_MAX = 200;

/** Most characters `errorMessageOf` reads (and hides credentials in) before its cut. */
const HIDDEN_MAX = 4 * MESSAGE_MAX;

/**
 * The message of a thrown value: its `message`, else its `code` (a system
 * error's `ECONNREFUSED`), else the value as text, a URL's user and password
 * hidden (`postgresql://***@db`) and a credential's value too (a query's
 * `?password=***`, libpq's `password=***`, JSON's `"password":***`, YAML's
 * `password: ***`, `Authorization: ***`), at most `MESSAGE_MAX` characters;
 * `"unknown"` when it cannot be read (a revoked `Proxy`, a throwing getter).
 * Never throws.
 *
 * @example
 * ```ts
 * import { errorMessageOf } from "./_error_name.ts";
 * errorMessageOf(new Error("down")); // "down"
 * errorMessageOf("down"); // "down"
 * ```
 */
export function errorMessageOf(error: unknown): string {
  try {
    const e = error as { message?: unknown; code?: unknown } | null | undefined;
    const text = String(e?.message || e?.code || error);
    // Hidden in the first `HIDDEN_MAX` characters (linear time on any text), then cut to
    // `MESSAGE_MAX`: a cut inside credentials would leave them unmatched.
    return hidden(text.slice(0, HIDDEN_MAX), text.length > HIDDEN_MAX).slice(0, MESSAGE_MAX);
  } catch {
    return "unknown";
  }
}

/**
 * A URL's scheme and the rest of it, up to a space: a quote does not end it,
 * since a userinfo keeps `'` and `"` unescaped (a driver quoting the URL it
 * cannot parse leaves its closing quote in the run, after the last `@`). A
 * scheme may follow any character (`conn_postgresql://`). Each start tries at
 * most 33 characters of scheme, then one greedy run with nothing after it to
 * backtrack for, so in time linear in the text.
 */
const URL_TEXT = /([a-z][a-z0-9+.-]{0,31}:\/\/)\S*/gi;
/**
 * How far past its scheme a URL's last `@` is looked for, spaces included (a password may hold a
 * space, or end in the line break of the file it was read from), up to the next URL.
 */
const URL_REACH = 256;

/**
 * `text` with what either rule hides as `***`, each run of hidden characters
 * once: a named credential's value (`CREDENTIAL`), and a URL's text after its
 * scheme up to its last `@` within `URL_REACH` (the `user:password@`, whose password may hold
 * `/`, `?`, `#`, `@`, a space or what reads as a named credential: most often the reason the
 * driver could not parse it). Both read the same text, so neither can hide
 * what the other needs to see (a URL's `@` inside a credential's value, a
 * credential's name inside a URL's password). A URL without credentials but
 * with a later `@` (`/a@b`, `?u=a@b`) loses what comes before it: more hidden,
 * never less, and the part after the `@` kept (so does text after a URL up to a later `@` within
 * reach). A URL whose reach runs into the end of a `cut` text (its last `@` may be past the cut) is
 * hidden whole after its scheme.
 */
function hidden(text: string, cut: boolean): string {
  const ranges: [number, number][] = [];
  for (const match of text.matchAll(CREDENTIAL)) {
    const name = match[1] ?? match[2] ?? match[3];
    ranges.push([match.index + name.length, match.index + match[0].length]);
  }
  const urls = [...text.matchAll(URL_TEXT)];
  urls.forEach((match, i) => {
    const from = match.index + match[1].length;
    // Its last `@` up to `URL_REACH` on, spaces crossed, before the next URL's text.
    const end = Math.min(urls[i + 1]?.index ?? text.length, from + URL_REACH);
    const at = cut && end === text.length ? end : from + text.slice(from, end).lastIndexOf("@");
    if (at > from) ranges.push([from, at]);
  });
  ranges.sort((a, b) => a[0] - b[0]);
  let out = "";
  let shown = 0; // the first character after the last run hidden
  for (let i = 0; i < ranges.length;) {
    const from = ranges[i][0];
    let to = ranges[i++][1];
    while (i < ranges.length && ranges[i][0] <= to) to = Math.max(to, ranges[i++][1]);
    out += `${text.slice(shown, from)}***`;
    shown = to;
  }
  return out + text.slice(shown);
}

/** The end of a credential's name, in a regular expression's text. */
const KEY_END = String.raw`(?:pass(?:word|wd)?|pwd|secret|token|api[_-]?key)`;

/** A credential's name: a word ending in one (`sslpassword`, `client_secret`, `X-Api-Key`). */
const KEY = String.raw`\w*${KEY_END}`;

/**
 * A credential's name in a URL's query: `KEY` with any character written
 * `%XX` (`pass%77ord`, `client%5Fsecret`). An escape starts with `%`, which no
 * `\w` is: each position is read one way only.
 */
const QUERY_KEY = String.raw`(?:\w|%[0-9a-f]{2})*` +
  KEY_END.replace(/\[_-\]|[a-z]/g, (c) => {
    if (c.length > 1) return "(?:[_-]|%5f|%2d)";
    const hex = c.charCodeAt(0).toString(16); // a-z: 61-7a, A-Z: 41-5a
    return `(?:${c}|%[${hex[0]}${Number(hex[0]) - 2}]${hex[1]})`;
  });

/**
 * A quoted value, single or double, whole with its `\'` / `\"` escapes (to the
 * end of the text if left open).
 */
const QUOTED = String.raw`'(?:[^'\\]|\\[^])*'?|"(?:[^"\\]|\\[^])*"?`;

/**
 * One parameter of an `Authorization` value (Digest's `realm="x y"`): up to a
 * space, quote or comma, then a quoted part whole.
 */
const PARAM = String.raw`[^\s'",]*(?:"(?:[^"\\]|\\[^])*"?)?`;

/**
 * A credential's name and separator (kept), and its value (hidden): a quoted
 * value (`QUOTED`); else in a URL's query (after `?` or `&`, the name perhaps
 * percent-encoded) up to the next `&`, space or quote (a `#` may be the
 * password's: hidden too); elsewhere (a libpq `key=value` connection string,
 * JSON's or YAML's `key: value`, the name perhaps quoted, spaces allowed
 * around `=` or `:`; in JSON held in a string, `\"` quotes: the rest hidden) up
 * to the next space or quote; an `Authorization` header's value (`Bearer abc`)
 * with its scheme and any parameters after a comma (Digest's). The name backtracks within its one
 * word only, and the value runs once, greedy, with nothing after it to
 * backtrack for: linear in the text.
 */
const CREDENTIAL = new RegExp(
  String.raw`([?&]${QUERY_KEY}=)(?:${QUOTED}|[^&\s'"]*)` +
    String.raw`|(\b${KEY}\\?["']?\s*[:=]\s*)(?:\\?(?:${QUOTED})|[^\s'"]*)` +
    String
      .raw`|(\bauthorization["']?\s*[:=]\s*)(?:${QUOTED}|(?:[a-z][\w-]*[ \t]+)?${PARAM}(?:,[ \t]*${PARAM})*)`,
  "gi",
);

/**
 * Whether `error` is a programming error (a `TypeError`, `RangeError`,
 * `ReferenceError` or `SyntaxError`: a bug or a misconfiguration of a store or
 * a callback), not unavailability. A value that cannot be read (a revoked
 * `Proxy`) is not. Never throws.
 *
 * @example
 * ```ts
 * import { isBug } from "./_error_name.ts";
 * isBug(new ReferenceError("plans is not defined")); // true
 * isBug(new Error("ECONNREFUSED")); // false
 * ```
 */
export function isBug(error: unknown): boolean {
  try {
    return error instanceof TypeError || error instanceof RangeError ||
      error instanceof ReferenceError || error instanceof SyntaxError;
  } catch {
    return false;
  }
}
