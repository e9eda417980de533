/**
 * `createPostgresFeed` against a scripted fake `pg` client: the sync rules
 * (first sync, the log read in order, missing rows, a counter gone back,
 * reconnections), notices as wake-up hints only, the notice probe, pruning,
 * the schema check, option validation and `close()`. The same feed on a real
 * PostgreSQL: tests/postgres/change_feed_test.ts.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { collectUnhandledRejections } from "../../reliability/harness.ts";
import type { ApiKeyChangeNotice } from "../../../api_keys/mod.ts";
import { createPostgresFeed } from "../../../api_keys/postgres/mod.ts";
import {
  type PostgresFeedClient,
  type PostgresFeedOptions,
  PRUNE_CHUNK,
} from "../../../api_keys/postgres/_feed.ts";

const CHANNEL = "api_key_changes";
const PREFIX = "AbCdEfGhIjKl";
const SECRET_URL = "postgresql://app:hunter2-secret@db:5432/app";

type Handler = (...args: never[]) => void;

/** A scripted database: a counter, its change log, its triggers, and the connections to it. */
class FakeServer {
  counter = 0;
  readonly log: { n: number; kind: string; prefix: string | null }[] = [];
  triggers = 3;
  logTable = true;
  /** The counter's epoch (migration 0029); undefined: a database without the column. */
  epoch: string | undefined;
  reachable = true;
  /** Whether a connection gets the notices it sends itself (false: as behind a transaction pooler). */
  selfNotices = true;
  /** Rejects every prune with this error. */
  pruneError: Error | undefined;
  prunes = 0;
  /** The rows each prune answers it deleted, in turn (then 0). */
  pruned: number[] = [];
  /** Rejects `connect` with this error (for example a message with a secret in it). */
  connectError: Error | undefined;
  /** Holds every `connect` until released. */
  gate: Promise<void> | undefined;
  readonly clients: FakeClient[] = [];

  get live(): FakeClient[] {
    return this.clients.filter((client) => client.listening && !client.ended);
  }

  /**
   * Commits one change: the counter moves, the log gets its row unless
   * `unlogged`, and the live connections get a notice unless `lost`.
   */
  commit(kind = "revoked", prefix: string | null = PREFIX, lost = false, unlogged = false): number {
    this.counter++;
    if (!unlogged) this.log.push({ n: this.counter, kind, prefix });
    if (!lost) this.notify(String(this.counter));
    return this.counter;
  }

  /** The counter row lost and inserted again with DEFAULT VALUES: at 0, a new epoch. */
  restore(): void {
    this.counter = 0;
    this.log.length = 0;
    if (this.epoch !== undefined) this.epoch = crypto.randomUUID();
  }

  notify(payload: string, channel = CHANNEL): void {
    for (const client of this.live) client.emit("notification", { channel, payload });
  }

  /** Ends every connection as a server-side termination does. */
  terminate(): void {
    for (const client of this.live) {
      client.emit("error", Object.assign(new Error("terminating connection"), { code: "57P01" }));
      client.ended = true;
      client.emit("end");
    }
  }
}

class FakeClient implements PostgresFeedClient {
  readonly #server: FakeServer;
  readonly #handlers = new Map<string, Handler[]>();
  listening = false;
  ended = false;
  readonly queries: string[] = [];

  constructor(server: FakeServer) {
    this.#server = server;
  }

  async connect(): Promise<void> {
    await this.#server.gate;
    if (this.#server.connectError) throw this.#server.connectError;
    if (!this.#server.reachable) {
      throw Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
    }
  }

  query(text: string, values: unknown[] = []): Promise<{ rows: Record<string, unknown>[] }> {
    this.queries.push(text);
    const server = this.#server;
    if (this.ended) return Promise.reject(new Error("Client was closed"));
    if (text.startsWith("LISTEN")) {
      this.listening = true;
      return Promise.resolve({ rows: [] });
    }
    if (text.includes("pg_trigger") && !text.includes("api_key_change_log WHERE")) {
      const epoch = server.epoch !== undefined;
      return Promise.resolve({ rows: [{ n: server.triggers, log: server.logTable, epoch }] });
    }
    const epoch = server.epoch ?? null;
    if (text.includes("ARRAY(")) {
      return Promise.resolve({ rows: [{ n: String(server.counter), epoch, prefixes: [PREFIX] }] });
    }
    if (text.includes("pg_notify")) {
      const [channel, payload] = values as string[];
      if (server.selfNotices) setTimeout(() => this.emit("notification", { channel, payload }), 1);
      return Promise.resolve({ rows: [{}] });
    }
    if (text.includes("DELETE FROM api_key_change_log")) {
      server.prunes++;
      return server.pruneError
        ? Promise.reject(server.pruneError)
        : Promise.resolve({ rows: [{ n: server.pruned.shift() ?? 0 }] });
    }
    const counter = String(server.counter);
    if (!text.includes("api_key_change_log")) {
      return Promise.resolve({ rows: [{ n: counter, epoch }] });
    }
    const triggers = server.triggers;
    const rows = server.log.filter((row) => row.n > Number(values[0]))
      .map((row) => ({ counter, epoch, triggers, ...row, n: String(row.n) }));
    return Promise.resolve({
      rows: rows.length > 0
        ? rows
        : [{ counter, epoch, triggers, n: null, kind: null, prefix: null }],
    });
  }

  /** Reads of the change log this connection sent. */
  get reads(): number {
    return this.queries.filter((text) => text.includes("api_key_change_log WHERE n >")).length;
  }

  on(event: string, listener: Handler): this {
    this.#handlers.set(event, [...(this.#handlers.get(event) ?? []), listener]);
    return this;
  }

  emit(event: string, ...args: unknown[]): void {
    for (const handler of this.#handlers.get(event) ?? []) {
      (handler as (...a: unknown[]) => void)(...args);
    }
  }

  end(): Promise<void> {
    if (!this.ended) {
      this.ended = true;
      this.emit("end");
    }
    return Promise.resolve();
  }
}

async function waitFor(predicate: () => boolean, what: string, timeoutMs = 3_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!predicate()) {
    if (performance.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

function start(server = new FakeServer(), pollMs = 20) {
  const notices: ApiKeyChangeNotice[] = [];
  const feed = createPostgresFeed({
    client: () => {
      const client = new FakeClient(server);
      server.clients.push(client);
      return client;
    },
    pollMs,
  });
  feed.subscribe((notice) => {
    notices.push(notice);
  });
  return { server, feed, notices };
}

describe("createPostgresFeed (scripted client)", () => {
  it("is unhealthy with staleness Infinity until its first sync, which resets once", async () => {
    const server = new FakeServer();
    let release!: () => void;
    server.gate = new Promise((resolve) => release = resolve);
    server.counter = 41;
    const { feed, notices } = start(server);
    await new Promise((resolve) => setTimeout(resolve, 30));
    let status = feed.status();
    assert.equal(status.healthy, false);
    assert.equal(status.stalenessMs, Infinity);
    assert.ok(status.unhealthyForMs >= 25);
    release();
    await waitFor(() => feed.status().healthy, "the first sync");
    status = feed.status();
    assert.equal(status.counter, 41);
    assert.equal(status.error, null);
    assert.ok(status.stalenessMs < 1_000);
    assert.deepEqual(notices, [{ kind: "reset", prefix: null, counter: 41, reason: "missed" }]);
    await feed.close();
  });

  it("delivers the log's changes in order, and resets on a missing row", async () => {
    const { server, feed, notices } = start();
    await waitFor(() => feed.status().healthy, "sync");
    notices.length = 0;
    server.commit("created", PREFIX);
    server.commit("revoked", PREFIX);
    await waitFor(() => notices.length === 2, "two changes");
    server.commit("updated", PREFIX, false, true); // a counter moved with no row (by hand)
    server.commit("rotated", "MnOpQrStUvWx");
    await waitFor(() => notices.length === 3, "the reset");
    assert.deepEqual(notices, [
      { kind: "created", prefix: PREFIX, counter: 1 },
      { kind: "revoked", prefix: PREFIX, counter: 2 },
      { kind: "reset", prefix: null, counter: 4, reason: "missed" },
    ]);
    server.commit("truncated", null);
    server.commit("updated", null);
    server.commit("used", PREFIX); // a kind this release does not know
    await waitFor(() => notices.length === 6, "three resets");
    assert.deepEqual(notices.slice(3).map((n) => n.kind === "reset" && n.reason), [
      "truncated",
      "unnamed",
      "unnamed",
    ]);
    assert.equal(feed.status().counter, 7);
    await feed.close();
  });

  it("a counter below the last change delivered (its row restored, restarting at 0) resets at once, then follows the new numbering", async () => {
    const server = new FakeServer();
    server.counter = 50;
    const { feed, notices } = start(server);
    await waitFor(() => feed.status().healthy, "sync");
    notices.length = 0;
    server.counter = 0; // the row deleted, then inserted with DEFAULT VALUES
    server.commit("revoked", PREFIX);
    await waitFor(() => notices.length === 1, "the reset");
    assert.deepEqual(notices, [{ kind: "reset", prefix: null, counter: 1, reason: "missed" }]);
    server.commit("updated", PREFIX);
    await waitFor(() => notices.length === 2, "the next change");
    assert.deepEqual(notices[1], { kind: "updated", prefix: PREFIX, counter: 2 });
    const status = feed.status();
    assert.deepEqual([status.counter, status.healthy, status.reconnects], [2, true, 0]);
    await feed.close();
  });

  it("a change whose notice never comes is read from the log at the next poll", async () => {
    const { server, feed, notices } = start();
    await waitFor(() => feed.status().healthy, "sync");
    notices.length = 0;
    server.commit("revoked", PREFIX, true);
    await waitFor(() => notices.length > 0, "the poll");
    assert.deepEqual(notices, [{ kind: "revoked", prefix: PREFIX, counter: 1 }]);
    assert.equal(feed.status().resets, 1, "the first sync's only");
    await feed.close();
  });

  it("a notice is a wake-up hint only: forged payloads deliver nothing, a flood costs at most one read more", async () => {
    const { server, feed, notices } = start(new FakeServer(), 60_000);
    await waitFor(() => feed.status().healthy && server.live[0].reads > 0, "sync and a read");
    notices.length = 0;
    const client = server.live[0];
    const before = client.reads;
    for (let n = 1; n <= 5_000; n++) {
      server.notify(JSON.stringify({ n, kind: "deleted", prefix: PREFIX }));
    }
    server.notify("hello");
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(notices, []);
    assert.ok(client.reads - before <= 2, `${client.reads - before} reads for 5,001 notices`);
    assert.equal(feed.status().counter, 0);
    assert.equal(feed.status().resets, 1);
    server.commit("created", PREFIX);
    await waitFor(() => notices.length === 1, "a real change");
    assert.deepEqual(notices, [{ kind: "created", prefix: PREFIX, counter: 1 }]);
    await feed.close();
  });

  it("probes its notices at each connection: noticesArrive, and one warning when they do not", async () => {
    const warn = console.warn;
    const warnings: string[] = [];
    console.warn = (...args: unknown[]) => warnings.push(args.join(" "));
    try {
      const { feed } = start();
      await waitFor(() => feed.status().noticesArrive === true, "the probe back");
      await feed.close();
      const server = new FakeServer();
      server.selfNotices = false;
      const quiet = start(server);
      assert.equal(quiet.feed.status().noticesArrive, null);
      await waitFor(() => quiet.feed.status().noticesArrive === false, "the probe's timeout");
      server.terminate();
      await waitFor(() => quiet.feed.status().reconnects === 1, "a reconnection");
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      assert.equal(warnings.length, 1, "warned once");
      assert.match(warnings[0], /no notice within 1000 ms.*every pollMs \(20 ms\)/);
      assert.equal(quiet.feed.status().healthy, true);
      await quiet.feed.close();
    } finally {
      console.warn = warn;
    }
  });

  it("a console.warn that throws is contained: the probe still notes its notices missing, the prune's warning changes nothing", async () => {
    const warn = console.warn;
    console.warn = () => {
      throw new Error("the console is down");
    };
    try {
      const server = new FakeServer();
      server.selfNotices = false;
      server.pruneError = Object.assign(new Error("permission denied"), { code: "42501" });
      const { feed } = start(server);
      await waitFor(() => feed.status().noticesArrive === false, "the probe's timeout");
      assert.equal(server.prunes, 1);
      assert.equal(feed.status().healthy, true);
      assert.equal(feed.status().reconnects, 0);
      await feed.close();
    } finally {
      console.warn = warn;
    }
  });

  it("prunes the log at its first read and once a minute; a failed prune is one warning", async () => {
    const warn = console.warn;
    const warnings: string[] = [];
    console.warn = (...args: unknown[]) => warnings.push(args.join(" "));
    try {
      const server = new FakeServer();
      server.pruneError = Object.assign(new Error("permission denied"), { code: "42501" });
      const { feed } = start(server);
      await waitFor(() => server.prunes === 1, "a prune");
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal(server.prunes, 1, "not again within the minute");
      assert.equal(feed.status().healthy, true);
      assert.deepEqual(warnings, [
        "api-keys: the change feed cannot prune api_key_change_log (prune failed (42501));" +
        " delete its rows older than 5 minutes another way (docs/operations.md)",
      ]);
      await feed.close();
    } finally {
      console.warn = warn;
    }
  });

  it("prunes again at the next read while a prune deletes a full chunk (a backlog), then once a minute", async () => {
    const server = new FakeServer();
    server.pruned = [PRUNE_CHUNK, PRUNE_CHUNK, 17];
    const { feed } = start(server);
    await waitFor(() => server.prunes === 3, "three prunes");
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(server.prunes, 3, "not again within the minute");
    assert.equal(feed.status().healthy, true);
    await feed.close();
  });

  it("reconnects after a lost connection; resets only if the counter moved meanwhile", async () => {
    const { server, feed, notices } = start();
    await waitFor(() => feed.status().healthy, "sync");
    server.commit();
    await waitFor(() => feed.status().counter === 1, "the change read");
    notices.length = 0;
    server.terminate();
    assert.equal(feed.status().healthy, false);
    assert.equal(feed.status().error, "connection failed (57P01)");
    await waitFor(() => feed.status().healthy, "the reconnection");
    assert.deepEqual(notices, []);
    assert.equal(feed.status().reconnects, 1);

    server.reachable = false;
    server.terminate();
    server.commit("revoked", PREFIX, true); // made while the feed is away
    await waitFor(() => /ECONNREFUSED/.test(feed.status().error ?? ""), "a refused retry");
    assert.equal(feed.status().healthy, false);
    server.reachable = true;
    await waitFor(() => feed.status().healthy, "the second reconnection");
    assert.deepEqual(notices, [{ kind: "reset", prefix: null, counter: 2, reason: "missed" }]);
    assert.equal(feed.status().reconnects, 2);
    assert.ok(server.clients.slice(0, -1).every((client) => client.ended), "old clients ended");
    await feed.close();
  });

  it("stays unhealthy while the change log is missing, and says so", async () => {
    const server = new FakeServer();
    server.logTable = false;
    const { feed } = start(server);
    await waitFor(() => server.clients.length >= 2, "a retry");
    assert.equal(feed.status().healthy, false);
    assert.match(feed.status().error ?? "", /api_key_change_log is missing \(migration 0005\)/);
    await feed.close();
  });

  it("stays unhealthy while the triggers are missing, and says so", async () => {
    const server = new FakeServer();
    server.triggers = 2;
    const { feed } = start(server);
    await waitFor(() => server.clients.length >= 2, "a retry");
    const status = feed.status();
    assert.equal(status.healthy, false);
    assert.match(status.error ?? "", /triggers on api_keys for channel api_key_changes/);
    server.triggers = 3;
    await waitFor(() => feed.status().healthy, "sync once the triggers exist");
    await feed.close();
  });

  it("a trigger disabled on a running feed: unhealthy at the next read; enabled again, healthy with a reset", async () => {
    const { server, feed, notices } = start();
    await waitFor(() => feed.status().healthy, "sync");
    notices.length = 0;
    server.triggers = 2; // a write now moves no counter and logs nothing
    await waitFor(() => !feed.status().healthy, "unhealthy at the next read", 500);
    assert.match(feed.status().error ?? "", /triggers on api_keys for channel api_key_changes/);
    server.triggers = 3;
    await waitFor(() => feed.status().healthy, "healthy once enabled again");
    assert.deepEqual(notices, [{ kind: "reset", prefix: null, counter: 0, reason: "missed" }]);
    assert.equal(feed.status().reconnects, 1);
    await feed.close();
  });

  it("stays unhealthy while the counter cannot be read, and says so", async () => {
    const server = new FakeServer();
    server.counter = NaN;
    const { feed } = start(server);
    await waitFor(() => server.clients.length >= 2, "a retry");
    assert.equal(feed.status().healthy, false);
    assert.equal(feed.status().error, "api_key_change_counter.n is not a counter");
    await feed.close();
  });

  it("with an epoch (migration 0029): a counter restored and carried past the last change delivered resets, on the running connection and at a reconnection", async () => {
    const server = new FakeServer();
    server.epoch = crypto.randomUUID();
    const { feed, notices } = start(server);
    await waitFor(() => feed.status().healthy, "sync");
    server.commit("created", PREFIX);
    server.commit("updated", PREFIX);
    await waitFor(() => feed.status().counter === 2, "two changes");
    notices.length = 0;
    // Restored with a revoke and two renames, committed together: the counter goes from 2 to 3.
    server.restore();
    server.commit("revoked", PREFIX, true);
    server.commit("updated", PREFIX, true);
    server.commit("updated", PREFIX);
    await waitFor(() => notices.length > 0, "the reset");
    await new Promise((resolve) => setTimeout(resolve, 60));
    assert.deepEqual(notices, [{ kind: "reset", prefix: null, counter: 3, reason: "missed" }]);
    assert.equal(feed.status().reconnects, 0);
    // Lost and restored to the same counter while the feed is away: its next sync resets.
    server.terminate();
    server.restore();
    server.commit("revoked", PREFIX, true);
    server.commit("updated", PREFIX, true);
    server.commit("updated", PREFIX, true);
    await waitFor(
      () => feed.status().reconnects === 1 && feed.status().healthy,
      "the reconnection",
    );
    assert.deepEqual(notices.slice(1), [
      { kind: "reset", prefix: null, counter: 3, reason: "missed" },
    ]);
    await feed.close();
  });

  it("a factory that returns no client, or a client whose end() throws, rejects or returns nothing: unhealthy and retried, the process unharmed", async () => {
    const unhandled = collectUnhandledRejections();
    try {
      const refused = () =>
        Promise.reject(Object.assign(new Error("refused"), { code: "ECONNREFUSED" }));
      const cases: [string, () => unknown, RegExp][] = [
        ["null", () => null, /^the client factory returned no client$/],
        ["a number", () => 42, /^the client factory returned no client$/],
        ["end() throws", () => ({
          connect: refused,
          query: refused,
          on: () => {},
          end: () => {
            throw new Error("end() on a closed connection");
          },
        }), /connect failed \(ECONNREFUSED\)/],
        ["end() rejects", () => ({
          connect: refused,
          query: refused,
          on: () => {},
          end: () => Promise.reject(new Error("already closed")),
        }), /connect failed \(ECONNREFUSED\)/],
        ["end() returns nothing", () => ({
          connect: refused,
          query: refused,
          on: () => {},
          end: () => undefined,
        }), /connect failed \(ECONNREFUSED\)/],
      ];
      for (const [name, make, error] of cases) {
        let made = 0;
        const feed = createPostgresFeed({
          client: () => {
            made++;
            return make() as PostgresFeedClient;
          },
        });
        await waitFor(() => made >= 3, `${name}: retries`);
        const status = feed.status();
        assert.equal(status.healthy, false, name);
        assert.match(status.error ?? "", error, name);
        await feed.close();
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    } finally {
      await unhandled.stop();
    }
    assert.deepEqual(unhandled.reasons, []);
  });

  it("never puts a driver error's message in status().error", async () => {
    const server = new FakeServer();
    server.connectError = new Error(`could not connect to ${SECRET_URL}`);
    const { feed } = start(server);
    await waitFor(() => feed.status().error !== "connecting", "the first failure");
    assert.equal(feed.status().error, "connect failed (Error)");
    await feed.close();
  });

  it("snapshot lists the prefixes with their counter, and rejects while not in sync", async () => {
    const server = new FakeServer();
    server.reachable = false;
    const { feed } = start(server);
    await assert.rejects(feed.snapshot(), /not in sync/);
    server.reachable = true;
    await waitFor(() => feed.status().healthy, "sync");
    server.commit();
    assert.deepEqual(await feed.snapshot(), { counter: 1, prefixes: [PREFIX] });
    await feed.close();
  });

  it("snapshot reads on a client of its own, ended after; it rejects a numbering the feed has not reached", async () => {
    const { server, feed } = start();
    await waitFor(() => feed.status().healthy, "sync");
    const [live] = server.clients;
    assert.deepEqual(await feed.snapshot(), { counter: 0, prefixes: [PREFIX] });
    assert.equal(server.clients.length, 2);
    assert.equal(server.clients[1].ended, true);
    assert.equal(live.ended, false);
    assert.ok(!live.queries.some((text) => text.includes("ARRAY(")));
    await feed.close();
    // With an epoch: a snapshot of a restored counter the feed has not read yet is refused.
    const withEpoch = new FakeServer();
    withEpoch.epoch = crypto.randomUUID();
    const second = start(withEpoch, 60_000);
    await waitFor(() => second.feed.status().healthy, "sync");
    withEpoch.restore();
    withEpoch.commit("revoked", PREFIX, true);
    await assert.rejects(second.feed.snapshot(), /not in sync/);
    await second.feed.close();
  });

  it("close() while a connect hangs destroys the socket of a client that never connected (a pg.Client's connection.stream)", async () => {
    let destroyed = 0;
    let ended!: () => void;
    const client = {
      connect: () => new Promise(() => {}),
      query: () => new Promise<never>(() => {}),
      on: () => {},
      // As pg.Client during a connect: end() waits for the peer to close the socket.
      end: () => new Promise<void>((resolve) => ended = resolve),
      connection: {
        stream: {
          destroy: () => {
            destroyed++;
            ended();
          },
        },
      },
    };
    const feed = createPostgresFeed({ client: () => client as unknown as PostgresFeedClient });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const started = performance.now();
    await feed.close();
    const took = performance.now() - started;
    assert.ok(took < 1_000, `close() took ${took.toFixed(0)} ms`);
    assert.equal(destroyed, 1);
  });

  it("close() ends the connection and delivers nothing more", async () => {
    const { server, feed, notices } = start();
    await waitFor(() => feed.status().healthy, "sync");
    const client = server.live[0];
    await feed.close();
    assert.equal(client.ended, true);
    const status = feed.status();
    assert.equal(status.healthy, false);
    assert.equal(status.stalenessMs, Infinity);
    assert.equal(status.error, "closed");
    const count = notices.length;
    client.emit("notification", {
      channel: CHANNEL,
      payload: "9",
    });
    assert.equal(notices.length, count);
    await new Promise((resolve) => setTimeout(resolve, 60));
    assert.equal(server.clients.length, 1, "no reconnection after close");
    await feed.close();
  });

  it("validates its options", () => {
    const client = () => new FakeClient(new FakeServer());
    const bad: [unknown, RegExp][] = [
      [undefined, /options object/],
      [{}, /exactly one of connectionString and client/],
      [{ connectionString: SECRET_URL, client }, /exactly one/],
      [{ connectionString: "" }, /connectionString/],
      [{ client: "pg" }, /client must be a function/],
      [{ client, channel: "Api-Keys" }, /channel/],
      [{ client, channel: `c${"x".repeat(63)}` }, /channel/],
      [{ client, pollMs: 5 }, /pollMs/],
      [{ client, pollMs: 1.5 }, /pollMs/],
    ];
    for (const [options, message] of bad) {
      assert.throws(
        () => createPostgresFeed(options as PostgresFeedOptions),
        (error: unknown) => error instanceof TypeError && message.test(error.message),
        String(message),
      );
    }
  });
});
