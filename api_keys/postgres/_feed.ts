/**
 * The PostgreSQL change feed: one dedicated connection that reads the change
 * log of `prisma/migrations/0005_api_key_change_log` every `pollMs`, and at
 * once when a notice of the trigger arrives (a wake-up hint only: anyone who
 * can connect may send one), reconnecting with backoff when it is lost.
 *
 * @module
 */
import pg from "pg";
import {
  type ApiKeyChangeFeed,
  type ApiKeyChangeFeedStatus,
  type ApiKeyChangeKind,
  type ApiKeyChangeListener,
  type ApiKeyFeedResetReason,
  type ApiKeyFeedSnapshot,
  ChangeListeners,
} from "../change_feed.ts";
import { logLine } from "../_sinks.ts";
import { FeedError, parseCounter, parseEpoch, parseLoggedChange } from "./_notice.ts";

/** Channel the migration's triggers notify. */
export const DEFAULT_FEED_CHANNEL = "api_key_changes";

/** Default interval between two reads of the change log, in ms. */
export const DEFAULT_FEED_POLL_MS = 500;

/** Deadline of connecting and of each query, in ms. */
const TIMEOUT_MS = 5_000;
/** How long the probe notice the feed sends itself at each connection may take to come back, in ms. */
export const PROBE_TIMEOUT_MS = 1_000;
/** Interval between two prunes of the change log by one feed, in ms. */
const PRUNE_EVERY_MS = 60_000;
/** Most log rows one read applies; a longer backlog becomes a reset. */
const LOG_READ_LIMIT = 1_000;
/** First reconnection delay, in ms; doubles per failed attempt up to `RECONNECT_MAX_MS`. */
const RECONNECT_MIN_MS = 100;
/** Longest reconnection delay, in ms. */
const RECONNECT_MAX_MS = 5_000;
/** `application_name` of the connections opened from a `connectionString`. */
const APPLICATION_NAME = "api-kit-change-feed";
/** An unquoted PostgreSQL identifier in lower case (at most 63 bytes). */
const CHANNEL_NAME = /^[a-z_][a-z0-9_]{0,62}$/;
/**
 * The migration creates three triggers on `api_keys` calling `api_key_change_notify(channel)`;
 * each must fire on ordinary writes: enabled (`O`) or enabled always (`A`), not disabled (`D`)
 * nor enabled for replicas only (`R`, fires only under `session_replication_role = replica`).
 */
const TRIGGER_COUNT = 3;

/** The triggers for channel `$N` (`pg_trigger` rows). */
const TRIGGERS_OF = (n: number) =>
  " FROM pg_trigger" +
  " WHERE tgrelid = to_regclass('api_keys') AND tgfoid = to_regproc('api_key_change_notify')" +
  ` AND tgargs = convert_to($${n}, 'UTF8') || '\\x00'::bytea`;
/** How many of the triggers for channel `$N` fire on ordinary writes. */
const COUNT_TRIGGERS_SQL = (n: number) =>
  `SELECT count(*)::int${TRIGGERS_OF(n)} AND tgenabled IN ('O', 'A')`;
/**
 * The row versions of the triggers for channel `$N`: any `ALTER TABLE … DISABLE/ENABLE TRIGGER`
 * writes a new one, also one undone in the same transaction, around writes no trigger logged.
 */
const TRIGGER_VERSIONS_SQL = (n: number) =>
  `SELECT string_agg(xmin::text, ',' ORDER BY oid)${TRIGGERS_OF(n)}`;
/** The triggers firing, whether the log exists, and whether the counter has its epoch (0029). */
const CHECK_TRIGGERS_SQL = `SELECT (${COUNT_TRIGGERS_SQL(1)}) AS n,` +
  ` (${TRIGGER_VERSIONS_SQL(1)}) AS versions,` +
  " to_regclass('api_key_change_log') IS NOT NULL AS log, EXISTS (SELECT FROM pg_attribute" +
  " WHERE attrelid = to_regclass('api_key_change_counter') AND attname = 'epoch'" +
  " AND NOT attisdropped) AS epoch";

/** The statements that read the counter, with its epoch (NULL on a database without 0029). */
interface CounterReads {
  readonly counter: string;
  /**
   * The counter, the triggers firing (as `CHECK_TRIGGERS_SQL`, channel `$2`) and the log rows
   * after `$1`, in one snapshot: every row up to the counter is there, and a write committed
   * before it without the triggers (`DISABLE TRIGGER`) shows as a count below `TRIGGER_COUNT`.
   */
  readonly log: string;
  readonly snapshot: string;
}

function counterReads(epoch: boolean): CounterReads {
  const from = `${epoch ? "c.epoch::text" : "NULL::text"} AS epoch FROM api_key_change_counter c`;
  return {
    counter: `SELECT c.n::text AS n, ${from}`,
    log: `SELECT c.n::text AS counter, (${COUNT_TRIGGERS_SQL(2)}) AS triggers,` +
      ` (${TRIGGER_VERSIONS_SQL(2)}) AS versions, l.n::text AS n,` +
      ` l.kind, l.prefix, ${from} LEFT JOIN LATERAL (SELECT n, kind, prefix` +
      ` FROM api_key_change_log WHERE n > $1::bigint ORDER BY n LIMIT ${LOG_READ_LIMIT}) l ON true` +
      " ORDER BY l.n",
    snapshot: `SELECT c.n::text AS n, ARRAY(SELECT prefix FROM api_keys) AS prefixes, ${from}`,
  };
}
const WITH_EPOCH = counterReads(true);
const WITHOUT_EPOCH = counterReads(false);
/** The most log rows one prune deletes: a backlog drains over several reads, none stalled long. */
export const PRUNE_CHUNK = 10_000;
/**
 * Deletes the oldest log rows past their retention, at most `PRUNE_CHUNK` (read by the primary
 * key in order, never the whole table), answering how many.
 */
const PRUNE_SQL = "WITH d AS (DELETE FROM api_key_change_log WHERE n IN (SELECT n FROM " +
  `api_key_change_log ORDER BY n LIMIT ${PRUNE_CHUNK}) AND created_at < now() - interval ` +
  "'5 minutes' RETURNING 1) SELECT count(*)::int AS n FROM d";
/**
 * A snapshot's transaction, bounded on the server too: a read waiting on a lock (a migration's)
 * is cancelled there at the deadline the feed gives up at, not left waiting after the client went.
 */
const SNAPSHOT_BEGIN_SQL = `BEGIN READ ONLY; SET LOCAL statement_timeout = ${TIMEOUT_MS}`;
const PROBE_SQL = "SELECT pg_notify($1, $2)";

/**
 * What the feed needs of a `pg` client (a `pg.Client` has it): connect, query,
 * the `notification`, `error` and `end` events, and `end`.
 */
export interface PostgresFeedClient {
  /** Opens the connection. */
  connect(): Promise<unknown>;
  /** Runs one statement. */
  query(text: string, values?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
  /** A notice on a channel this connection listens to. */
  on(
    event: "notification",
    listener: (message: { channel: string; payload?: string }) => void,
  ): unknown;
  /** The connection failed. */
  on(event: "error", listener: (error: Error) => void): unknown;
  /** The connection closed. */
  on(event: "end", listener: () => void): unknown;
  /** Closes the connection. */
  end(): Promise<unknown>;
}

/**
 * Options of `createPostgresFeed`: exactly one of `connectionString` and
 * `client`.
 */
export interface PostgresFeedOptions {
  /** Where to connect; the feed opens its own `pg.Client` (`application_name` `api-kit-change-feed`). */
  connectionString?: string;
  /**
   * Makes a new, unconnected client for each connection the feed opens (the
   * first, every reconnection and each `snapshot`); the feed connects and
   * ends it.
   */
  client?: () => PostgresFeedClient;
  /** Channel the triggers notify (default `api_key_changes`): a lower-case identifier. */
  channel?: string;
  /** Interval between two reads of the change log, in ms: 10 to 60,000 (default 500). */
  pollMs?: number;
}

/**
 * The PostgreSQL change feed: an `ApiKeyChangeFeed` that also lists the stored
 * prefixes (`snapshot`).
 */
export interface PostgresApiKeyChangeFeed extends ApiKeyChangeFeed {
  /**
   * Prefixes of every row of `api_keys` and the counter they are current at,
   * read in one statement on a connection of its own (made like the feed's,
   * ended after), so a slow snapshot never holds up the feed's reads; rejects
   * while the feed is not in sync.
   */
  snapshot(): Promise<ApiKeyFeedSnapshot>;
}

/** `stage failed (CODE)`: the SQLSTATE or system error code, else the error's name. */
function describe(stage: string, error: unknown): string {
  if (error instanceof FeedError) return error.message;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === "string" && /^[A-Z0-9_]{1,32}$/.test(code)) {
    return `${stage} failed (${code})`;
  }
  return `${stage} failed (${error instanceof Error ? error.name : typeof error})`;
}

/** Resolves after `ms`, or at once when `signal` aborts; leaves no timer behind. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done);
  });
}

/**
 * `promise`, rejected with a `FeedError` after `TIMEOUT_MS` or when `signal`
 * aborts; errors become `stage failed (…)`. A late rejection of `promise` is
 * swallowed.
 */
function step<T>(stage: string, promise: Promise<T>, signal?: AbortSignal): Promise<T> {
  promise.catch(() => {});
  return new Promise<T>((resolve, reject) => {
    const finish = (settle: () => void) => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", aborted);
      settle();
    };
    const aborted = () => finish(() => reject(new FeedError(`${stage} interrupted`)));
    const timer = setTimeout(
      () => finish(() => reject(new FeedError(`${stage} timed out`))),
      TIMEOUT_MS,
    );
    if (signal?.aborted) return aborted();
    signal?.addEventListener("abort", aborted);
    promise.then(
      (value) => finish(() => resolve(value)),
      (error) => finish(() => reject(new FeedError(describe(stage, error)))),
    );
  });
}

/** Destroys `client`'s socket when it exposes one (a `pg.Client`'s `connection.stream`). */
function destroySocket(client: PostgresFeedClient): void {
  try {
    const { connection } = client as { connection?: { stream?: { destroy?: unknown } } };
    const stream = connection?.stream;
    if (typeof stream?.destroy === "function") stream.destroy();
  } catch {
    // A custom client: its end() alone, within its deadline.
  }
}

/**
 * Ends `client`, whatever its `end()` does: throws, rejects, returns no promise or hangs. Its
 * socket, when it exposes one, is destroyed at once if it never `connected`, else once `end()`
 * fails or misses its deadline: a `pg.Client`'s `end()` waits for the peer to close the socket,
 * which a peer that never answered, or went silent, does not do.
 */
async function endQuietly(client: PostgresFeedClient, connected: boolean): Promise<void> {
  // end() is called at once (a throw rejects), so the socket is destroyed after it.
  const ending = step("end", new Promise((resolve) => resolve(client.end())));
  if (!connected) destroySocket(client);
  await ending.catch(() => destroySocket(client));
}

/** Reconnection delay after `failures` failed attempts: exponential, with jitter. */
function backoff(failures: number): number {
  const base = Math.min(RECONNECT_MAX_MS, RECONNECT_MIN_MS * 2 ** Math.min(failures, 16));
  return base / 2 + Math.random() * (base / 2);
}

/** Validates the options (a `TypeError` naming the option) and returns the client factory. */
function readOptions(options: PostgresFeedOptions): {
  makeClient: () => PostgresFeedClient;
  channel: string;
  pollMs: number;
} {
  if (typeof options !== "object" || options === null) {
    throw new TypeError("createPostgresFeed expects an options object");
  }
  const { connectionString, client } = options;
  if ((connectionString === undefined) === (client === undefined)) {
    throw new TypeError("createPostgresFeed needs exactly one of connectionString and client");
  }
  if (
    connectionString !== undefined && (typeof connectionString !== "string" || !connectionString)
  ) {
    throw new TypeError("createPostgresFeed connectionString must be a non-empty string");
  }
  if (client !== undefined && typeof client !== "function") {
    throw new TypeError("createPostgresFeed client must be a function returning a new pg client");
  }
  const channel = options.channel ?? DEFAULT_FEED_CHANNEL;
  if (typeof channel !== "string" || channel.length > 63 || !CHANNEL_NAME.test(channel)) {
    throw new TypeError(
      "createPostgresFeed channel must be a lower-case identifier ([a-z_][a-z0-9_]*)",
    );
  }
  const pollMs = options.pollMs ?? DEFAULT_FEED_POLL_MS;
  if (!Number.isInteger(pollMs) || pollMs < 10 || pollMs > 60_000) {
    throw new TypeError("createPostgresFeed pollMs must be an integer from 10 to 60000");
  }
  const makeClient = client ?? (() =>
    new pg.Client({
      connectionString,
      application_name: APPLICATION_NAME,
      keepAlive: true,
      connectionTimeoutMillis: TIMEOUT_MS,
    }));
  return { makeClient, channel, pollMs };
}

/** The feed behind `createPostgresFeed` (see `mod.ts`). */
export class PostgresChangeFeed implements PostgresApiKeyChangeFeed {
  readonly #listeners = new ChangeListeners();
  readonly #makeClient: () => PostgresFeedClient;
  readonly #channel: string;
  readonly #pollMs: number;
  readonly #stop = new AbortController();
  readonly #loop: Promise<void>;
  /** The statements of the connection in sync (while it is), for `snapshot`. */
  #live: { reads: CounterReads; signal: AbortSignal } | undefined;
  /** Snapshots being read, for `close` to wait for. */
  readonly #snapshots = new Set<Promise<unknown>>();
  /** Counter of the last change delivered (alone or within a reset). */
  #lastSeen: number | undefined;
  /** Epoch of the numbering `#lastSeen` belongs to (migration 0029); null where not known. */
  #epoch: string | null = null;
  /** A notice arrived since the last read began: read again at once. */
  #woken = false;
  /** Ends the wait for the next read (set while waiting). */
  #wake: (() => void) | undefined;
  /** Whether the probe notice came back on the last connection that probed (null: not known yet). */
  #noticesArrive: boolean | null = null;
  #pruneAt = 0;
  #pruneWarned = false;
  /** The triggers were found not firing since the last sync: changes may have gone unlogged. */
  #triggersLost = false;
  /** The triggers' row versions last read (`TRIGGER_VERSIONS_SQL`): another means they were altered. */
  #triggerVersions: unknown;
  /** When the feed last confirmed that every change committed before then was delivered. */
  #syncedAt = -Infinity;
  #unhealthySince: number | undefined = performance.now();
  #resets = 0;
  #reconnects = 0;
  #synced = false;
  #error: string | null = "connecting";

  /** Starts connecting at once; validates `options` first. */
  constructor(options: PostgresFeedOptions) {
    const { makeClient, channel, pollMs } = readOptions(options);
    this.#makeClient = makeClient;
    this.#channel = channel;
    this.#pollMs = pollMs;
    this.#loop = this.#run();
  }

  subscribe(listener: ApiKeyChangeListener): () => void {
    const remove = this.#listeners.add(listener);
    if (!this.#stop.signal.aborted) return remove;
    remove();
    return () => {};
  }

  status(): ApiKeyChangeFeedStatus {
    const now = performance.now();
    const closed = this.#stop.signal.aborted;
    return {
      healthy: this.#unhealthySince === undefined,
      stalenessMs: closed ? Infinity : now - this.#syncedAt,
      unhealthyForMs: this.#unhealthySince === undefined ? 0 : now - this.#unhealthySince,
      counter: this.#lastSeen ?? null,
      resets: this.#resets,
      reconnects: this.#reconnects,
      error: closed ? "closed" : this.#error,
      noticesArrive: this.#noticesArrive,
    };
  }

  async snapshot(): Promise<ApiKeyFeedSnapshot> {
    const live = this.#live;
    if (live === undefined) throw new FeedError("the change feed is not in sync");
    const reading = this.#readSnapshot(live.reads, live.signal);
    this.#snapshots.add(reading);
    try {
      return await reading;
    } finally {
      this.#snapshots.delete(reading);
    }
  }

  async close(): Promise<void> {
    if (!this.#stop.signal.aborted) {
      this.#unhealthySince ??= performance.now();
      this.#stop.abort();
    }
    this.#listeners.clear();
    await Promise.allSettled([this.#loop, ...this.#snapshots]);
  }

  /**
   * Connects a client of its own and reads the snapshot within one deadline, interrupted when the
   * feed's connection is lost; rejects a numbering the feed has not reached yet (its next read
   * resets).
   */
  async #readSnapshot(reads: CounterReads, signal: AbortSignal): Promise<ApiKeyFeedSnapshot> {
    const client = this.#newClient();
    let connected = false;
    client.on("error", () => {}); // a lost connection fails the read
    let rows: Record<string, unknown>[];
    try {
      ({ rows } = await step(
        "snapshot",
        Promise.resolve().then(async () => {
          await client.connect();
          connected = true;
          await client.query(SNAPSHOT_BEGIN_SQL); // ended with the client (read only)
          return await client.query(reads.snapshot);
        }),
        signal,
      ));
    } finally {
      await endQuietly(client, connected);
    }
    const prefixes = rows[0]?.prefixes;
    if (!Array.isArray(prefixes) || !prefixes.every((prefix) => typeof prefix === "string")) {
      throw new FeedError("snapshot failed (malformed result)");
    }
    const counter = parseCounter(rows[0].n);
    if (this.#renumbered(parseEpoch(rows[0].epoch))) {
      throw new FeedError("the change feed is not in sync");
    }
    return { counter, prefixes };
  }

  /** A new, unconnected client from the factory. */
  #newClient(): PostgresFeedClient {
    const made: unknown = this.#makeClient();
    if (typeof made !== "object" || made === null) {
      throw new FeedError("the client factory returned no client");
    }
    return made as PostgresFeedClient;
  }

  /** Whether `epoch` is known and not the one of the changes delivered (a counter restored). */
  #renumbered(epoch: string | null): boolean {
    return epoch !== null && this.#epoch !== null && epoch !== this.#epoch;
  }

  /** Connects, runs, and reconnects with backoff until closed. */
  async #run(): Promise<void> {
    let failures = 0;
    while (!this.#stop.signal.aborted) {
      const reachedSync = await this.#session();
      if (this.#stop.signal.aborted) break;
      failures = reachedSync ? 0 : failures + 1;
      await sleep(backoff(failures), this.#stop.signal);
    }
  }

  /**
   * One connection: connect, LISTEN, check the schema, probe, sync, then read
   * the log every `pollMs` or at once after a notice; whether it synced.
   */
  async #session(): Promise<boolean> {
    const lost = new AbortController();
    const stop = () => lost.abort();
    this.#stop.signal.addEventListener("abort", stop);
    const probe = `probe:${crypto.randomUUID()}`;
    let probeCame!: () => void;
    const probeArrived = new Promise<boolean>((resolve) => probeCame = () => resolve(true));
    let client: PostgresFeedClient | undefined;
    let connected = false;
    let reachedSync = false;
    try {
      client = this.#newClient();
      const drop = (why: string) => {
        if (lost.signal.aborted) return;
        this.#error = why;
        this.#unhealthySince ??= performance.now();
        lost.abort();
      };
      client.on("error", (error) => drop(describe("connection", error)));
      client.on("end", () => drop("connection closed"));
      client.on("notification", (message) => {
        if (lost.signal.aborted || message.channel !== this.#channel) return;
        if (message.payload === probe) probeCame();
        this.#wakeUp();
      });
      await step("connect", client.connect(), lost.signal);
      connected = true;
      await step("listen", client.query(`LISTEN ${this.#channel}`), lost.signal);
      const reads = await this.#checkSchema(client, lost.signal) ? WITH_EPOCH : WITHOUT_EPOCH;
      this.#probe(client, probe, probeArrived, lost.signal);
      let startedAt = performance.now();
      // Where the last connection left the counter, unless the triggers did not fire since.
      const before = this.#triggersLost ? undefined : this.#lastSeen;
      this.#firstSync(await this.#readCounter(client, reads, lost.signal), before, startedAt);
      this.#live = { reads, signal: lost.signal };
      reachedSync = true;
      while (true) {
        await this.#nextRead(lost.signal);
        if (lost.signal.aborted) break;
        startedAt = performance.now();
        await this.#catchUp(client, reads, lost.signal);
        this.#syncedAt = startedAt;
        if (startedAt >= this.#pruneAt) {
          // A full chunk deleted: more are due, pruned at the next read.
          const full = await this.#prune(client, lost.signal);
          this.#pruneAt = full ? startedAt : startedAt + PRUNE_EVERY_MS;
        }
      }
    } catch (error) {
      if (!lost.signal.aborted) this.#error = describe("connection", error);
    } finally {
      if (!this.#stop.signal.aborted) this.#unhealthySince ??= performance.now();
      lost.abort();
      this.#stop.signal.removeEventListener("abort", stop);
      this.#live = undefined;
      this.#wake = undefined;
      if (client !== undefined) await endQuietly(client, connected);
    }
    return reachedSync;
  }

  /**
   * Fails unless the change log exists and the three triggers notifying this
   * channel fire on ordinary writes (enabled, or enabled always); whether the
   * counter has its epoch (migration 0029).
   */
  async #checkSchema(client: PostgresFeedClient, signal: AbortSignal): Promise<boolean> {
    const { rows } = await step("check", client.query(CHECK_TRIGGERS_SQL, [this.#channel]), signal);
    if (rows[0]?.log !== true) {
      throw new FeedError("the change log api_key_change_log is missing (migration 0005)");
    }
    this.#checkTriggers(rows[0]?.n);
    this.#triggersAltered(rows[0]?.versions);
    return rows[0]?.epoch === true;
  }

  /**
   * Whether the triggers were altered since the last read (their row versions changed: disabled,
   * maybe enabled again in the same transaction, around writes no trigger logged); if so, the
   * next sync resets.
   */
  #triggersAltered(versions: unknown): boolean {
    const altered = this.#triggerVersions !== undefined && versions !== this.#triggerVersions;
    this.#triggerVersions = versions;
    if (altered) this.#triggersLost = true;
    return altered;
  }

  /**
   * Fails unless `count` triggers fire is `TRIGGER_COUNT`; a failure leaves the counter unknown,
   * so the next sync resets.
   */
  #checkTriggers(count: unknown): void {
    if (count === TRIGGER_COUNT) return;
    this.#triggersLost = true;
    throw new FeedError(
      `the change-feed triggers on api_keys for channel ${this.#channel} are missing or disabled` +
        " (or enabled for replicas only)",
    );
  }

  /**
   * Sends a notice to itself and records whether it came back within
   * `PROBE_TIMEOUT_MS`; warns when it did not (a pooler in transaction mode
   * passes `LISTEN` and delivers nothing). A failed send is left to the reads.
   */
  async #probe(
    client: PostgresFeedClient,
    probe: string,
    arrived: Promise<boolean>,
    signal: AbortSignal,
  ): Promise<void> {
    try {
      await step("probe", client.query(PROBE_SQL, [this.#channel, probe]), signal);
    } catch {
      return;
    }
    const came = await Promise.race([
      arrived,
      sleep(PROBE_TIMEOUT_MS, signal).then(() => false),
    ]);
    if (signal.aborted) return;
    if (!came && this.#noticesArrive !== false) {
      logLine(
        console.warn,
        `api-keys: the change feed received no notice within ${PROBE_TIMEOUT_MS} ms of sending` +
          ` one on channel ${this.#channel} (a pooler in transaction mode?); it reads changes` +
          ` every pollMs (${this.#pollMs} ms) alone. Give it a direct (session) connection.`,
      );
    }
    this.#noticesArrive = came;
  }

  async #readCounter(
    client: PostgresFeedClient,
    reads: CounterReads,
    signal: AbortSignal,
  ): Promise<{ counter: number; epoch: string | null }> {
    const { rows } = await step("poll", client.query(reads.counter), signal);
    if (rows.length !== 1) throw new FeedError("api_key_change_counter must have exactly one row");
    return { counter: parseCounter(rows[0].n), epoch: parseEpoch(rows[0].epoch) };
  }

  /** Resolves after `pollMs`, at once if a notice arrived since the last read began, or on abort. */
  #nextRead(signal: AbortSignal): Promise<void> {
    if (this.#woken) {
      this.#woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        this.#wake = undefined;
        this.#woken = false;
        resolve();
      };
      const timer = setTimeout(done, this.#pollMs);
      signal.addEventListener("abort", done);
      this.#wake = done;
    });
  }

  /** A notice: read at once, or once more after the read in flight (never more than one pending). */
  #wakeUp(): void {
    this.#woken = true;
    this.#wake?.();
  }

  /**
   * Reads the counter and the log rows after the last change delivered, and
   * delivers them in order (after checking the triggers still fire, in the same
   * statement); a missing row (pruned, or a counter moved by
   * hand) or a backlog over `LOG_READ_LIMIT` becomes a reset up to the counter,
   * and so does a counter of another numbering (its row lost and restored,
   * which restarts it at 0): below the last change delivered, or of another
   * epoch (migration 0029); the feed then follows the new numbering.
   */
  async #catchUp(
    client: PostgresFeedClient,
    reads: CounterReads,
    signal: AbortSignal,
  ): Promise<void> {
    const { rows } = await step(
      "poll",
      client.query(reads.log, [String(this.#lastSeen), this.#channel]),
      signal,
    );
    if (rows.length === 0) throw new FeedError("api_key_change_counter must have exactly one row");
    this.#checkTriggers(rows[0].triggers);
    const counter = parseCounter(rows[0].counter);
    const epoch = parseEpoch(rows[0].epoch);
    const renumbered = counter < this.#lastSeen! || this.#renumbered(epoch);
    this.#epoch = epoch;
    if (this.#triggersAltered(rows[0].versions)) {
      this.#triggersLost = false;
      this.#reset("missed", counter);
      return;
    }
    if (renumbered) {
      // Rows after the last change delivered may be of either numbering: none applies.
      this.#reset("missed", counter);
      return;
    }
    for (const row of rows) {
      if (row.n === null || this.#lastSeen! >= counter) break;
      const change = parseLoggedChange(row);
      if (change.counter !== this.#lastSeen! + 1) break;
      this.#lastSeen = change.counter;
      if (change.prefix === null) {
        this.#reset(change.kind === "truncated" ? "truncated" : "unnamed", change.counter);
      } else {
        const { kind, prefix, counter } = change;
        this.#listeners.deliver({ kind: kind as ApiKeyChangeKind, prefix, counter });
      }
    }
    if (counter > this.#lastSeen!) this.#reset("missed", counter);
  }

  /**
   * Deletes log rows past their retention, `PRUNE_CHUNK` at most; whether it deleted that many.
   * A failure (no DELETE privilege) is warned about once.
   */
  async #prune(client: PostgresFeedClient, signal: AbortSignal): Promise<boolean> {
    try {
      const { rows } = await step("prune", client.query(PRUNE_SQL), signal);
      return rows[0]?.n === PRUNE_CHUNK;
    } catch (error) {
      if (signal.aborted || this.#pruneWarned) return false;
      this.#pruneWarned = true;
      logLine(
        console.warn,
        `api-keys: the change feed cannot prune api_key_change_log (${describe("prune", error)});` +
          " delete its rows older than 5 minutes another way (docs/operations.md)",
      );
      return false;
    }
  }

  /**
   * The first counter read of a connection: unless the counter is where the
   * previous connection left it, in the same numbering, changes may have been
   * missed (or, on the first connection, entries filled before it), so reset.
   */
  #firstSync(
    { counter, epoch }: { counter: number; epoch: string | null },
    before: number | undefined,
    startedAt: number,
  ): void {
    const renumbered = this.#renumbered(epoch);
    this.#lastSeen = counter;
    this.#epoch = epoch;
    if (counter !== before || renumbered) this.#reset("missed", counter);
    this.#triggersLost = false;
    this.#syncedAt = startedAt;
    this.#unhealthySince = undefined;
    this.#error = null;
    if (this.#synced) this.#reconnects++;
    this.#synced = true;
  }

  #reset(reason: ApiKeyFeedResetReason, counter: number): void {
    this.#lastSeen = counter;
    this.#resets++;
    this.#listeners.deliver({ kind: "reset", prefix: null, counter, reason });
  }
}
