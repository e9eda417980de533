/**
 * Benchmark 10: the lookup budget of misses in a change feed's prefix set
 * (`unknownPrefixLookups`). A service over an asynchronous shared storage
 * (lookups counted) follows a feed whose prefix set is loaded; a flood of
 * verifies of unknown prefixes with valid checksums (what an attacker forging
 * prefixes sends) runs as fast as it can for a while. One row per budget:
 * verifies, lookups, lookups per verify, and the most the budget allows
 * (one second's worth at the start, then `perSecond`). Target: lookups at or
 * under the budget, `MISSED` otherwise (printed, never thrown).
 *
 * Run: `deno run -A bench/unknown_prefix.ts [--quick]` (or through `deno task bench`).
 *
 * @module
 */
import {
  API_KEY_STORAGE_METHODS,
  type ApiKeyChangeFeed,
  ApiKeysService,
  type ApiKeyStorage,
  generateKey,
  InMemoryApiKeyStorage,
} from "../api_keys/mod.ts";
import { fmt, printTable, QUICK, runtimeName, verdict } from "./lib/harness.ts";

const PEPPER = "bench-pepper-0123456789abcdefghijklmnopqrstuvwxyz";
const FLOOD_MS = QUICK ? 1_000 : 3_000;
const BUDGETS = [0, 10, 100];

/** The flood against one service with `perSecond`: verifies, lookups and elapsed ms. */
async function flood(perSecond: number) {
  const inner = new InMemoryApiKeyStorage();
  let lookups = 0;
  const storage = Object.fromEntries(API_KEY_STORAGE_METHODS.map((method) => [
    method,
    (...args: unknown[]) => {
      if (method === "findByPrefix") lookups++;
      return Promise.resolve((inner[method] as (...a: unknown[]) => unknown).apply(inner, args));
    },
  ])) as unknown as ApiKeyStorage;
  const feed: ApiKeyChangeFeed = {
    subscribe: () => () => {},
    status: () => ({
      healthy: true,
      stalenessMs: 0,
      unhealthyForMs: 0,
      counter: 0,
      resets: 0,
      reconnects: 0,
      error: null,
    }),
    snapshot: () => Promise.resolve({ counter: 0, prefixes: [] }),
    close: () => Promise.resolve(),
  };
  const info = console.info;
  console.info = () => {}; // the storage-capability line
  const service = new ApiKeysService({
    peppers: { 1: PEPPER },
    storage,
    feed,
    unknownPrefixLookups: { perSecond },
  });
  console.info = info;
  await service.verify(generateKey({ environment: "live" }).raw).catch(() => {}); // loads the set
  await new Promise((resolve) => setTimeout(resolve, 0));
  lookups = 0;
  let verifies = 0;
  const started = performance.now();
  while (performance.now() - started < FLOOD_MS) {
    await service.verify(generateKey({ environment: "live" }).raw).catch(() => {});
    verifies++;
  }
  return { verifies, lookups, ms: performance.now() - started };
}

const rows: string[][] = [];
for (const perSecond of BUDGETS) {
  const { verifies, lookups, ms } = await flood(perSecond);
  const allowed = Math.floor(perSecond + perSecond * ms / 1_000);
  rows.push([
    String(perSecond),
    String(verifies),
    fmt(ms / 1_000, 1),
    String(lookups),
    fmt(lookups / verifies, 4),
    String(allowed),
    verdict(lookups <= allowed),
  ]);
}
printTable(
  `unknown-prefix flood against the prefix set (${runtimeName()}): lookups stay within unknownPrefixLookups`,
  ["perSecond", "verifies", "s", "lookups", "lookups/verify", "budget", "target"],
  rows,
);
