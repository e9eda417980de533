/**
 * Benchmark 5: the Fetch bindings' own per-request work, in process, on Deno.
 * A `./safe-response/fetch` route and a `./api-keys/fetch` protected handler
 * (warm verification cache) are called with a fresh `Request` each, against
 * the bare handler called the same way (`Response.json` of the same item), in
 * alternating rounds. The difference is set against the CPU cost of one
 * request to a bare `Deno.serve` server measured in the same run (a child
 * process under a fixed local load, CPU time per response). Targets: the
 * Nest ones (envelope ≤ 3 %, warm guard ≤ 5 % of a bare request).
 *
 * Run: `deno run -A bench/fetch.ts [--quick]`. Deno only (`Deno.serve`).
 *
 * @module
 */
import { createApiKeyAuthorizer } from "../api_keys/fetch/mod.ts";
import { createSafeFetch } from "../safe_response/fetch/mod.ts";
import { BENCH_PATH, ITEM } from "./http/apps.ts";
import { alternate, type Case, printTable, QUICK, runtimeName, TIMING } from "./lib/harness.ts";
import { bareCpuPerRequest, describeBare, guardServices, OwnCostTable } from "./lib/own_cost.ts";

const URL_OF_ITEM = `http://127.0.0.1${BENCH_PATH}`;
const INFO = { remoteAddr: { transport: "tcp", hostname: "127.0.0.1", port: 40000 } };

async function main() {
  const began = performance.now();
  const bare = await bareCpuPerRequest("deno-serve");

  const bareHandler = (_request: Request) => Response.json(ITEM);
  const defaults = createSafeFetch();
  const all = createSafeFetch({
    requestId: true,
    responseTime: true,
    rateLimit: true,
    version: "1",
    fieldSelection: true,
  });
  const envelope = defaults.route({}, () => ITEM);
  const envelopeAll = all.route({ responseMessage: "ok" }, (_request, context) => {
    context.headers.set("X-RateLimit-Limit", "1000000000");
    context.headers.set("X-RateLimit-Remaining", "999999999");
    context.headers.set("X-RateLimit-Reset", "60");
    return ITEM;
  });
  const plain = () => new Request(URL_OF_ITEM, { headers: { accept: "application/json" } });
  const envelopeCases: Case[] = [
    { name: "bare handler", op: () => bareHandler(plain()) },
    { name: "safe route, default options", op: () => envelope(plain()) },
    { name: "bare handler ", op: () => bareHandler(plain()) },
    { name: "safe route, all options on", op: () => envelopeAll(plain()) },
  ];

  const { warm, cold, key, requirements } = await guardServices();
  const warmGuard = createApiKeyAuthorizer(warm, requirements).protect(bareHandler);
  const coldGuard = createApiKeyAuthorizer(cold, requirements).protect(bareHandler);
  const keyed = () =>
    new Request(URL_OF_ITEM, { headers: { accept: "application/json", "x-api-key": key } });
  const awaitedBare = async (request: Request) => await bareHandler(request);
  const guardCases: Case[] = [
    { name: "bare handler (awaited)", op: () => awaitedBare(keyed()) },
    { name: "protect, warm cache", op: () => warmGuard(keyed(), INFO) },
    { name: "bare handler (awaited) ", op: () => awaitedBare(keyed()) },
    { name: "protect, cold (full verify)", op: () => coldGuard(keyed(), INFO) },
  ];

  const [te, tg] = [await alternate(envelopeCases), await alternate(guardCases)];
  const table = new OwnCostTable([bare]);
  table.add("envelope", envelopeCases, te, 1, 0, 3);
  table.add("envelope", envelopeCases, te, 3, 2, 10);
  table.add("guard", guardCases, tg, 1, 0, 5);
  table.add("guard", guardCases, tg, 3, 2);

  printTable(
    `Benchmark 5 — Fetch bindings, in-process cost per request on ${runtimeName()}: medians of ` +
      `${TIMING.rounds} alternating rounds` + (QUICK ? " (quick)" : ""),
    ["part", "case", "µs", "floor", "floor µs", "own µs", "% bare Deno.serve", "target", ""],
    table.rows,
  );
  console.log(
    `\nbare Deno.serve request CPU (server process, 16 connections): ${describeBare(bare)}`,
  );
  console.log(
    "own µs = case - floor; every case builds a fresh Request; the floors answer Response.json(ITEM).",
  );
  console.log(
    table.missed.length === 0
      ? "all Fetch targets met"
      : `targets missed: ${table.missed.join("; ")}`,
  );
  console.log(`benchmark 5 took ${((performance.now() - began) / 1000).toFixed(0)} s`);
}

await main();
