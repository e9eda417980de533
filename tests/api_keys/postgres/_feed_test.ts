/**
 * `createPostgresFeed` against a scripted fake `pg` client: the sync rules
 * (first sync, gaps, counter advances without notices, reconnections), the
 * trigger check, option validation and `close()`. The same feed on a real
 * PostgreSQL: tests/postgres/change_feed_test.ts.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { ApiKeyChangeNotice } from "../../../api_keys/mod.ts";
import { createPostgresFeed } from "../../../api_keys/postgres/mod.ts";
import type { PostgresFeedClient, PostgresFeedOptions } from "../../../api_keys/postgres/_feed.ts";

const CHANNEL = "api_key_changes";
const PREFIX = "AbCdEfGhIjKl";
const SECRET_URL = "postgresql://app:hunter2-secret@db:5432/app";

type Handler = (...args: never[]) => void;

/** A scripted database: a counter, its triggers, and the connections to it. */
class FakeServer {
  counter = 0;
  triggers = 3;
  reachable = true;
  /** Rejects `connect` with this error (for example a message with a secret in it). */
  connectError: Error | undefined;
  /** Holds every `connect` until released. */
  gate: Promise<void> | undefined;
  /** Runs (once) 20 ms after the next counter read has been answered. */
  afterPoll: (() => void) | undefined;
  readonly clients: FakeClient[] = [];

  get live(): FakeClient[] {
    return this.clients.filter((client) => client.listening && !client.ended);
  }

  /** Commits one change: the counter moves, and the live connections get a notice unless `lost`. */
  commit(kind = "revoked", prefix: string | null = PREFIX, lost = false): number {
    this.counter++;
    if (!lost) this.notify(JSON.stringify({ n: this.counter, kind, prefix }));
    return this.counter;
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

  query(text: string): Promise<{ rows: Record<string, unknown>[] }> {
    this.queries.push(text);
    if (this.ended) return Promise.reject(new Error("Client was closed"));
    if (text.startsWith("LISTEN")) {
      this.listening = true;
      return Promise.resolve({ rows: [] });
    }
    if (text.includes("pg_trigger")) {
      return Promise.resolve({ rows: [{ n: this.#server.triggers }] });
    }
    if (text.includes("ARRAY(")) {
      return Promise.resolve({ rows: [{ n: String(this.#server.counter), prefixes: [PREFIX] }] });
    }
    const after = this.#server.afterPoll;
    this.#server.afterPoll = undefined;
    if (after !== undefined) setTimeout(after, 20); // within the feed's 50 ms wait
    return Promise.resolve({ rows: [{ n: String(this.#server.counter) }] });
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

  it("delivers notices in order, and resets on a gap in the counters", async () => {
    const { server, feed, notices } = start();
    await waitFor(() => feed.status().healthy, "sync");
    notices.length = 0;
    server.commit("created", PREFIX);
    server.commit("revoked", PREFIX);
    server.counter++; // a change whose notice never comes...
    server.commit("rotated", "MnOpQrStUvWx"); // ...shows as a gap here
    assert.deepEqual(notices, [
      { kind: "created", prefix: PREFIX, counter: 1 },
      { kind: "revoked", prefix: PREFIX, counter: 2 },
      { kind: "reset", prefix: null, counter: 3, reason: "missed" },
      { kind: "rotated", prefix: "MnOpQrStUvWx", counter: 4 },
    ]);
    server.commit("truncated", null);
    server.commit("updated", null);
    assert.deepEqual(notices.slice(4).map((n) => n.kind === "reset" && n.reason), [
      "truncated",
      "unnamed",
    ]);
    assert.equal(feed.status().counter, 6);
    await feed.close();
  });

  it("a counter advance without its notice becomes a reset at the next poll", async () => {
    const { server, feed, notices } = start();
    await waitFor(() => feed.status().healthy, "sync");
    notices.length = 0;
    server.commit("revoked", PREFIX, true);
    await waitFor(() => notices.length > 0, "the poll's reset");
    assert.deepEqual(notices, [{ kind: "reset", prefix: null, counter: 1, reason: "missed" }]);
    assert.equal(feed.status().resets, 2);
    await feed.close();
  });

  it("a notice that arrives shortly after the poll saw its counter does not reset", async () => {
    const { server, feed, notices } = start();
    await waitFor(() => feed.status().healthy, "sync");
    notices.length = 0;
    let notified = false;
    server.afterPoll = () => {
      server.notify(JSON.stringify({ n: 1, kind: "revoked", prefix: PREFIX }));
      notified = true;
    };
    server.counter++; // committed: the next poll sees it before its notice arrives
    await waitFor(() => notified, "the notice after the poll");
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.deepEqual(notices, [{ kind: "revoked", prefix: PREFIX, counter: 1 }]);
    await feed.close();
  });

  it("ignores notices it cannot read and notices on other channels", async () => {
    const { server, feed, notices } = start();
    await waitFor(() => feed.status().healthy, "sync");
    notices.length = 0;
    server.notify("hello");
    server.notify(JSON.stringify({ n: 1, kind: "revoked", prefix: PREFIX }), "other");
    assert.deepEqual(notices, []);
    await feed.close();
  });

  it("reconnects after a lost connection; resets only if the counter moved meanwhile", async () => {
    const { server, feed, notices } = start();
    await waitFor(() => feed.status().healthy, "sync");
    server.commit();
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

  it("stays unhealthy while the counter cannot be read, and says so", async () => {
    const server = new FakeServer();
    server.counter = NaN;
    const { feed } = start(server);
    await waitFor(() => server.clients.length >= 2, "a retry");
    assert.equal(feed.status().healthy, false);
    assert.equal(feed.status().error, "api_key_change_counter.n is not a counter");
    await feed.close();
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
      payload: '{"n":9,"kind":"created","prefix":"x"}',
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
