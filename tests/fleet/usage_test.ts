/**
 * Usage per key across a fleet (issue 35): instances of `instance.ts` with
 * `FLEET_USAGE_FLUSH_MS` (the service option `usage`, the Prisma storage's
 * `usage` option through a client that logs each statement) on one
 * PostgreSQL, two Node processes on the npm build and one Deno process,
 * verifying the same 20 keys at full speed in process (plus a revoked key, a
 * wrong secret for a stored prefix, a missing scope and unknown prefixes)
 * while the test sends guarded requests over loopback HTTP.
 *
 * Statements: every write to `api_key_usage` is a flush (one statement per
 * flush, at most one row per key and hour, flushes at least an interval
 * apart), and nothing else writes while verifying. Totals: after SIGTERM
 * (the instance's `service.close()`), the stored counts equal, per code, what
 * each instance verified, over at least 100,000 verifications. `kill -9`
 * during a flush: while a fourth instance verifies, the test holds a row lock
 * on one of its usage rows, waits until its flush statement waits on it in
 * PostgreSQL (`pg_stat_activity`), has it print its tally and SIGKILL itself,
 * then releases the lock. What is stored is exactly its committed flushes,
 * plus the one in flight if it committed (once), each of which held every
 * verification before it; the loss is what it verified since the stored
 * write was taken, at most one `flushIntervalMs` plus the time the write was
 * in flight (computed and printed).
 *
 * `FLEET_USAGE_SECONDS` sets the run (default 30). Skips without
 * `DATABASE_URL`; fails instead under `CI=true`.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import pg from "pg";
import {
  API_KEY_USAGE_REFUSALS,
  ApiKeysService,
  generateKey,
  PrismaApiKeyStorage,
} from "../../api_keys/mod.ts";
import { createPrismaClient, databaseReady, probeDatabase } from "../postgres/prisma_client.ts";
import { createSigner } from "../api_keys/leaks/github_signer.ts";
import { FLEET_PEPPER } from "./fleet_pepper.ts";
import {
  admin,
  every,
  feedsInSync,
  guardedCode,
  type Instance,
  prepareNodeTree,
  printed,
  startInstance,
  terminate,
} from "./harness.ts";

const url = Deno.env.get("DATABASE_URL");
const SECONDS = Number(Deno.env.get("FLEET_USAGE_SECONDS") ?? 30);
const FLUSH_MS = 1_000;
/** Flushes of the fourth instance's drive committed before its next one is caught by the lock. */
const KILL_AFTER_FLUSHES = 2;
const GOOD_KEYS = 20;
/** Keys with counts: the good ones, the revoked one, the one whose prefix the wrong secret uses. */
const COUNTED_KEYS = GOOD_KEYS + 2;
const HOUR_MS = 3_600_000;
/** Verifications of the three instances at least (each drives past `SECONDS` until its third). */
const VERIFICATIONS = 100_000;

/** Sums per `api_key_usage` column (`accepted`, `cost`, `revoked`, …), zeros left out. */
type Counts = Record<string, number>;
/** Outcomes by `<kind>:<outcome>` (`good:accepted`, `wrong:api_key_invalid`, …). */
type Tally = Record<string, number>;

/** What each kind of request must end as; `unknown` prefixes are never counted. */
const WANTED: Record<string, string> = {
  good: "accepted",
  scope: "api_key_scope_insufficient",
  revoked: "api_key_revoked",
  wrong: "api_key_invalid",
  unknown: "api_key_invalid",
};

/** The stored counts `tally` must produce (fails on an outcome its kind must not have). */
function expected(tally: Tally): Counts {
  const counts: Counts = {};
  const add = (column: string, n: number) => counts[column] = (counts[column] ?? 0) + n;
  for (const [label, n] of Object.entries(tally)) {
    const [kind, outcome] = label.split(":");
    assert.equal(outcome, WANTED[kind], `${n} × ${label}`);
    if (kind === "unknown") continue;
    if (outcome === "accepted") {
      add("accepted", n);
      add("cost", n);
    } else add(outcome.slice("api_key_".length), n);
  }
  return counts;
}

function nonzero(counts: Counts): Counts {
  return Object.fromEntries(Object.entries(counts).filter(([, n]) => n !== 0).sort());
}

function plus(a: Tally, b: Tally): Tally {
  const sum = { ...a };
  for (const [label, n] of Object.entries(b)) sum[label] = (sum[label] ?? 0) + n;
  return sum;
}

/** Milliseconds between consecutive statements, rounded. */
const gapsOf = (sent: { at: number }[]) =>
  sent.slice(1).map((statement, n) => Math.round(statement.at - sent[n].at));

const total = (tally: Tally) => Object.values(tally).reduce((a, b) => a + b, 0);

async function probe(): Promise<string | undefined> {
  const problem = await probeDatabase(url);
  if (problem !== undefined) return problem;
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
    await client.query("SELECT 1 FROM api_key_usage LIMIT 1");
    await client.query("SELECT 1 FROM api_key_usage_batches LIMIT 1");
    await client.query("SELECT n FROM api_key_change_counter");
    return undefined;
  } catch {
    return "the usage and change-feed migrations (0010, 0013, 0002, 0005) are not applied";
  } finally {
    await client.end().catch(() => {});
  }
}

const unavailable = await probe();

/** The drive's keys of one tenant (raw) and their ids. */
interface Keys {
  tenantId: string;
  good: string[];
  revoked: string;
  wrong: string;
  ids: string[];
}

/** What an instance prints on SIGTERM, once its usage is flushed. */
interface Report {
  tally: Tally;
  written: Counts;
  statements: { at: number; rows: number; pairs: number; hours: number }[];
  queries: Record<string, number>;
}

if (databaseReady("usage across a fleet", unavailable)) {
  describe("usage across a fleet on one PostgreSQL: two Node instances (npm build), one Deno, flushIntervalMs 1,000", () => {
    const prisma = createPrismaClient(url!);
    const run = crypto.randomUUID().slice(0, 8);
    const instances: Instance[] = [];
    let victim: Instance | undefined;
    let tree: string | undefined;
    let service: ApiKeysService;
    let fleetKeys: Keys;
    /** Wall-clock ms before the first counted verification (the warm-up round in `before`). */
    let countedFrom = 0;
    let victimKeys: Keys;

    /**
     * 20 keys of `tenantId` (`orders:read`), a revoked one, and a wrong
     * secret for a stored prefix (a row holding another key's hash).
     */
    async function createKeys(tenantId: string, storage: PrismaApiKeyStorage): Promise<Keys> {
      const scopes = [{ resource: "orders", level: "read" as const }];
      const good = [];
      for (let i = 0; i < GOOD_KEYS; i++) {
        good.push(await service.create({ tenantId, name: `usage ${i}`, scopes }));
      }
      const revoked = await service.create({ tenantId, name: "revoked", scopes });
      await service.revoke(revoked.id);
      const impostor = generateKey({ environment: "live" });
      const stored = (await storage.findById(good[0].id))!;
      const wrongId = `impostor-${tenantId}`;
      await storage.insert({ ...stored, id: wrongId, prefix: impostor.prefix });
      return {
        tenantId,
        good: good.map((key) => key.key),
        revoked: revoked.key,
        wrong: impostor.raw,
        ids: [...good.map((key) => key.id), revoked.id, wrongId],
      };
    }

    /** The stored counts of `tenantId`, read with `service.usage`. */
    async function stored(tenantId: string): Promise<Counts> {
      const now = Date.now();
      const hours = await service.usage(tenantId, {
        from: new Date(now - 2 * HOUR_MS),
        to: new Date(now + HOUR_MS),
        granularity: "hour",
      });
      const counts: Counts = {};
      for (const hour of hours) {
        counts.accepted = (counts.accepted ?? 0) + hour.accepted;
        counts.cost = (counts.cost ?? 0) + hour.cost;
        for (const code of API_KEY_USAGE_REFUSALS) {
          const column = code.slice("api_key_".length);
          counts[column] = (counts[column] ?? 0) + hour.refused[code];
        }
      }
      return nonzero(counts);
    }

    before(async () => {
      const client = await prisma;
      const storage = new PrismaApiKeyStorage(client, { usage: client });
      service = new ApiKeysService({ peppers: { 1: FLEET_PEPPER }, storage });
      // Stored before the instances start: each loads them with its prefix set.
      fleetKeys = await createKeys(`usage-${run}`, storage);
      victimKeys = await createKeys(`usage-kill-${run}`, storage);
      const signer = await createSigner("usage-test-key");
      const env = {
        FLEET_SIGNER_ID: signer.keyIdentifier,
        FLEET_SIGNER_PEM: signer.pem,
        FLEET_USAGE_FLUSH_MS: String(FLUSH_MS),
      };
      tree = await prepareNodeTree();
      const node = join(tree, "tests", "fleet", "instance.js");
      const deno = [Deno.execPath(), ["run", "-A", "tests/fleet/instance.ts"]] as const;
      const started = await Promise.allSettled([
        startInstance("node-1", "node", [node], url!, env),
        startInstance("node-2", "node", [node], url!, env),
        startInstance("deno", deno[0], [...deno[1]], url!, env),
        startInstance("node-killed", "node", [node], url!, env),
      ]);
      for (const result of started) {
        if (result.status === "fulfilled") instances.push(result.value); // stopped by `after`
      }
      for (const result of started) if (result.status === "rejected") throw result.reason;
      victim = instances.pop();
      // Fresh feeds: the verification cache serves (without, every verify is a lookup).
      await feedsInSync([...instances, victim!]);
      // One round each, counted like the rest: Prisma's first queries take seconds under load.
      countedFrom = Date.now();
      await every([
        ...instances.map((instance) =>
          admin(instance, "usage/drive", "POST", { ...fleetKeys, ms: 0 })
        ),
        admin(victim!, "usage/drive", "POST", { ...victimKeys, ms: 0 }),
      ]);
    });

    after(async () => {
      for (const instance of [...instances, ...(victim ? [victim] : [])]) {
        try {
          instance.process.kill("SIGKILL");
        } catch { /* exited */ }
        await instance.process.status;
      }
      await (await prisma).$disconnect();
      if (tree !== undefined) await Deno.remove(tree, { recursive: true });
    });

    /**
     * Guarded requests to `instance` over HTTP, one at a time, until `done`
     * settles: the same kinds as the drive. Returns their outcomes.
     */
    async function http(instance: Instance, done: Promise<unknown>): Promise<Tally> {
      const tally: Tally = {};
      let finished = false;
      done.finally(() => finished = true).catch(() => {});
      const good = fleetKeys.good;
      for (let i = 0; !finished; i++) {
        const requests: [string, string, string?][] = [
          ["good", good[i % GOOD_KEYS]],
          ["scope", good[i % GOOD_KEYS], "orders/export"],
          ["revoked", fleetKeys.revoked],
          ["wrong", fleetKeys.wrong],
          ["unknown", generateKey({ environment: "live" }).raw],
        ];
        for (const [kind, key, path] of requests) {
          const { status, code } = await guardedCode(instance, key, path);
          const label = `${kind}:${status === 200 ? "accepted" : code}`;
          tally[label] = (tally[label] ?? 0) + 1;
        }
      }
      return tally;
    }

    it(`3 instances verifying 20 keys at full speed for ${SECONDS} s (${VERIFICATIONS} times at least): one statement per flush, at most one row per key and hour in it, no other write; after SIGTERM the stored counts equal each instance's verifications per code`, async () => {
      const startedWall = Date.now();
      const runs = await every(instances.map(async (instance) => {
        const drive = admin<{ verifications: number; queries: Record<string, number> }>(
          instance,
          "usage/drive",
          "POST",
          { ...fleetKeys, ms: SECONDS * 1_000, atLeast: Math.ceil(VERIFICATIONS / 3) },
          SECONDS * 1_000 + 90_000,
        );
        const [driven, sent] = await Promise.all([drive, http(instance, drive)]);
        return { ...driven, http: sent };
      }));
      const codes = await every(instances.map(terminate));
      assert.deepEqual(codes, instances.map(() => 0), "every instance exited cleanly");
      let verifications = 0;
      const sum: Counts = {};
      for (const [i, instance] of instances.entries()) {
        const { queries, http } = runs[i];
        const [report] = printed<Report>(instance, "USAGE_REPORT");
        assert.ok(report !== undefined, `${instance.name} reported on SIGTERM`);
        // Zero writes on the request path: from start to exit, only reads and the flushes.
        assert.deepEqual(
          Object.keys(nonzero(report.queries)).filter((kind) =>
            !["SELECT", "USAGE"].includes(kind)
          ),
          [],
          `${instance.name}: queries ${JSON.stringify(report.queries)}`,
        );
        const { statements } = report;
        assert.equal(report.queries.USAGE, statements.length, "every usage statement is a flush");
        const gaps = gapsOf(statements);
        // The timer flushes while verifying (under load the first queries take seconds).
        assert.ok(
          statements.length >= SECONDS / 2,
          `${instance.name}: ${statements.length} flushes in ${SECONDS} s, ${gaps} ms apart`,
        );
        for (const [n, statement] of statements.entries()) {
          assert.equal(statement.pairs, statement.rows, "one row per key and hour");
          assert.ok(statement.rows <= COUNTED_KEYS * statement.hours, `${statement.rows} rows`);
          // The timer's flushes are an interval apart at least (the last may be close()'s).
          if (n + 2 < statements.length) assert.ok(gaps[n] >= FLUSH_MS * 0.9, `${gaps} ms`);
        }
        const maxRows = Math.max(...statements.map((statement) => statement.rows));
        // Exact: what this instance stored is what it verified in process and over HTTP.
        assert.deepEqual(
          nonzero(report.written),
          nonzero(expected(plus(report.tally, http))),
          `${instance.name}: stored vs verified`,
        );
        for (const [column, n] of Object.entries(report.written)) {
          sum[column] = (sum[column] ?? 0) + n;
        }
        verifications += total(report.tally) + total(http);
        console.log(
          `# fleet usage: ${instance.name}: ${total(report.tally)} verifications in process, ${
            total(http)
          } over HTTP; ${statements.length} statements, at most ${maxRows} rows each; queries while verifying ${
            JSON.stringify(queries)
          }`,
        );
      }
      assert.ok(verifications >= VERIFICATIONS, `${verifications} verifications`);
      assert.deepEqual(await stored(fleetKeys.tenantId), nonzero(sum), "stored = Σ instances");
      const db = new pg.Client({ connectionString: url });
      await db.connect();
      try {
        const { rows } = await db.query(
          `SELECT k.id, count(u.key_id)::int AS hours, k.last_used_at FROM api_keys k
           LEFT JOIN api_key_usage u ON u.key_id = k.id WHERE k.tenant_id = $1
           GROUP BY k.id, k.last_used_at`,
          [fleetKeys.tenantId],
        );
        assert.equal(rows.length, COUNTED_KEYS);
        // Hours with counted verifications: from the warm-up round (a run may cross an hour there).
        const spanned = Math.floor(Date.now() / HOUR_MS) - Math.floor(countedFrom / HOUR_MS) + 1;
        for (const row of rows) {
          assert.ok(1 <= row.hours && row.hours <= spanned, `${row.id}: ${row.hours} rows`);
        }
        const good = rows.filter((row) => fleetKeys.ids.slice(0, GOOD_KEYS).includes(row.id));
        for (const row of good) {
          const at = (row.last_used_at as Date | null)?.getTime() ?? 0;
          assert.ok(startedWall <= at && at <= Date.now(), `${row.id}: lastUsedAt from a flush`);
        }
      } finally {
        await db.end();
      }
      console.log(`# fleet usage: ${verifications} verifications, stored ${JSON.stringify(sum)}`);
    });

    it("kill -9 during a flush (its statement waiting in PostgreSQL on a held row lock): stored = the committed flushes, the one in flight counted once if it commits; the loss is at most one flushIntervalMs plus the write in flight", async () => {
      const instance = victim!;
      const drive = admin(instance, "usage/drive", "POST", { ...victimKeys, ms: 60_000 }, 90_000)
        .then(
          () => assert.fail("the instance answered instead of dying"),
          (error) => assert.ok(!(error instanceof assert.AssertionError), String(error)),
        );
      const flushedBefore = printed(instance, "USAGE_FLUSHED").length;
      const db = new pg.Client({ connectionString: url });
      await db.connect();
      /** Statements of this database waiting on a lock, by their backends. */
      const waiting = async () =>
        (await db.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity
           WHERE datname = current_database() AND wait_event_type = 'Lock'`,
        )).rows[0].n as number;
      let status: Deno.CommandStatus;
      let killedWaiting: number;
      try {
        // Two flushes of this drive committed: the lock then catches the third mid-statement.
        const until = performance.now() + 30_000;
        while (printed(instance, "USAGE_FLUSHED").length < flushedBefore + KILL_AFTER_FLUSHES) {
          assert.ok(performance.now() < until, "the drive's flushes committed");
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        await db.query("BEGIN");
        await db.query(
          "SELECT 1 FROM api_key_usage WHERE key_id = $1 FOR UPDATE",
          [victimKeys.ids[0]],
        );
        const lockedAt = performance.now();
        while ((killedWaiting = await waiting()) === 0) {
          assert.ok(performance.now() - lockedAt < FLUSH_MS * 5, "a flush statement waits");
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        await admin(instance, "usage/kill", "POST", {}, 5_000).then(
          () => assert.fail("the instance answered instead of dying"),
          (error) => assert.ok(!(error instanceof assert.AssertionError), String(error)),
        );
        status = await instance.process.status;
        victim = undefined;
      } finally {
        await db.query("COMMIT").catch(() => {}); // the write in flight goes on, its client gone
        const until = performance.now() + 10_000;
        while (await waiting() > 0 && performance.now() < until) {
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        await db.end();
      }
      await drive;
      assert.equal(status.signal, "SIGKILL");
      await instance.outputEnd;
      const [killed] = printed<{ at: number; tally: Tally }>(instance, "USAGE_KILLED");
      const flushed = printed<{ at: number; tally: Tally; written: Counts }>(
        instance,
        "USAGE_FLUSHED",
      );
      const flushing = printed<{ at: number; tally: Tally; written: Counts }>(
        instance,
        "USAGE_FLUSHING",
      );
      assert.ok(killed !== undefined, "the instance printed its tally before SIGKILL");
      assert.ok(flushing.length > flushed.length, "a flush statement was in flight at the kill");
      // Each flush held every verification counted before it (one more may be in flight).
      for (const flush of flushing) {
        const floor = expected(flush.tally);
        for (const column of new Set([...Object.keys(floor), ...Object.keys(flush.written)])) {
          const extra = (flush.written[column] ?? 0) - (floor[column] ?? 0);
          assert.ok(0 <= extra && extra <= 1, `${column}: ${extra} beyond the tally`);
        }
      }
      const last = flushed.at(-1)!;
      const inFlight = flushing[flushed.length]; // the first statement that never answered
      // Stored: the committed flushes, and the one in flight if it committed (once: a retry of
      // it carries its batch id).
      const kept = await stored(victimKeys.tenantId);
      const committed = [last, inFlight].find((flush) =>
        JSON.stringify(nonzero(flush.written)) === JSON.stringify(kept)
      );
      assert.ok(
        committed !== undefined,
        `stored ${JSON.stringify(kept)}, flushed ${JSON.stringify(last.written)}, in flight ${
          JSON.stringify(inFlight.written)
        }`,
      );
      const done = expected(killed.tally);
      const since = expected(
        Object.fromEntries(
          Object.entries(killed.tally).map((
            [label, n],
          ) => [label, n - (committed.tally[label] ?? 0)]),
        ),
      );
      let lost = 0;
      for (const column of Object.keys(done)) {
        const missing = done[column] - (kept[column] ?? 0);
        assert.ok(missing >= 0, `${column}: stored more than verified`);
        assert.ok(
          missing <= (since[column] ?? 0) + 1,
          `${column}: lost ${missing}, verified since the stored flush was taken ${since[column]}`,
        );
        if (column !== "cost") lost += missing;
      }
      // The bound: what was verified since the last stored write was taken, at most one
      // interval before the write in flight was taken, plus the time that write was in flight.
      const gaps = gapsOf(flushing);
      const windowMs = killed.at - committed.at;
      const inFlightMs = killed.at - inFlight.at;
      const boundMs = FLUSH_MS + inFlightMs;
      assert.ok(gaps.every((gap) => gap >= FLUSH_MS * 0.9), `flushes ${gaps} ms apart`);
      assert.ok(
        windowMs <= boundMs + 250,
        `lost ${windowMs.toFixed(0)} ms of verifications; bound ${boundMs.toFixed(0)} ms`,
      );
      console.log(
        `# fleet usage: kill -9 during a flush (${killedWaiting} statement(s) waiting on the lock) after ${
          total(killed.tally)
        } verifications, flushes ${gaps} ms apart: the write in flight ${
          committed === inFlight ? "committed after the kill" : "never committed"
        }; lost ${lost} counts, the verifications of ${windowMs.toFixed(0)} ms = ${
          (windowMs / FLUSH_MS).toFixed(2)
        } flushIntervalMs (bound: one interval + ${inFlightMs.toFixed(0)} ms in flight = ${
          (boundMs / FLUSH_MS).toFixed(2)
        })`,
      );
    });
  });
}
