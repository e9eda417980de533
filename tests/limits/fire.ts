/**
 * One process of the exactness test, on Deno from the sources or on Node from
 * the npm build: opens the `kind` store through its client at `version`,
 * warms up, prints `ready`, reads a wall-clock time (ms) on stdin, fires `count`
 * concurrent checks of `subject` at limit 100 at that time, and prints
 * `{"allowed":N,"unavailable":N,"client":"<version loaded>"}`.
 *
 *   deno run -A tests/limits/fire.ts <postgres|redis> <subject> <count> <version>
 */
import process from "node:process";
import { createRateLimiter } from "../../rate_limits/limiter.ts";
import { loadClient, openStore, type StoreKind } from "./_stores.ts";

const [kind, subject, count, version] = process.argv.slice(2);
const { store, close } = await openStore(kind as StoreKind, undefined, 5, version);
const limiter = createRateLimiter({ store, timeoutMs: 30_000, logger: () => {} });
const policy = [{ name: "exact", limit: 100, windowMs: 60_000 }];
await Promise.all(
  Array.from({ length: 5 }, () => limiter.check(`${subject}:warm`, policy, { cost: 0 })),
);
console.log("ready");
const go = await new Promise<string>((resolve) => process.stdin.once("data", resolve));
process.stdin.pause();
await new Promise((resolve) => setTimeout(resolve, Number(String(go).trim()) - Date.now()));
const results = await Promise.all(
  Array.from({ length: Number(count) }, () => limiter.check(subject, policy)),
);
await close();
console.log(JSON.stringify({
  allowed: results.filter((r) => r.allowed).length,
  unavailable: results.filter((r) => r.unavailable).length,
  client: loadClient(kind === "redis" ? "redis" : "pg", version).version,
}));
