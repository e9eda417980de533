/**
 * The one refusal of an unknown name in the options and inputs of the
 * api-keys and rate-limits cores: a misspelt option silently ignored is a
 * check silently off. A leaf shared by both cores. Imports nothing.
 *
 * @module
 */

/** Unknown names a message lists at most (a client passed as options has hundreds). */
const NAMED = 10;

/**
 * Throws a `TypeError` (`<label>: unknown field \`x\` (known: ...)`, `kind`
 * naming it otherwise; `unknown fields \`x\`, \`y\`` for several, the first 10 and how many
 * more past them) naming every
 * enumerable key of `value`, own or inherited (a known one is read from the
 * prototype too), not in `known`; a key of `Object.prototype`'s (a
 * polyfill's) is read past. A class's methods are not enumerable.
 *
 * @example
 * ```ts
 * import { assertKnownFields } from "./_known_fields.ts";
 * assertKnownFields({ name: "api" }, ["name", "limit"], 'rate-limit policy "api"');
 * ```
 */
export function assertKnownFields(
  value: object,
  known: readonly string[],
  label: string,
  kind = "field",
): void {
  // No list made (`Object.keys`) and no call per field (`includes`) unless one is unknown: the
  // limiter checks a check's options and balances, the api-keys core `AuthorizeOptions`, per call.
  next: for (const key in value) {
    for (let i = 0; i < known.length; i++) if (known[i] === key) continue next;
    if (isUnknown(value, key, known)) {
      const unknown: string[] = [];
      for (const other in value) if (isUnknown(value, other, known)) unknown.push(`\`${other}\``);
      const more = unknown.length > NAMED ? ` and ${unknown.length - NAMED} more` : "";
      throw new TypeError(
        `${label}: unknown ${kind}${unknown.length > 1 ? "s" : ""} ${
          unknown.slice(0, NAMED).join(", ")
        }${more} (known: ${known.join(", ")})`,
      );
    }
  }
}

/**
 * Whether the enumerable `key` of `value` is refused: not in `known`, and not
 * an inherited field of `Object.prototype` (a polyfill's is no caller's:
 * refused, it would fail every check).
 */
function isUnknown(value: object, key: string, known: readonly string[]): boolean {
  return !known.includes(key) &&
    (Object.hasOwn(value, key) || !Object.hasOwn(Object.prototype, key));
}
