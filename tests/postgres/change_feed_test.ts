/**
 * `createPostgresFeed` on a real PostgreSQL with the migration
 * `0002_api_key_change_feed`: notices for writes made through the real Prisma
 * Client and through raw SQL, none for `last_used_at`-only updates, commit
 * order, no deadlock between a rotation and a revocation, reconnection after
 * `pg_terminate_backend`, the poll catching what no notice announced, and
 * health while the database is unreachable (through a TCP proxy this test
 * cuts). Forged notices from a role that may only connect change nothing,
 * and a feed whose notices never arrive (a proxy drops them, as a pooler in
 * transaction mode does) says so and keeps its bound by polling. In a schema of
 * their own: a counter restored below the last change delivered resets, a
 * trigger enabled for replicas only keeps the feed unhealthy, and one disabled
 * on a running feed makes it unhealthy at its next read. Skips without
 * `DATABASE_URL`; fails instead under `CI=true`.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import pg from "pg";
import {
  type ApiKeyChangeNotice,
  ApiKeysService,
  parseKey,
  PrismaApiKeyStorage,
} from "../../api_keys/mod.ts";
import {
  createPostgresFeed,
  type PostgresApiKeyChangeFeed,
  type PostgresFeedOptions,
} from "../../api_keys/postgres/mod.ts";
import {
  createPrismaClient,
  databaseReady,
  probeDatabase,
  type TestPrismaClient,
} from "./prisma_client.ts";
import { closedPort, TcpProxy } from "./tcp_proxy.ts";

const url = Deno.env.get("DATABASE_URL");
const POLL_MS = 50;
/** The feed's deadline of `end()` (its `TIMEOUT_MS`). */
const END_DEADLINE_MS = 5_000;
const PEPPERS = { 1: "change-feed-suite-pepper-0123456789abcdef" };

/** Why the feed suite cannot run, or undefined. */
async function probeFeed(): Promise<string | undefined> {
  const problem = await probeDatabase(url);
  if (problem !== undefined) return problem;
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
    await client.query("SELECT n FROM api_key_change_counter");
    return undefined;
  } catch {
    return "the change-feed migration (0002_api_key_change_feed) is not applied";
  } finally {
    await client.end().catch(() => {});
  }
}

const unavailable = await probeFeed();

/** The role scripts/start_postgres.sh creates with no privilege but CONNECT. */
function outsiderUrl(): string {
  const outsider = new URL(url!);
  outsider.username = `${outsider.username}_outsider`;
  outsider.password = "outsider";
  return outsider.href;
}

async function waitFor(
  predicate: () => boolean,
  what: string | (() => string),
  timeoutMs = 5_000,
): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!predicate()) {
    if (performance.now() > deadline) {
      assert.fail(`timed out waiting for ${typeof what === "string" ? what : what()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Row values of a key inserted with raw SQL. */
function rowValues(id: string, prefix: string): unknown[] {
  return [id, "t-raw", "raw", "live", prefix, "hash", 1, ["orders:read"]];
}
const INSERT_SQL = "INSERT INTO api_keys (id, tenant_id, name, environment, prefix, hash," +
  " pepper_version, scopes) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)";

if (databaseReady("change feed on PostgreSQL", unavailable)) {
  const pool = new pg.Pool({ connectionString: url, max: 6 });
  let prisma: TestPrismaClient;
  const feeds: PostgresApiKeyChangeFeed[] = [];
  let appNames = 0;

  const counter = async () =>
    Number((await pool.query("SELECT n::text AS n FROM api_key_change_counter")).rows[0].n);

  /** A feed on the database (its own `application_name`), synced, its first reset dropped. */
  const startFeed = async (
    overrides: Partial<PostgresFeedOptions> = {},
    wrap = (client: pg.Client) => client,
  ) => {
    const applicationName = `change-feed-test-${++appNames}`;
    const notices: ApiKeyChangeNotice[] = [];
    const feed = createPostgresFeed({
      client: () =>
        wrap(new pg.Client({ connectionString: url, application_name: applicationName })),
      pollMs: POLL_MS,
      ...overrides,
    });
    feeds.push(feed);
    feed.subscribe((notice) => {
      notices.push(notice);
    });
    await waitFor(() => feed.status().healthy, "the first sync");
    notices.length = 0;
    const backendPid = async () =>
      (await pool.query(
        "SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()",
        [applicationName],
      )).rows.map((row) => row.pid as number);
    return { feed, notices, backendPid };
  };

  const service = () =>
    new ApiKeysService({
      peppers: PEPPERS,
      storage: new PrismaApiKeyStorage(prisma),
      cache: false,
      debounceMs: 0,
      ttlPolicy: { allowNeverExpires: true },
    });
  const prefixOf = (key: string) => parseKey(key)!.prefix;

  before(async () => {
    prisma = await createPrismaClient(url!);
    await pool.query("TRUNCATE api_keys");
  });

  after(async () => {
    await Promise.all(feeds.map((feed) => feed.close()));
    await pool.query("TRUNCATE api_keys");
    await pool.end();
    await prisma.$disconnect();
  });

  describe("change feed on PostgreSQL: notices", () => {
    it("create, revoke and rotate through the real Prisma Client each notify, in counter order", async () => {
      const { notices, feed } = await startFeed();
      const keys = service();
      const start = await counter();
      const created = await keys.create({
        tenantId: "t-prisma",
        name: "first",
        scopes: [{ resource: "orders", level: "read" }],
      });
      await keys.revoke(created.id);
      const second = await keys.create({
        tenantId: "t-prisma",
        name: "second",
        scopes: [{ resource: "orders", level: "read" }],
      });
      const rotated = await keys.rotate(second.id, { gracePeriodMs: 0 });
      await waitFor(() => notices.length >= 5, "five notices");
      assert.deepEqual(notices, [
        { kind: "created", prefix: prefixOf(created.key), counter: start + 1 },
        { kind: "revoked", prefix: prefixOf(created.key), counter: start + 2 },
        { kind: "created", prefix: prefixOf(second.key), counter: start + 3 },
        { kind: "created", prefix: prefixOf(rotated.key), counter: start + 4 },
        { kind: "rotated", prefix: prefixOf(second.key), counter: start + 5 },
      ]);
      assert.equal(feed.status().counter, start + 5);
    });

    it("a verify's last_used_at write (Prisma) and a raw last_used_at update notify nothing", async () => {
      const { notices } = await startFeed();
      const keys = service();
      const { id, key } = await keys.create({
        tenantId: "t-used",
        name: "used",
        scopes: [{ resource: "orders", level: "read" }],
      });
      await waitFor(() => notices.length === 1, "the create notice");
      const start = await counter();
      for (let i = 0; i < 3; i++) await keys.verify(key);
      await sleep(200); // the lastUsedAt writes are not awaited by verify
      await pool.query("UPDATE api_keys SET last_used_at = now() WHERE id = $1", [id]);
      const touched = await pool.query("SELECT last_used_at FROM api_keys WHERE id = $1", [id]);
      assert.notEqual(touched.rows[0].last_used_at, null, "the writes happened");
      await sleep(POLL_MS * 4);
      assert.equal(await counter(), start);
      assert.equal(notices.length, 1);
      await pool.query("UPDATE api_keys SET last_used_at = now(), name = 'renamed' WHERE id = $1", [
        id,
      ]);
      await waitFor(() => notices.length === 2, "the update notice");
      assert.deepEqual(notices[1], { kind: "updated", prefix: prefixOf(key), counter: start + 1 });
    });

    it("raw SQL: insert, update, prefix change, delete, truncate; a rollback notifies nothing", async () => {
      const { notices } = await startFeed();
      const start = await counter();
      await pool.query(INSERT_SQL, rowValues("raw-1", "RawPrefix001"));
      await pool.query("UPDATE api_keys SET scopes = '{orders:write}' WHERE id = 'raw-1'");
      await pool.query("UPDATE api_keys SET expires_at = now() WHERE id = 'raw-1'");
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        await client.query("UPDATE api_keys SET revoked_at = now() WHERE id = 'raw-1'");
        await client.query("ROLLBACK");
      } finally {
        client.release();
      }
      await pool.query("UPDATE api_keys SET prefix = 'RawPrefix002' WHERE id = 'raw-1'");
      await pool.query("UPDATE api_keys SET revoked_at = now() WHERE id = 'raw-1'");
      await pool.query("DELETE FROM api_keys WHERE id = 'raw-1'");
      await pool.query("TRUNCATE api_keys");
      await waitFor(() => notices.length >= 8, "eight notices");
      assert.deepEqual(notices, [
        { kind: "created", prefix: "RawPrefix001", counter: start + 1 },
        { kind: "updated", prefix: "RawPrefix001", counter: start + 2 },
        { kind: "updated", prefix: "RawPrefix001", counter: start + 3 },
        { kind: "deleted", prefix: "RawPrefix001", counter: start + 4 },
        { kind: "created", prefix: "RawPrefix002", counter: start + 5 },
        { kind: "revoked", prefix: "RawPrefix002", counter: start + 6 },
        { kind: "deleted", prefix: "RawPrefix002", counter: start + 7 },
        { kind: "reset", prefix: null, counter: start + 8, reason: "truncated" },
      ]);
    });

    it("concurrent writers: one notice per commit, counters consecutive and in order", async () => {
      const { notices, feed } = await startFeed();
      const start = await counter();
      await Promise.all(
        Array.from(
          { length: 30 },
          (_, i) =>
            pool.query(
              INSERT_SQL,
              rowValues(`conc-${i}`, `Concurrent${String(i).padStart(2, "0")}`),
            ),
        ),
      );
      await waitFor(() => notices.length === 30, "thirty notices");
      assert.deepEqual(
        notices.map((notice) => notice.counter),
        Array.from({ length: 30 }, (_, i) => start + 1 + i),
      );
      assert.ok(notices.every((notice) => notice.kind === "created"));
      await sleep(POLL_MS * 3);
      assert.equal(feed.status().resets, 1, "only the first sync's reset");
    });

    it("a rotation (insert, then update) and a concurrent revoke of the same key do not deadlock", async () => {
      const { notices } = await startFeed();
      await pool.query(INSERT_SQL, rowValues("old-key", "OldKeyPrefix"));
      await waitFor(() => notices.length === 1, "the insert notice");
      const rotation = await pool.connect();
      try {
        await rotation.query("BEGIN");
        await rotation.query(INSERT_SQL, rowValues("new-key", "NewKeyPrefix"));
        // With immediate triggers the rotation would now hold the counter lock and
        // this revoke would wait for it while holding the old row: a deadlock.
        const revoked = pool.query("UPDATE api_keys SET revoked_at = now() WHERE id = 'old-key'");
        const outcome = await Promise.race([revoked.then(() => "done"), sleep(2_000)]);
        assert.equal(outcome, "done", "the revoke does not wait for the open rotation");
        await rotation.query(
          "UPDATE api_keys SET rotated_at = now(), replaced_by_key_id = 'new-key' WHERE id = 'old-key'",
        );
        await rotation.query("COMMIT");
      } finally {
        rotation.release();
      }
      await waitFor(() => notices.length === 4, "three more notices");
      assert.deepEqual(notices.slice(1).map((notice) => [notice.kind, notice.prefix]), [
        ["revoked", "OldKeyPrefix"],
        ["created", "NewKeyPrefix"],
        ["rotated", "OldKeyPrefix"],
      ]);
    });

    it("snapshot lists every prefix as of the counter it returns", async () => {
      const { feed } = await startFeed();
      await pool.query("TRUNCATE api_keys");
      await pool.query(INSERT_SQL, rowValues("snap-1", "SnapPrefix01"));
      await pool.query(INSERT_SQL, rowValues("snap-2", "SnapPrefix02"));
      const snapshot = await feed.snapshot();
      assert.deepEqual([...snapshot.prefixes].sort(), ["SnapPrefix01", "SnapPrefix02"]);
      assert.equal(snapshot.counter, await counter());
    });
  });

  describe("change feed on PostgreSQL: forged notices", () => {
    it("a role that may only connect: no numbering, kind or flood changes a verify, the prefix set or status()", async () => {
      const forger = new pg.Client({ connectionString: outsiderUrl() });
      await forger.connect().catch((error) =>
        assert.fail(`run scripts/start_postgres.sh (it creates the outsider role): ${error}`)
      );
      try {
        let reads = 0;
        const { feed, notices } = await startFeed({}, (client) => {
          const query = client.query.bind(client) as (...args: unknown[]) => unknown;
          return Object.assign(client, {
            query: (...args: unknown[]) => {
              if (String(args[0]).includes("api_key_change_log")) reads++;
              return query(...args);
            },
          });
        });
        const keys = new ApiKeysService({
          peppers: PEPPERS,
          storage: new PrismaApiKeyStorage(prisma),
          feed,
          debounceMs: 0,
          ttlPolicy: { allowNeverExpires: true },
          unknownPrefixLookups: { perSecond: 0 }, // the set alone decides an unknown prefix
        });
        const { id, key } = await keys.create({
          tenantId: "t-forged",
          name: "victim",
          scopes: [{ resource: "orders", level: "read" }],
        });
        const prefix = prefixOf(key);
        await waitFor(() => notices.length === 1, "the create notice");
        assert.ok(await keys.verify(key)); // cached, the prefix set loaded
        await sleep(POLL_MS * 2);
        const before = feed.status();
        notices.length = 0;

        await assert.rejects(forger.query("SELECT 1 FROM api_keys"), /permission denied/);
        await assert.rejects(
          forger.query("SELECT api_key_change_emit('api_key_changes', 'deleted', $1)", [prefix]),
          /permission denied/,
        );
        const readsBefore = reads;
        const n = await counter();
        const flooded = performance.now();
        await forger.query(
          "SELECT pg_notify('api_key_changes', json_build_object('n', g, 'kind', 'deleted'," +
            " 'prefix', $1::text)::text) FROM generate_series($2::bigint, $2::bigint + 4999) g",
          [prefix, n + 1],
        );
        for (const kind of ["created", "updated", "revoked", "rotated", "deleted", "truncated"]) {
          for (const number of [n, n + 1, n + 2, 1, 2 ** 53 - 1]) {
            const payload = JSON.stringify({
              n: number,
              kind,
              prefix: kind === "truncated" ? null : prefix,
            });
            await forger.query("SELECT pg_notify('api_key_changes', $1)", [payload]);
          }
        }
        await forger.query("SELECT pg_notify('api_key_changes', $1)", [String(n + 1)]);
        await forger.query("SELECT pg_notify('api_key_changes', 'probe:forged')");
        await sleep(POLL_MS * 4);
        const elapsed = performance.now() - flooded;

        assert.equal(notices.length, 0, `nothing delivered: ${JSON.stringify(notices)}`);
        const after = feed.status();
        assert.equal(after.counter, await counter(), "the feed's counter is the database's");
        assert.equal(after.resets, before.resets, "no reset");
        assert.equal(after.healthy, true);
        assert.ok(after.stalenessMs < POLL_MS + 500, `staleness ${after.stalenessMs}`);
        assert.equal(after.noticesArrive, true);
        const readsDuring = reads - readsBefore;
        const bound = 2 * (Math.ceil(elapsed / POLL_MS) + 1) + 32;
        assert.ok(readsDuring <= bound, `${readsDuring} reads in ${elapsed.toFixed(0)} ms`);
        assert.ok(await keys.verify(key), "the victim's key is still accepted");
        const stranger = await service().create({
          tenantId: "t-forged",
          name: "made elsewhere",
          scopes: [{ resource: "orders", level: "read" }],
        });
        await waitFor(
          () => notices.some((notice) => notice.kind === "created"),
          "a real created change",
          2_000,
        );
        assert.ok(await keys.verify(stranger.key), "a key made elsewhere is in the set");

        const revokedAt = performance.now();
        await service().revoke(id);
        await waitFor(
          () => notices.some((notice) => notice.kind === "revoked" && notice.prefix === prefix),
          "the real revoke",
          2_000,
        );
        assert.equal((await keys.verify(key).catch((error) => error)).code, "api_key_revoked");
        assert.ok(performance.now() - revokedAt < 2_000);
        assert.equal(feed.status().counter, await counter());
      } finally {
        await forger.end();
      }
    });
  });

  describe("change feed on PostgreSQL: notices that never arrive (a pooler in transaction mode)", () => {
    it("says so at start (a warning and status().noticesArrive false) and keeps its bound by polling", async () => {
      const target = new URL(url!);
      const proxy = new TcpProxy(target.hostname, Number(target.port || 5432), {
        dropNotifications: true,
      });
      const proxied = new URL(url!);
      proxied.port = String(proxy.start());
      const warn = console.warn;
      const warnings: string[] = [];
      console.warn = (...args: unknown[]) => warnings.push(args.join(" "));
      try {
        const direct = await startFeed();
        const { feed, notices } = await startFeed({
          connectionString: proxied.href,
          client: undefined,
        });
        await waitFor(() => feed.status().noticesArrive === false, "the probe's verdict", 3_000);
        await waitFor(() => direct.feed.status().noticesArrive === true, "the direct feed's");
        const lines = warnings.filter((line) => line.includes("change feed"));
        assert.equal(lines.length, 1, warnings.join("\n"));
        assert.match(lines[0], /no notice.*pollMs/);
        assert.doesNotMatch(lines[0], /api_kit:api_kit|outsider/);
        assert.equal(feed.status().healthy, true);

        const started = performance.now();
        await pool.query(INSERT_SQL, rowValues("no-notice", "NoNoticePref"));
        await waitFor(() => notices.length > 0, "the poll", POLL_MS + 500);
        assert.deepEqual(notices, [
          { kind: "created", prefix: "NoNoticePref", counter: await counter() },
        ]);
        assert.ok(performance.now() - started < POLL_MS + 500);
      } finally {
        console.warn = warn;
        proxy.stop();
      }
    });
  });

  describe("change feed on PostgreSQL: failures", () => {
    it("a counter advance that no notice announced is caught by the poll", async () => {
      const { notices } = await startFeed();
      const started = performance.now();
      const { rows } = await pool.query(
        "UPDATE api_key_change_counter SET n = n + 1 RETURNING n::text AS n",
      );
      await waitFor(() => notices.length > 0, "the poll's reset");
      const elapsed = performance.now() - started;
      assert.deepEqual(notices, [
        { kind: "reset", prefix: null, counter: Number(rows[0].n), reason: "missed" },
      ]);
      assert.ok(elapsed < POLL_MS + 50 + 500, `caught after ${elapsed.toFixed(0)} ms`);
    });

    it("pg_terminate_backend on the LISTEN connection: reconnects; changes made meanwhile reset", async () => {
      const gate = { opened: Promise.resolve(), open: () => {} };
      const { feed, notices, backendPid } = await startFeed({}, (client) => {
        const connect = client.connect.bind(client);
        return Object.assign(client, {
          connect: async () => {
            await gate.opened;
            return connect();
          },
        });
      });
      const keys = service();
      const { id } = await keys.create({
        tenantId: "t-kill",
        name: "kill",
        scopes: [{ resource: "orders", level: "read" }],
      });
      await waitFor(() => notices.length === 1, "the create notice");
      gate.opened = new Promise((resolve) => gate.open = resolve);
      const pids = await backendPid();
      assert.equal(pids.length, 1);
      await pool.query("SELECT pg_terminate_backend($1)", [pids[0]]);
      await waitFor(() => !feed.status().healthy, "the feed to notice the loss");
      assert.match(feed.status().error ?? "", /57P01|connection closed/);
      await keys.revoke(id); // while the feed is away: no notice can reach it
      gate.open();
      await waitFor(() => feed.status().healthy, "the reconnection");
      assert.deepEqual(notices.slice(1), [
        { kind: "reset", prefix: null, counter: await counter(), reason: "missed" },
      ]);
      assert.equal(feed.status().reconnects, 1);
    });

    it("after pg_terminate_backend, every revoke still reaches the feed within 2 s", async () => {
      const { feed, notices, backendPid } = await startFeed();
      const keys = service();
      for (let round = 0; round < 5; round++) {
        const { id, key } = await keys.create({
          tenantId: "t-kill-loop",
          name: `round ${round}`,
          scopes: [{ resource: "orders", level: "read" }],
        });
        const [pid] = await backendPid();
        await pool.query("SELECT pg_terminate_backend($1)", [pid]);
        const from = notices.length;
        const started = performance.now();
        await keys.revoke(id);
        await waitFor(
          () =>
            notices.slice(from).some((notice) =>
              notice.kind === "reset" ||
              (notice.kind === "revoked" && notice.prefix === prefixOf(key))
            ),
          "the revoke or a reset",
          2_000,
        );
        assert.ok(performance.now() - started < 2_000);
        await waitFor(() => feed.status().healthy, "the reconnection");
      }
      assert.equal(feed.status().reconnects, 5);
    });

    it("unreachable database: unhealthy at once, staleness grows; back in sync after, with a reset", async () => {
      const target = new URL(url!);
      const proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
      const port = proxy.start();
      const proxied = new URL(url!);
      proxied.port = String(port);
      try {
        const { feed, notices } = await startFeed({
          connectionString: proxied.href,
          client: undefined,
        });
        assert.ok(feed.status().stalenessMs < POLL_MS + 500);
        proxy.stop();
        await waitFor(() => !feed.status().healthy, "unhealthy");
        await sleep(300);
        const down = feed.status();
        assert.equal(down.healthy, false);
        assert.ok(down.unhealthyForMs >= 250, `unhealthy for ${down.unhealthyForMs}`);
        assert.ok(down.stalenessMs >= 300, `staleness ${down.stalenessMs}`);
        assert.match(down.error ?? "", /failed|closed/);
        assert.doesNotMatch(down.error ?? "", /api_kit:api_kit/);
        await pool.query(INSERT_SQL, rowValues("during-outage", "OutagePrefix"));
        proxy.start(port);
        await waitFor(() => feed.status().healthy, "back in sync", 10_000);
        assert.deepEqual(notices, [
          { kind: "reset", prefix: null, counter: await counter(), reason: "missed" },
        ]);
      } finally {
        proxy.stop();
      }
    });

    it("a database that never answers: never healthy, staleness Infinity, the error named", async () => {
      const target = new URL(url!);
      target.port = String(closedPort());
      const feed = createPostgresFeed({ connectionString: target.href, pollMs: POLL_MS });
      feeds.push(feed);
      await waitFor(() => feed.status().error !== "connecting", "the first attempt");
      await sleep(200);
      const status = feed.status();
      assert.equal(status.healthy, false);
      assert.equal(status.stalenessMs, Infinity);
      assert.match(status.error ?? "", /connect failed \(ECONNREFUSED\)/);
      await feed.close();
    });

    it("close() while the connect hangs (a peer that accepts and never answers) resolves at once, from a connectionString and from a client factory", async () => {
      const hole = Deno.listen({ hostname: "127.0.0.1", port: 0 });
      const accepted: Deno.Conn[] = [];
      const accepting = (async () => {
        for await (const conn of hole) accepted.push(conn);
      })().catch(() => {});
      const target = new URL(url!);
      target.hostname = "127.0.0.1";
      target.port = String((hole.addr as Deno.NetAddr).port);
      try {
        for (
          const options of [
            { connectionString: target.href },
            { client: () => new pg.Client({ connectionString: target.href }) },
          ]
        ) {
          const feed = createPostgresFeed({ ...options, pollMs: POLL_MS });
          feeds.push(feed);
          await waitFor(() => accepted.length > 0, "the connection accepted");
          await sleep(200);
          assert.equal(feed.status().error, "connecting");
          const started = performance.now();
          await feed.close();
          const took = performance.now() - started;
          assert.ok(took < 1_000, `close() took ${took.toFixed(0)} ms`);
          accepted.length = 0;
        }
      } finally {
        hole.close();
        await accepting;
        for (const conn of accepted) {
          try {
            conn.close();
          } catch {
            // closed by the feed
          }
        }
      }
    });

    it("close() on a connected, idle feed whose peer went silent (a stalled proxy) destroys its socket within the end deadline", async () => {
      const target = new URL(url!);
      const proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
      const proxied = new URL(url!);
      proxied.port = String(proxy.start());
      const clients: pg.Client[] = [];
      try {
        // A long pollMs keeps the client idle, so its end() sends Terminate and waits for the peer.
        const { feed } = await startFeed({
          pollMs: 60_000,
          client: () => {
            const client = new pg.Client({ connectionString: proxied.href });
            clients.push(client);
            return client;
          },
        });
        await waitFor(() => feed.status().noticesArrive !== null, "the probe's verdict");
        await sleep(300); // the read and prune the probe's notice woke
        assert.equal(clients.length, 1);
        const { stream } =
          (clients[0] as unknown as { connection: { stream: { destroyed: boolean } } })
            .connection;
        proxy.stall();
        const started = performance.now();
        await feed.close();
        const took = performance.now() - started;
        assert.ok(took < END_DEADLINE_MS + 1_000, `close() took ${took.toFixed(0)} ms`);
        assert.equal(stream.destroyed, true, "the socket of the feed's connection is destroyed");
      } finally {
        proxy.stop();
      }
    });

    it("refuses to become healthy while a trigger is disabled", async () => {
      await pool.query("ALTER TABLE api_keys DISABLE TRIGGER api_keys_change_update");
      try {
        const feed = createPostgresFeed({ connectionString: url, pollMs: POLL_MS });
        feeds.push(feed);
        await waitFor(() => feed.status().error !== "connecting", "the first attempt");
        assert.equal(feed.status().healthy, false);
        assert.match(feed.status().error ?? "", /missing or disabled/);
        await pool.query("ALTER TABLE api_keys ENABLE TRIGGER api_keys_change_update");
        await waitFor(() => feed.status().healthy, "healthy once enabled");
        await feed.close();
      } finally {
        await pool.query("ALTER TABLE api_keys ENABLE TRIGGER api_keys_change_update");
      }
    });

    it("close() leaves nothing running: a process whose only work was a feed exits by itself", async () => {
      const script = new URL("./feed_close_script.ts", import.meta.url);
      const child = new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", script.pathname],
        env: { DATABASE_URL: url! },
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
      const output = await child.output();
      const exitedAt = Date.now();
      clearTimeout(timer);
      const stdout = new TextDecoder().decode(output.stdout);
      assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
      const report = JSON.parse(stdout.trim().split("\n").at(-1)!);
      assert.equal(report.healthyBeforeClose, true);
      assert.equal(report.sawNotice, true);
      const lingered = exitedAt - report.closedAt;
      assert.ok(lingered < 2_000, `exited ${lingered} ms after close`);
    });
  });

  /**
   * Cases that damage the schema they run on (the counter row, the triggers' mode) run in a schema
   * of their own, migrated with 0001 to 0005 and its triggers on a channel of its own, dropped at
   * the end: no other test's feed, key or trigger sees them.
   */
  describe("change feed on PostgreSQL: a schema of its own", () => {
    const schema = `feed_${crypto.randomUUID().replaceAll("-", "")}`;
    const channel = schema;
    const options = `-c search_path=${schema}`;
    const own = new pg.Pool({ connectionString: url, max: 2, options });
    const ownFeeds: PostgresApiKeyChangeFeed[] = [];

    before(async () => {
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      try {
        await admin.query(`CREATE SCHEMA ${schema}; SET search_path TO ${schema}`);
        const migrations = new URL("../../prisma/migrations/", import.meta.url);
        const names: string[] = [];
        for await (const entry of Deno.readDir(migrations)) {
          if (entry.isDirectory && entry.name < "0006") names.push(entry.name);
        }
        for (const name of names.sort()) {
          const text = await Deno.readTextFile(new URL(`${name}/migration.sql`, migrations));
          await admin.query(text.replaceAll("'api_key_changes'", `'${channel}'`));
        }
      } finally {
        await admin.end();
      }
    });

    after(async () => {
      await Promise.all(ownFeeds.map((feed) => feed.close()));
      await own.query(`DROP SCHEMA ${schema} CASCADE`);
      await own.end();
    });

    /** A feed on the schema of its own (its connections' search_path), not waited for. */
    const ownFeed = () => {
      const notices: ApiKeyChangeNotice[] = [];
      const feed = createPostgresFeed({
        client: () => new pg.Client({ connectionString: url, options }),
        channel,
        pollMs: POLL_MS,
      });
      ownFeeds.push(feed);
      feed.subscribe((notice) => {
        notices.push(notice);
      });
      return { feed, notices };
    };

    it("a counter restored below the last change delivered (its row lost, then inserted with DEFAULT VALUES, as the error of 0002 and 0005 advised) resets at once; later changes arrive as themselves", async () => {
      // A fleet that has run for a while: the counter far from 0.
      await own.query("UPDATE api_key_change_counter SET n = 1000000");
      const { feed, notices } = ownFeed();
      await waitFor(() => feed.status().healthy, "the first sync");
      await own.query(INSERT_SQL, rowValues("restored", "RestoredPfx1"));
      // Delivered as itself, or within a reset when the connection was lost meanwhile (a read
      // stalled 5 s on a loaded machine times out): what this case proves comes after.
      await waitFor(
        () => feed.status().counter === 1_000_001 && feed.status().healthy,
        () => `the create (${JSON.stringify({ status: feed.status(), notices })})`,
      );
      assert.ok(
        notices.some(({ kind, counter }) =>
          kind === "created" || (kind === "reset" && counter === 1_000_001)
        ),
      );
      const reconnects = feed.status().reconnects;
      notices.length = 0;
      // Without the row every write fails, naming the restore (which restarts the counter at 0).
      const lose = "DELETE FROM api_key_change_counter";
      const revoke = "UPDATE api_keys SET revoked_at = now() WHERE id = 'restored'";
      await assert.rejects(own.query(`${lose}; ${revoke}`), /api_key_change_counter has no row/);
      const started = performance.now();
      // Lost, restored and a revoke, in one transaction: the running feed never reads a missing
      // row (that would make it reconnect, and reset), only the counter going from 1,000,001 to 1.
      await own.query(`${lose}; INSERT INTO api_key_change_counter DEFAULT VALUES; ${revoke}`);
      await waitFor(() => notices.length > 0, "the reset", POLL_MS + 500);
      const elapsed = performance.now() - started;
      assert.deepEqual(notices, [{ kind: "reset", prefix: null, counter: 1, reason: "missed" }]);
      assert.ok(elapsed < POLL_MS + 500, `reset after ${elapsed.toFixed(0)} ms`);
      assert.ok(feed.status().stalenessMs < POLL_MS + 500);
      assert.equal(feed.status().reconnects, reconnects, "caught by the running connection");
      await own.query("UPDATE api_keys SET name = 'renamed' WHERE id = 'restored'");
      await waitFor(() => notices.length > 1, "the next change");
      assert.deepEqual(notices.slice(1), [{ kind: "updated", prefix: "RestoredPfx1", counter: 2 }]);
      assert.equal(feed.status().counter, 2);
      assert.equal(feed.status().healthy, true);
    });

    it("a trigger disabled on a running feed: unhealthy at its next read; enabled again, healthy with a reset", async () => {
      const { feed, notices } = ownFeed();
      await waitFor(() => feed.status().healthy, "the first sync");
      await own.query(INSERT_SQL, rowValues("disabled-later", "DisabledLtr1"));
      await waitFor(() => notices.some((notice) => notice.kind === "created"), "the create");
      const counter = feed.status().counter;
      notices.length = 0;
      try {
        await own.query("ALTER TABLE api_keys DISABLE TRIGGER api_keys_change_update");
        const disabledAt = performance.now();
        await waitFor(() => !feed.status().healthy, "unhealthy", POLL_MS + 500);
        assert.ok(performance.now() - disabledAt < POLL_MS + 500);
        assert.match(feed.status().error ?? "", /missing or disabled/);
        // A revoke no trigger sees: the counter does not move, the feed cannot know of it.
        await own.query("UPDATE api_keys SET revoked_at = now() WHERE id = 'disabled-later'");
      } finally {
        await own.query("ALTER TABLE api_keys ENABLE TRIGGER api_keys_change_update");
      }
      await waitFor(() => feed.status().healthy, "healthy once enabled again");
      assert.deepEqual(notices, [{ kind: "reset", prefix: null, counter, reason: "missed" }]);
    });

    it("a trigger disabled and enabled again in one transaction around a write (no read sees it disabled): a reset at the next read", async () => {
      const { feed, notices } = ownFeed();
      await waitFor(() => feed.status().healthy, "the first sync");
      await own.query(INSERT_SQL, rowValues("toggled", "ToggledPfx01"));
      await waitFor(() => notices.some((notice) => notice.kind === "created"), "the create");
      const counter = feed.status().counter;
      notices.length = 0;
      await own.query(
        "BEGIN; ALTER TABLE api_keys DISABLE TRIGGER api_keys_change_update;" +
          " UPDATE api_keys SET revoked_at = now() WHERE id = 'toggled';" +
          " ALTER TABLE api_keys ENABLE TRIGGER api_keys_change_update; COMMIT",
      );
      await waitFor(() => notices.length > 0, "a reset", POLL_MS + 1_000);
      assert.deepEqual(notices, [{ kind: "reset", prefix: null, counter, reason: "missed" }]);
      assert.equal(feed.status().healthy, true);
    });

    it("refuses to become healthy while a trigger fires for replicas only (ENABLE REPLICA); ENABLE ALWAYS counts as enabled", async () => {
      await own.query("ALTER TABLE api_keys ENABLE REPLICA TRIGGER api_keys_change_update");
      const { feed, notices } = ownFeed();
      await waitFor(() => feed.status().error !== "connecting", "the first attempt");
      await sleep(200);
      assert.equal(feed.status().healthy, false);
      assert.match(feed.status().error ?? "", /missing or disabled/);
      // An ordinary write fires no REPLICA trigger: a healthy feed would never see it.
      await own.query(INSERT_SQL, rowValues("replica-only", "ReplicaOnly1"));
      await own.query("UPDATE api_keys SET revoked_at = now() WHERE id = 'replica-only'");
      await own.query("ALTER TABLE api_keys ENABLE ALWAYS TRIGGER api_keys_change_update");
      await waitFor(() => feed.status().healthy, "healthy once the trigger fires always");
      notices.length = 0;
      await own.query("UPDATE api_keys SET name = 'seen' WHERE id = 'replica-only'");
      await waitFor(() => notices.length > 0, "the update");
      assert.deepEqual(notices.map(({ kind, prefix }) => [kind, prefix]), [
        ["updated", "ReplicaOnly1"],
      ]);
    });

    it("a snapshot waiting on a lock on api_keys (a migration's) does not hold up the change-log reads: the feed stays fresh and does not reconnect", async () => {
      const { feed } = ownFeed();
      await waitFor(() => feed.status().healthy, "the first sync");
      const reconnects = feed.status().reconnects;
      const locker = new pg.Client({ connectionString: url, options });
      await locker.connect();
      let snapshot: Promise<{ counter: number; prefixes: readonly string[] }> | undefined;
      try {
        await locker.query("BEGIN; LOCK TABLE api_keys IN ACCESS EXCLUSIVE MODE");
        snapshot = feed.snapshot();
        snapshot.catch(() => {});
        let stalest = 0;
        const started = performance.now();
        while (performance.now() - started < 1_500) {
          stalest = Math.max(stalest, feed.status().stalenessMs);
          await sleep(20);
        }
        assert.ok(stalest < POLL_MS + 500, `staleness reached ${stalest.toFixed(0)} ms`);
      } finally {
        await locker.query("ROLLBACK");
        await locker.end();
      }
      const { counter, prefixes } = await snapshot!;
      const rows = (await own.query("SELECT prefix FROM api_keys")).rows.map((row) => row.prefix);
      assert.deepEqual([...prefixes].sort(), rows.sort());
      assert.equal(counter, feed.status().counter);
      assert.equal(feed.status().reconnects, reconnects);
      assert.equal(feed.status().healthy, true);
    });

    it("a snapshot given up on a lock on api_keys (past its 5 s deadline) is cancelled on the server too: no backend of it is left waiting for the lock", async () => {
      const applicationName = `${schema.slice(0, 40)}-snapshot`;
      const feed = createPostgresFeed({
        client: () =>
          new pg.Client({ connectionString: url, options, application_name: applicationName }),
        channel,
        pollMs: POLL_MS,
      });
      ownFeeds.push(feed);
      await waitFor(() => feed.status().healthy, "the first sync");
      const locker = new pg.Client({ connectionString: url, options });
      await locker.connect();
      const waiting = async () =>
        (await own.query(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 " +
            "AND wait_event_type = 'Lock'",
          [applicationName],
        )).rows[0].n as number;
      try {
        await locker.query("BEGIN; LOCK TABLE api_keys IN ACCESS EXCLUSIVE MODE");
        await assert.rejects(feed.snapshot(), /snapshot timed out/);
        // The lock is still held: only the server's own deadline ends the backend's wait.
        const started = performance.now();
        while (await waiting() > 0) {
          assert.ok(performance.now() - started < 2_000, "a snapshot's backend still waits");
          await sleep(50);
        }
        assert.equal(feed.status().healthy, true);
      } finally {
        await locker.query("ROLLBACK");
        await locker.end();
      }
    });

    it("prunes a change-log backlog 10,000 rows per DELETE at most, at each next read until it is gone", async () => {
      // Each DELETE's rows, recorded by a statement trigger of this case.
      await own.query(`CREATE TABLE prune_sizes (n int);
        CREATE FUNCTION record_prune() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN INSERT INTO prune_sizes SELECT count(*) FROM pruned; RETURN NULL; END $$;
        CREATE TRIGGER record_prune AFTER DELETE ON api_key_change_log
          REFERENCING OLD TABLE AS pruned FOR EACH STATEMENT EXECUTE FUNCTION record_prune()`);
      try {
        // An hour-old backlog, numbered below every counter a feed reads from (never read).
        await own.query(
          "INSERT INTO api_key_change_log (n, kind, prefix, created_at) SELECT -g, 'updated', " +
            "NULL, now() - interval '1 hour' FROM generate_series(1, 25000) g",
        );
        const { feed } = ownFeed();
        await waitFor(() => feed.status().healthy, "the first sync");
        const left = async () =>
          (await own.query("SELECT count(*)::int AS n FROM api_key_change_log WHERE n < 0"))
            .rows[0].n as number;
        const started = performance.now();
        while (await left() > 0) {
          assert.ok(performance.now() - started < 10_000, "the backlog is still there");
          await sleep(20);
        }
        const sizes = (await own.query("SELECT n FROM prune_sizes WHERE n > 0")).rows.map((
          row,
        ) => row.n as number);
        assert.ok(sizes.length >= 3, `pruned in ${JSON.stringify(sizes)}`);
        assert.ok(sizes.every((n) => n <= 10_000), `pruned in ${JSON.stringify(sizes)}`);
        assert.equal(sizes.reduce((a, b) => a + b, 0), 25_000);
        assert.equal(feed.status().healthy, true);
      } finally {
        await own.query(`DROP TRIGGER record_prune ON api_key_change_log;
          DROP FUNCTION record_prune(); DROP TABLE prune_sizes`);
      }
    });

    it("with migration 0032: a lost counter row's error names a restore above the log's rows; run as printed, the next write works", async () => {
      await own.query(
        await Deno.readTextFile(
          new URL(
            "../../prisma/migrations/0032_api_key_change_restore/migration.sql",
            import.meta.url,
          ),
        ),
      );
      // The log holds rows from 1 on (the cases above), as a fleet's last 5 minutes do.
      await own.query(INSERT_SQL, rowValues("restore-a", "RestorePfxA1"));
      const lose = "DELETE FROM api_key_change_counter";
      const rename = "UPDATE api_keys SET name = 'renamed' WHERE id = 'restore-a'";
      const error = await own.query(`${lose}; ${rename}`).then(() => undefined, (e) => e as Error);
      const advice = /api_key_change_counter has no row: restore it (?:.* )?with (INSERT INTO .*)$/
        .exec(error?.message ?? "");
      assert.ok(advice, `the error names a restore: ${error?.message}`);
      await own.query(`${lose}; ${advice[1]}`);
      const before = await own.query("SELECT max(n)::int AS n FROM api_key_change_log");
      await own.query(rename);
      const after = await own.query("SELECT n::int FROM api_key_change_counter");
      assert.equal(after.rows[0].n, before.rows[0].n + 1);
    });

    it("with migration 0029: a counter restored and moved past the last change delivered in one transaction resets (its epoch changed)", async () => {
      await own.query(
        await Deno.readTextFile(
          new URL(
            "../../prisma/migrations/0029_api_key_change_epoch/migration.sql",
            import.meta.url,
          ),
        ),
      );
      await own.query("DELETE FROM api_key_change_counter; DELETE FROM api_key_change_log");
      await own.query("INSERT INTO api_key_change_counter DEFAULT VALUES");
      await own.query(INSERT_SQL, rowValues("epoch-a", "EpochPrefxA1"));
      await own.query(INSERT_SQL, rowValues("epoch-b", "EpochPrefxB1"));
      const { feed, notices } = ownFeed();
      await waitFor(() => feed.status().healthy && feed.status().counter === 2, "the first sync");
      const reconnects = feed.status().reconnects;
      notices.length = 0;
      // The log pruned (a quiet fleet), then the counter lost and restored with a revoke and two
      // renames, in one transaction: the counter goes from 2 to 3, past the feed's.
      await own.query("DELETE FROM api_key_change_log");
      await own.query(
        "DELETE FROM api_key_change_counter; INSERT INTO api_key_change_counter DEFAULT VALUES;" +
          " UPDATE api_keys SET revoked_at = now() WHERE id = 'epoch-b';" +
          " UPDATE api_keys SET name = 'x' WHERE id = 'epoch-a';" +
          " UPDATE api_keys SET name = 'y' WHERE id = 'epoch-a'",
      );
      await waitFor(() => notices.length > 0, "the reset", POLL_MS + 500);
      await sleep(POLL_MS * 2);
      assert.deepEqual(notices, [{ kind: "reset", prefix: null, counter: 3, reason: "missed" }]);
      assert.equal(feed.status().reconnects, reconnects, "caught by the running connection");
      const snapshot = await feed.snapshot();
      assert.equal(snapshot.counter, 3);
      await own.query("UPDATE api_keys SET name = 'z' WHERE id = 'epoch-a'");
      await waitFor(() => notices.length > 1, "the next change");
      assert.deepEqual(notices.slice(1), [{ kind: "updated", prefix: "EpochPrefxA1", counter: 4 }]);
    });
  });
}
