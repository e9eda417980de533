/**
 * One process of the exactness test: connects and warms up, prints `ready`,
 * waits for a line on stdin, fires `count` concurrent checks of `subject` at
 * limit 100 (or, with `credits`, spends of a balance of 1,000, sent to the
 * store directly) on the `kind` store, and prints `{"allowed":N,"unavailable":N,"least":N}` (`least`: the
 * lowest `remaining` answered).
 *
 *   deno run -A tests/limits/fire.ts <postgres|redis> <subject> <count> [credits]
 */
import { createRateLimiter } from "../../rate_limits/limiter.ts";
import { openStore } from "./_services.ts";

const [kind, subject, count, mode] = Deno.args;
const { store, close } = await openStore(kind as "postgres" | "redis", undefined, 5);
const limiter = createRateLimiter({ store, timeoutMs: 30_000, logger: () => {} });
const policy = [{ name: "exact", limit: 100, windowMs: 60_000 }];
await Promise.all(
  Array.from({ length: 5 }, () => limiter.check(`${subject}:warm`, policy, { cost: 0 })),
);
console.log("ready");
await Deno.stdin.readable.getReader().read();
// Credits go to the store itself: no timeout, so a slow commit is waited for, never "open".
const credit = { kind: "credit" as const, subject, name: "credits", cost: 1, initial: 1_000 };
const results = await Promise.all(
  Array.from({ length: Number(count) }, async () => {
    if (mode !== "credits") return await limiter.check(subject, policy);
    const [result] = await store.check([credit]);
    return { allowed: result.allowed, unavailable: false, credits: result, policies: [] };
  }),
);
await close();
const unavailable = results.filter((r) => r.unavailable).length;
const least = Math.min(
  ...results.filter((r) => !r.unavailable).map((r) =>
    r.credits?.remaining ?? r.policies[0].remaining
  ),
);
console.log(
  JSON.stringify({ allowed: results.filter((r) => r.allowed).length, unavailable, least }),
);
