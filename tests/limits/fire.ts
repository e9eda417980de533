/**
 * One process of the exactness test, on Deno from the sources or on Node from
 * the npm build: opens the `kind` store through its client at `version`,
 * warms up, prints `ready`, reads a wall-clock time (ms) on stdin, fires `count`
 * concurrent checks of `subject` at limit 100 (or, with `credits`, spends of a
 * balance of 1,000 through the limiter with a far timeout; with `refill`, `count` loops
 * spending a balance of 10 refilled to 50 every 3 s until 1 s past the next
 * boundary; with `default`, checks of a limiter with default options, each
 * spending 1 of a balance of 1,000 too; with `pool`, spends of this process's
 * own balance of 400 and a pool of 1,000 shared by all, in one check; with
 * `apikey-pool`, the same through an API key of this process, tenant `subject`,
 * `authorize` spending its own balance and the tenant's pool) at that time, and prints
 * `{"allowed":N,"unavailable":N,"timeouts":N,"client":"<version loaded>","least":N}`
 * (`timeouts`: answers of the failure policy for want of a reply in time)
 * (`least`: the lowest `remaining` answered).
 *
 *   deno run -A tests/limits/fire.ts <postgres|redis> <subject> <count> <version> [credits|refill|default|pool|apikey-pool]
 */
import process from "node:process";
import { createRateLimiter } from "../../rate_limits/limiter.ts";
import { checkOnce, loadClient, openStore, type StoreKind } from "./_stores.ts";
import { pooledKey } from "./_pooled_key.ts";

const [kind, subject, count, version, mode] = process.argv.slice(2);
const { store, close } = await openStore(kind as StoreKind, undefined, 5, version);
// `default`: the defaults a provider runs with (timeoutMs included); otherwise a far timeout.
const limiter = mode === "default"
  ? createRateLimiter({ store, logger: () => {} })
  : createRateLimiter({ store, timeoutMs: 30_000, logger: () => {} });
const policy = [{ name: "exact", limit: 100, windowMs: 60_000 }];
await limiter.ready();
// Warms every connection of the pool (the limiter would batch these into one call), credits too
// (PostgreSQL compiles each function once per connection).
const warm = { kind: "window" as const, subject: `${subject}:warm`, ...policy[0], cost: 0 };
const warmCredit = {
  kind: "credit" as const,
  subject: warm.subject,
  name: "c",
  cost: 0,
  initial: 1,
};
await Promise.all(Array.from({ length: 5 }, () => checkOnce(store, [warm, warmCredit])));
// `default`: a burst on a running service, not on a cold one: the limiter's path compiled
// (a cold process spends most of its burst compiling, which a loaded machine stretches past
// timeoutMs; the store's counts stay exact either way, the failure policy answers the rest).
if (mode === "default") {
  const warmCredits = { credits: { initial: 1_000 } };
  for (let round = 0; round < 3; round++) {
    await Promise.all(
      Array.from({ length: Number(count) }, () => limiter.check(warm.subject, policy, warmCredits)),
    );
  }
}
console.log("ready");
const go = await new Promise<string>((resolve) => process.stdin.once("data", resolve));
process.stdin.pause();
await new Promise((resolve) => setTimeout(resolve, Number(String(go).trim()) - Date.now()));
const credit = { kind: "credit" as const, subject, name: "credits", cost: 1, initial: 1_000 };
/** `refill`: a balance of 10 refilled to 50 every 3 s, spent from `go` to 1 s past the next boundary. */
const REFILL_MS = 3_000;
const refilled = { ...credit, initial: 10, refill: { amount: 50, everyMs: REFILL_MS } };
const stop = Number(go) - (Number(go) % REFILL_MS) + REFILL_MS + 1_000;
/** `pool`: this process's own balance (as a key's) and the pool all share (as a tenant's). */
const own = { initial: 400, subject: `${subject}:own:${process.pid}` };
const pool = { initial: 1_000, name: "pool" };
const pooled = mode === "apikey-pool" ? await pooledKey(store, subject, 400, 1_000) : undefined;
const results = await Promise.all(
  Array.from({ length: Number(count) }, async () => {
    if (mode === "refill") {
      const answers = [];
      while (Date.now() < stop) {
        const [result] = await checkOnce(store, [refilled]);
        answers.push({
          allowed: result.allowed,
          unavailable: false,
          credits: result,
          policies: [],
        });
      }
      return answers;
    }
    if (mode === "default") {
      return await limiter.check(subject, policy, { credits: { initial: 1_000 } });
    }
    if (pooled !== undefined) return await pooled.spend();
    if (mode === "pool") {
      return await limiter.check(subject, [], { credits: [own, { ...pool, subject }] });
    }
    if (mode !== "credits") return await limiter.check(subject, policy);
    // A far timeout: a slow commit is waited for, never answered by the failure policy.
    return await limiter.check(subject, [], { credits: { initial: 1_000 } });
  }),
).then((all) => all.flat());
/** `pool`: what is left of this process's own balance. */
const ownLeft = mode === "pool"
  ? (await checkOnce(store, [{ kind: "credit", name: "credits", cost: 0, ...own }]))[0].remaining
  : await pooled?.ownLeft();
await close();
const answered = results.filter((r) => !r.unavailable);
console.log(JSON.stringify({
  allowed: results.filter((r) => r.allowed).length,
  unavailable: results.length - answered.length,
  timeouts: results.filter((r) => "reason" in r && r.reason === "timeout").length,
  client: loadClient(kind === "redis" ? "redis" : "pg", version).version,
  least: Math.min(...answered.map((r) => r.credits?.remaining ?? r.policies[0].remaining)),
  ownLeft,
  // `pool`: refusals by this process's own balance, and by the shared pool.
  refusedBy: [0, 1].map((i) =>
    answered.filter((r) => !r.allowed && "balances" in r && r.balances?.[i]?.allowed === false)
      .length
  ),
}));
