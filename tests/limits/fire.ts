/**
 * One process of the exactness test: connects and warms up, prints `ready`,
 * waits for a line on stdin, fires `count` concurrent checks of `subject` at
 * limit 100 on the `kind` store, and prints `{"allowed":N,"unavailable":N}`.
 *
 *   deno run -A tests/limits/fire.ts <postgres|redis> <subject> <count>
 */
import { createRateLimiter } from "../../rate_limits/limiter.ts";
import { openStore } from "./_services.ts";

const [kind, subject, count] = Deno.args;
const { store, close } = await openStore(kind as "postgres" | "redis", undefined, 5);
const limiter = createRateLimiter({ store, timeoutMs: 30_000, logger: () => {} });
const policy = [{ name: "exact", limit: 100, windowMs: 60_000 }];
await Promise.all(
  Array.from({ length: 5 }, () => limiter.check(`${subject}:warm`, policy, { cost: 0 })),
);
console.log("ready");
await Deno.stdin.readable.getReader().read();
const results = await Promise.all(
  Array.from({ length: Number(count) }, () => limiter.check(subject, policy)),
);
await close();
const unavailable = results.filter((r) => r.unavailable).length;
console.log(JSON.stringify({ allowed: results.filter((r) => r.allowed).length, unavailable }));
