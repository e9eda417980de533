/**
 * Benchmark 8: the public revocation handler (`createPublicRevocationHandler`)
 * for an existing key, an unknown key and a malformed report, over an
 * in-memory storage, in rounds that alternate the cases. Two rows, each with
 * the µs per report of every case and the ratio of the slowest case to the
 * fastest (each set against the unknown key timed next to it):
 *
 * - answer: the `202`s alone, timed in chunks of 50 reports interleaved case
 *   by case (the queue's work waits for a later task);
 * - answer + verification: 1,000 reports of a case until `drain()` resolves
 *   (the one timer of a drain is shared by the 1,000: 1-2 µs each).
 *
 * Every report of a batch names another key, as a reporter probing many leaked
 * keys would send: the handler queues a key once (a report of a key already
 * waiting is counted as deduplicated and verified with it). "Existing" keys
 * are genuine keys reported again after their first report revoked them;
 * "malformed" reports are texts of a key's length that are no key: the handler
 * verifies its one stand-in key in their place, so a batch of them shares one
 * verification (shown, not judged: that a text is no key of the service is no
 * secret). Target: ratio of existing to unknown ≤ 1.10 on both rows, what a
 * reporter must not learn (whether a key exists). The two run the same code
 * (one prefix lookup, one HMAC, the same awaits; the answer is built before
 * any of it); 10 % sits above the run-to-run noise of these medians on a
 * loaded machine and well below what a skipped lookup or HMAC would show (a
 * path 2× faster or more). A last row prints the first report of an active
 * key, which also revokes it (a storage write and two events, after the
 * answer): judged by nothing, since revoking is the report's point.
 *
 * Run: `deno run -A bench/leaks.ts [--quick]` (or through `deno task bench`).
 *
 * @module
 */
import {
  ApiKeysService,
  createPublicRevocationHandler,
  generateKey,
  InMemoryApiKeyStorage,
  type LeakReportRequest,
} from "../api_keys/mod.ts";
import { fmt, median, printTable, QUICK, runtimeName, verdict } from "./lib/harness.ts";

const PEPPER = "bench-pepper-0123456789abcdefghijklmnopqrstuvwxyz";
const ROUNDS = QUICK ? 9 : 21;
const BATCH = 1_000;
/** Reports per timed chunk of the answer row. */
const CHUNK = 50;
const TARGET = 1.1;
/** The cases a ratio is taken over: what a reporter must not tell apart. */
const JUDGED = ["existing", "unknown"];

const service = new ApiKeysService({
  peppers: { 1: PEPPER },
  storage: new InMemoryApiKeyStorage(),
});
const report = createPublicRevocationHandler({ service, maxQueued: 3 * BATCH });
const request = (body: string): LeakReportRequest => ({ body, headers: () => undefined });
const scopes = [{ resource: "orders", level: "read" as const }];

/** `BATCH` keys of the service (tenant `t1`), made concurrently. */
const createKeys = (name: string) =>
  Promise.all(
    Array.from(
      { length: BATCH },
      async () => (await service.create({ tenantId: "t1", name, scopes })).key,
    ),
  );
const revoked = await createKeys("leaked");
for (const key of revoked) await report(request(key));
await report.drain(); // revoked: every later report of them is a replay
/** The `i`th report of each case (a batch's reports are its first `BATCH`). */
const inputs: Record<string, (i: number) => LeakReportRequest> = {
  existing: (i) => request(revoked[i]),
  unknown: () => request(generateKey({ environment: "live" }).raw),
  malformed: (i) => request(String(i).padStart(revoked[0].length, "x")),
};
/** Reports of each case, built before timing (an unknown key is a fresh one each time). */
const batches: Record<string, LeakReportRequest[]> = {};
for (const [name, make] of Object.entries(inputs)) {
  batches[name] = Array.from({ length: BATCH }, (_, i) => make(i));
}

/** µs per report of answering `requests` and verifying them (until `drain()` resolves). */
async function timeBatch(requests: LeakReportRequest[]): Promise<number> {
  const start = performance.now();
  for (const input of requests) await report(input);
  await report.drain();
  return ((performance.now() - start) * 1000) / requests.length;
}

/**
 * Times the answers alone in chunks of `CHUNK` reports, the cases interleaved
 * chunk by chunk (µs per answer pushed to `answers`); the queue is drained
 * after the last chunk, untimed (its work waits for a later task).
 */
async function timeAnswers(order: string[], record: boolean): Promise<void> {
  for (let offset = 0; offset < BATCH; offset += CHUNK) {
    for (const name of order) {
      const chunk = batches[name].slice(offset, offset + CHUNK);
      const start = performance.now();
      for (const input of chunk) await report(input);
      if (record) answers[name].push(((performance.now() - start) * 1000) / CHUNK);
    }
  }
  await report.drain();
}

const names = Object.keys(inputs);
const answers: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
const full: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
const active: number[] = [];
for (let round = -1; round < ROUNDS; round++) { // round -1 warms up
  const fresh = (await createKeys("active")).map(request);
  // rotate the order each round, so drift of the machine spreads over every case
  const order = names.map((_, i) => names[(i + round + 1) % names.length]);
  await timeAnswers(order, round >= 0);
  for (const name of order) {
    const us = await timeBatch(batches[name]);
    if (round >= 0) full[name].push(us);
  }
  const first = await timeBatch(fresh);
  if (round >= 0) active.push(first);
}

/**
 * The median over rounds of `values[name][r] / values.unknown[r]`: each case
 * set against the unknown key timed in the same round, so slow drift of the
 * machine cancels out.
 */
function ratioToUnknown(values: Record<string, number[]>, name: string): number {
  return median(values[name].map((us, r) => us / values.unknown[r]));
}

const rows: string[][] = [];
for (
  const [label, values] of [["answer (202)", answers], ["answer + verification", full]] as const
) {
  const ratios = JUDGED.map((name) => ratioToUnknown(values, name));
  const ratio = Math.max(...ratios) / Math.min(...ratios);
  rows.push([
    label,
    ...names.map((name) =>
      `${fmt(median(values[name]))} (${fmt(ratioToUnknown(values, name), 3)})`
    ),
    `${fmt(ratio, 3)}x`,
    `≤ ${fmt(TARGET)}x`,
    verdict(ratio <= TARGET),
  ]);
}
rows.push([
  "first report of an active key (+ revoke)",
  `${fmt(median(active))} (${fmt(median(active.map((us, r) => us / full.unknown[r])), 3)})`,
  "",
  "",
  "",
  "none",
  "",
]);
printTable(
  `Benchmark 8 — public revocation handler on ${runtimeName()}: µs per report, medians of ` +
    `${ROUNDS} alternating rounds of ${BATCH} reports per case (in parentheses: median per-round ratio to ` +
    "unknown; the ratio column is the slower of existing and unknown over the faster)",
  ["row", "existing", "unknown", "malformed", "ratio", "target", ""],
  rows,
);
