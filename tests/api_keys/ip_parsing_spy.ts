/**
 * A spy on everything that could parse address text: the address parser's
 * first step (`String.prototype.split` on `.` or `:`, recorded as
 * `address#split` with the split text's length) and every `RegExp.prototype`
 * method a string method may call. Used to prove that oversized input is
 * refused before any parsing.
 */

/** One call that reached a spied function: its name and its longest string argument. */
export interface ParsingCall {
  name: string;
  longest: number;
}

/** The longest string among `args` (0 when none). */
function longestString(args: unknown[]): number {
  let longest = 0;
  for (const arg of args) if (typeof arg === "string" && arg.length > longest) longest = arg.length;
  return longest;
}

/**
 * Runs `fn` (synchronously) with the spies installed and returns the calls
 * they saw. A call with a string argument longer than `limit` throws at once,
 * so a regression fails fast instead of running a slow regular expression.
 */
export function spyIpParsing(fn: () => unknown, limit = 64): ParsingCall[] {
  const calls: ParsingCall[] = [];
  const restore: (() => void)[] = [];
  const wrap = (owner: Record<PropertyKey, unknown>, key: PropertyKey, name: string) => {
    const original = owner[key] as (...args: unknown[]) => unknown;
    owner[key] = function (this: unknown, ...args: unknown[]) {
      const longest = longestString(args);
      calls.push({ name, longest });
      if (longest > limit) throw new Error(`${name} reached with ${longest} characters`);
      return original.apply(this, args);
    };
    restore.push(() => (owner[key] = original));
  };
  const split = String.prototype.split;
  String.prototype.split = function (this: string, ...args: unknown[]) {
    if (args[0] === "." || args[0] === ":") {
      calls.push({ name: "address#split", longest: this.length });
      if (this.length > limit) {
        throw new Error(`address#split reached with ${this.length} characters`);
      }
    }
    return split.apply(this, args as Parameters<typeof split>);
  } as typeof split;
  restore.push(() => (String.prototype.split = split));
  const regExp = RegExp.prototype as unknown as Record<PropertyKey, unknown>;
  for (const key of ["exec", "test"]) wrap(regExp, key, `RegExp#${key}`);
  for (
    const symbol of [Symbol.match, Symbol.matchAll, Symbol.replace, Symbol.search, Symbol.split]
  ) {
    wrap(regExp, symbol, `RegExp#${symbol.description}`);
  }
  try {
    fn();
  } finally {
    for (const undo of restore.reverse()) undo();
  }
  return calls;
}
