import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import { createClient } from "redis";
import {
  createRedisRateLimitStore,
  type RedisScriptArguments,
  type RedisScriptClient,
} from "../../../rate_limits/redis/mod.ts";
import { CHECK_SCRIPT, TIME_SCRIPT } from "../../../rate_limits/redis/_script.ts";
import { isWellFormed } from "../../../rate_limits/_well_formed.ts";
import { assertName, assertSubject } from "../../../rate_limits/_checks.ts";
import type { RateLimitCounter } from "../../../rate_limits/store.ts";

const counters = [
  { kind: "window" as const, subject: "s", name: "a", limit: 5, windowMs: 1_000, cost: 1 },
  { kind: "window" as const, subject: "s", name: "b", limit: 1, windowMs: 500, cost: 0 },
];
const SERVER_AHEAD = 10_000;

/**
 * A fake node-redis client answering the time script and `check` for the check script, its
 * server's clock `server.ahead` ms ahead of this process's.
 */
function fakeClient(
  check: (call: RedisScriptArguments) => unknown[],
  server = { ahead: SERVER_AHEAD },
) {
  const calls: { script: string; call: RedisScriptArguments }[] = [];
  const hashes = new Map<string, string>();
  const client = Object.assign(new EventEmitter(), {
    isOpen: true,
    isReady: true,
    evalSha: (sha: string, call: RedisScriptArguments) =>
      hashes.has(sha)
        ? client.eval(hashes.get(sha)!, call)
        : Promise.reject(new Error("NOSCRIPT No matching script.")),
    eval: async (script: string, call: RedisScriptArguments) => {
      const digest = await crypto.subtle.digest("SHA-1", new TextEncoder().encode(script));
      hashes.set(
        [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join(""),
        script,
      );
      calls.push({ script, call });
      const now = Date.now() + server.ahead;
      if (script === TIME_SCRIPT) return now;
      return [...check(call), now];
    },
  });
  return { client, calls };
}

/**
 * A fake client whose sends fail with `error`: each script's first (`evalSha`), or its `EVAL`
 * after a NOSCRIPT (`eval`: the clock is read).
 */
function failingClient(error: unknown, failing: "evalSha" | "eval") {
  const { client } = fakeClient(() => []);
  const base = client.eval;
  client.evalSha = () =>
    Promise.reject(failing === "evalSha" ? error : new Error("NOSCRIPT No matching script."));
  client.eval = (script, call) =>
    script === TIME_SCRIPT ? base(script, call) : Promise.reject(error);
  return client;
}

// The scripts run on real Redis in tests/limits/stores_test.ts; here, what the store sends.
describe("createRedisRateLimitStore", () => {
  it("reads the server's clock first, then sends ONE script per batch with each deadline on the server's clock", async () => {
    const { client, calls } = fakeClient(({ arguments: args }) =>
      args[0] === "2" ? [1, 1, 4, 1_000, 1, 1, 0, 0] : [1, 1, 4, 1_000, 1, 1, 0]
    );
    const store = createRedisRateLimitStore({ client, prefix: "t:" });
    const deadline = Date.now() + 50;
    const { results } = await store.checkBatch([
      { counters, deadline },
      { counters: counters.slice(0, 1), deadline },
    ]);
    // A window counter's answer is its policy result (the limiter hands it on, unchecked).
    assert.deepEqual(results, [
      [
        { name: "a", limit: 5, windowMs: 1_000, remaining: 4, resetMs: 1_000, allowed: true },
        { name: "b", limit: 1, windowMs: 500, remaining: 1, resetMs: 0, allowed: true },
      ],
      null,
    ]);
    assert.ok(isWellFormed(store.checkBatch));
    assert.deepEqual(calls.map((c) => c.script === TIME_SCRIPT ? "time" : "check"), [
      "time",
      "check",
    ]);
    const { keys, arguments: args } = calls[1].call;
    // One key per window counter, keyed by (slot, subject, name, windowMs).
    assert.deepEqual(keys, ["t:{s}:s:a:1000:w", "t:{s}:s:b:500:w", "t:{s}:s:a:1000:w"]);
    assert.equal(args[0], "2");
    // The deadline moved onto the server's clock, never later than the true instant.
    const sent = Number(args[1]);
    assert.ok(sent <= deadline + SERVER_AHEAD && sent > deadline + SERVER_AHEAD - 1_000, `${sent}`);
    assert.deepEqual(args.slice(2, 10), ["2", "0", "5", "1000", "1", "1", "500", "0"]);
    assert.equal(args[11], "1");
    await store.checkBatch([{ counters, deadline }]);
    assert.equal(calls.length, 3, "the offset is known: no second clock read");
    assert.equal(calls[2].script, CHECK_SCRIPT);
  });

  it("follows a server clock stepped back at the first reply after the step: the next deadline sent is on the new clock, a check's and a credit change's", async () => {
    const server = { ahead: SERVER_AHEAD };
    // `ready()`'s check (a window counter), its deadline passed, is not applied (as the script's).
    const { client, calls } = fakeClient(
      ({ keys, arguments: [deadline] }) =>
        keys[0].endsWith(":w") && Number(deadline) <= Date.now() + server.ahead
          ? [0]
          : [1, 1, 4, 1_000],
      server,
    );
    const store = createRedisRateLimitStore({ client, prefix: "t:" });
    const credit = { kind: "credit" as const, subject: "s", name: "c", cost: 0, initial: 9 };
    /** Each call resolves to the deadline it sent. */
    const check = async (deadline: number) => {
      await store.checkBatch([{ counters: counters.slice(0, 1), deadline }]);
      return Number(calls.at(-1)!.call.arguments[0]);
    };
    const change = async (deadline: number) => {
      await store.changeCredits(credit, { add: 1 }, deadline);
      return Number(calls.at(-1)!.call.arguments[0]);
    };
    await store.ready();
    for (const [first, next] of [[change, check], [check, change]]) {
      server.ahead -= 5_000; // the server's clock steps back 5 s (NTP, a failover to a server behind)
      await first(Date.now() + 5_000); // its reply shows the step
      const deadline = Date.now() + 1_000;
      const late = await next(deadline) - (deadline + server.ahead);
      assert.ok(late <= 0 && late > -1_000, `sent ${late} ms later than the true instant`);
    }
  });

  it("sends through a client's sendCommand(args, options) when it has one (EVALSHA, then EVAL when the server lacks the script), without the client's command timeout; a cluster's goes through evalSha", async () => {
    const { client, calls } = fakeClient(() => [1, 1, 4, 1_000]);
    const sent: string[][] = [];
    const options: unknown[] = [];
    const raw = Object.assign(client, {
      sendCommand: (args: string[], commandOptions?: unknown) => {
        sent.push(args);
        options.push(commandOptions);
        const [verb, script, n] = args;
        const call = { keys: args.slice(3, 3 + Number(n)), arguments: args.slice(3 + Number(n)) };
        return verb === "EVAL" ? client.eval(script, call) : client.evalSha(script, call);
      },
    });
    const store = createRedisRateLimitStore({ client: raw, prefix: "t:" });
    const deadline = Date.now() + 5_000;
    for (let i = 0; i < 2; i++) {
      const { results } = await store.checkBatch([{ counters: counters.slice(0, 1), deadline }]);
      assert.deepEqual(results, [[
        { name: "a", limit: 5, windowMs: 1_000, remaining: 4, resetMs: 1_000, allowed: true },
      ]]);
    }
    // The clock read (EVALSHA refused, then EVAL), then the check script the same way, then EVALSHA alone.
    assert.deepEqual(sent.map((args) => args[0]), [
      "EVALSHA",
      "EVAL",
      "EVALSHA",
      "EVAL",
      "EVALSHA",
    ]);
    assert.equal(sent[3][1], CHECK_SCRIPT);
    assert.match(sent[4][1], /^[0-9a-f]{40}$/);
    assert.deepEqual(sent[4].slice(2, 4), ["1", "t:{s}:s:a:1000:w"]);
    // One check of one window counter in four words: its deadline, limit, window and cost.
    assert.deepEqual(sent[4].slice(4), [calls[2].call.arguments[0], "5", "1000", "1"]);
    // No client-side timer per command (node-redis 6 arms one by default): the door bounds each call.
    assert.equal(options.length, sent.length);
    for (const o of options) assert.deepEqual(o, { timeout: undefined });

    const clusterSent: unknown[] = [];
    const { client: cluster, calls: clusterCalls } = fakeClient(() => [1, 1, 4, 1_000]);
    const clustered = createRedisRateLimitStore({
      client: Object.assign(cluster, {
        sendCommand: (...args: unknown[]) => (clusterSent.push(args), Promise.resolve(null)),
      }),
      clustered: true,
    });
    await clustered.checkBatch([{ counters: counters.slice(0, 1), deadline }]);
    assert.equal(clusterSent.length, 0);
    assert.equal(clusterCalls.length, 2);
  });

  it("rejects at once, sending nothing, while the client is not ready", async () => {
    const { client, calls } = fakeClient(() => []);
    client.isReady = false;
    const store = createRedisRateLimitStore({ client });
    await assert.rejects(
      store.checkBatch([{ counters, deadline: Date.now() + 50 }]),
      /not connected now; nothing was sent/,
    );
    const credit = { kind: "credit" as const, subject: "s", name: "c", cost: 0, initial: 1 };
    await assert.rejects(
      store.changeCredits(credit, { add: 1 }, Date.now() + 50),
      /nothing was sent/,
    );
    await assert.rejects(store.readCredits([credit]), /nothing was sent/);
    assert.equal(calls.length, 0);
  });

  it("resolves null for a credit change past its deadline", async () => {
    const { client } = fakeClient(() => []);
    const base = client.eval;
    client.eval = (script, call) =>
      script === TIME_SCRIPT ? base(script, call) : Promise.resolve([0, 0, 0, 0, Date.now()]);
    const store = createRedisRateLimitStore({ client });
    const credit = { kind: "credit" as const, subject: "s", name: "c", cost: 0, initial: 1 };
    assert.equal(await store.changeCredits(credit, { add: 1 }, Date.now()), null);
  });

  it("listens for the client's errors itself, one line per interval, and stops on close", () => {
    const { client } = fakeClient(() => []);
    const lines: string[] = [];
    const store = createRedisRateLimitStore({ client, logger: (line) => lines.push(line) });
    for (let i = 0; i < 5; i++) client.emit("error", new Error("connect ECONNREFUSED"));
    assert.deepEqual(lines, ["rate-limit store redis: client error: connect ECONNREFUSED"]);
    store.close();
    assert.equal(client.listenerCount("error"), 0);
    assert.throws(() => client.emit("error", new Error("unheard")), /unheard/);
  });

  it("ready(): a client never connected or of the wrong kind is a TypeError naming the fix; a server down rejects", async () => {
    const { client } = fakeClient(() => []);
    client.isOpen = false;
    await assert.rejects(
      createRedisRateLimitStore({ client }).ready(),
      (e) => e instanceof TypeError && /client\.connect\(\)/.test(e.message),
    );
    const odd: RedisScriptClient = {
      evalSha: () => Promise.resolve("OK"),
      eval: () => Promise.resolve("OK"),
    };
    await assert.rejects(createRedisRateLimitStore({ client: odd }).ready(), TypeError);
    const down: RedisScriptClient = {
      evalSha: () => Promise.reject(new Error("ECONNREFUSED")),
      eval: () => Promise.resolve([]),
    };
    await assert.rejects(
      createRedisRateLimitStore({ client: down }).ready(),
      (e) => !(e instanceof TypeError) && /ECONNREFUSED/.test((e as Error).message),
    );
  });

  it("an error reply that is a misconfiguration or a bug (a value it cannot read, an ACL or password refused, a script failing as it runs) is a TypeError; an outage's reply is passed on as it is", async () => {
    const f = "f_dbad123b805f8a6a8242554ec4302e164def5411";
    const at = "script: dbad123b805f8a6a8242554ec4302e164def5411, on @user_script:12.";
    const bugs = [
      `UNREADABLE a window counter is not in its layout ${at}`,
      `WRONGTYPE Operation against a key holding the wrong kind of value ${at}`,
      "NOPERM this user has no permissions to access one of the keys used as arguments",
      "NOPERM this user has no permissions to run the 'evalsha' command",
      "NOAUTH Authentication required.",
      "WRONGPASS invalid username-password pair or user is disabled.",
      // A cluster client given as a single server's: one batch's keys in several slots.
      "CROSSSLOT Keys in request don't hash to the same slot",
      // Redis 7: a Lua error, a command the ACL denies the script, a command refusing its input.
      `ERR user_script:12: attempt to compare nil with number ${at}`,
      `ERR The user executing the script can't run this command or subcommand ${at}`,
      `ERR invalid expire time in 'set' command ${at}`,
      // Redis 6 wraps every error of a script in one ERR.
      `ERR Error running script (call to ${f}): @user_script:12: user_script:12: attempt to compare nil with number`,
      `ERR Error running script (call to ${f}): error in error handling`,
    ];
    const outages = [
      "LOADING Redis is loading the dataset in memory",
      "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.",
      "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.",
      "CLUSTERDOWN The cluster is down",
      "TRYAGAIN Multiple keys request during rehashing of slot",
      `READONLY You can't write against a read only replica. ${at}`,
      `OOM command not allowed when used memory > 'maxmemory'. ${at}`,
      "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk.",
      "NOREPLICAS Not enough good replicas to write.",
      `ERR Script attempted to access a non local key in a cluster node ${at}`,
      "ERR max number of clients reached",
      // Redis 6: an outage met by a script, inside its ERR.
      `ERR Error running script (call to ${f}): @user_script:50: @user_script: 50: -READONLY You can't write against a read only replica.`,
      `ERR Error running script (call to ${f}): @user_script:9: @user_script: 9: -OOM command not allowed when used memory > 'maxmemory'.`,
      `ERR Error running script (call to ${f}): @user_script:9: @user_script: 9: Lua script attempted to access a non local key in a cluster node`,
      `ERR Error running script (call to ${f}): @user_script:9: @user_script: 9: Lua script attempted to execute a command while the cluster is down`,
      "Socket closed unexpectedly",
    ];
    // A cluster's redirects: outages to a cluster client, a misconfiguration to a single server's
    // (a plain client sent to one node of a cluster: a check of another node's slot never counts).
    const redirects = ["MOVED 3999 127.0.0.1:6381", "ASK 3999 127.0.0.1:6381"];
    const credit = { kind: "credit" as const, subject: "s", name: "c", cost: 0, initial: 1 };
    for (
      const [reply, clustered] of [...bugs, ...outages, ...redirects].flatMap((r) => [
        [r, false] as const,
        [r, true] as const,
      ])
    ) {
      const error = new Error(reply);
      const bug = bugs.includes(reply) || (!clustered && redirects.includes(reply));
      for (const failing of ["evalSha", "eval"] as const) {
        const client = failingClient(error, failing);
        const store = createRedisRateLimitStore({ client, clustered });
        const deadline = Date.now() + 5_000;
        for (
          const call of [
            () => store.checkBatch([{ counters, deadline }]),
            () => store.changeCredits(credit, { add: 1 }, deadline),
            () => store.readCredits([credit]),
          ]
        ) {
          const rejected = await call().then(() => undefined, (e: unknown) => e);
          if (bug) {
            assert.ok(rejected instanceof TypeError, `${failing}: ${reply} (${clustered})`);
            assert.ok(rejected.cause === error && rejected.message.includes(reply.slice(0, 20)));
          } else {
            assert.ok(rejected === error, `${failing}: ${reply} (${clustered})`);
          }
        }
      }
    }
  });

  it("ready(): reads the clock, then sends the check script once, on one key under the prefix with a deadline passed; a reply other than that check's null is a TypeError", async () => {
    const { client, calls } = fakeClient(() => [0]);
    await createRedisRateLimitStore({ client, prefix: "t:" }).ready();
    const sent = calls.map((c) => c.script === CHECK_SCRIPT ? "check" : c.script === TIME_SCRIPT);
    assert.deepEqual(sent, [true, true, true, "check"]);
    const { keys, arguments: args } = calls[3].call;
    assert.equal(keys.length, 1);
    assert.ok(keys[0].startsWith("t:{"), keys[0]);
    // One check of one window counter (four words), its deadline before the server's time now.
    assert.equal(args.length, 4);
    assert.ok(Number(args[0]) < Date.now() + SERVER_AHEAD - 1_000, args[0]);
    const applied = fakeClient(() => [1, 1, 0, 0]).client;
    await assert.rejects(createRedisRateLimitStore({ client: applied }).ready(), TypeError);
  });

  it("rejects with a client's error as it is when its message cannot be read (a revoked Proxy): the failure policy's, not a TypeError", async () => {
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    for (const failing of ["evalSha", "eval"] as const) {
      const store = createRedisRateLimitStore({ client: failingClient(proxy, failing) });
      const rejected = await store.checkBatch([{ counters, deadline: Date.now() + 50 }]).then(
        () => ({ error: "none" }),
        (error: unknown) => ({ error }),
      );
      // Compared by identity alone: anything that reads the proxy (a thenable check) throws.
      assert.ok(rejected.error === proxy, failing);
    }
  });

  it("keys no two counters alike: every (slot, subject, name, window) the limiter accepts has a key of its own", async () => {
    /** Whether `check` accepts `value` (a subject or slot, a name). */
    const valid = (check: () => unknown) => {
      try {
        check();
        return true;
      } catch {
        return false;
      }
    };
    // Every string of 1-3 of these pieces: the key's own separators and hash-tag delimiters.
    const pieces = ["a", ":", "{", "}"];
    let texts = [""];
    const strings: string[] = [];
    for (let length = 1; length <= 3; length++) {
      texts = texts.flatMap((t) => pieces.map((p) => t + p));
      strings.push(...texts);
    }
    // And the reviewer's pair: tenant "acme" user "alice}", and subject "acme}:alice" alone.
    strings.push("acme}:alice", "alice}", "acme", "acme:alice");
    const subjects = strings.filter((s) => valid(() => assertSubject(s)));
    const slots = [undefined, ...subjects];
    const names = ["a", "c", "w", "a.b"].filter((n) => valid(() => assertName(n, "name")));
    const counters: RateLimitCounter[] = [];
    const identities: string[] = [];
    for (const slot of slots) {
      for (const subject of subjects) {
        for (const name of names) {
          const at = slot === undefined ? {} : { slot };
          counters.push({
            kind: "window",
            subject,
            ...at,
            name,
            limit: 1,
            windowMs: 1_000,
            cost: 1,
          });
          // A window counter's slot defaults to its subject: one counter either way.
          identities.push(JSON.stringify(["w", slot ?? subject, subject, name, 1_000]));
          counters.push({ kind: "credit", subject, ...at, name, cost: 1, initial: 1 });
          identities.push(JSON.stringify(["c", slot ?? null, subject, name]));
        }
      }
    }
    const keys: string[] = [];
    const client: RedisScriptClient = {
      evalSha: () => Promise.reject(new Error("NOSCRIPT No matching script.")),
      eval: (script, call) => {
        if (script === TIME_SCRIPT) return Promise.resolve(Date.now());
        keys.push(...call.keys);
        return Promise.reject(new Error("keys read"));
      },
    };
    const store = createRedisRateLimitStore({ client, prefix: "t:" });
    const deadline = Date.now() + 60_000;
    await assert.rejects(
      store.checkBatch(counters.map((c) => ({ counters: [c], deadline }))),
      /keys read/,
    );
    assert.equal(keys.length, counters.length);
    const owner = new Map<string, string>();
    for (let i = 0; i < keys.length; i++) {
      const other = owner.get(keys[i]);
      assert.ok(
        other === undefined || other === identities[i],
        `${keys[i]}: ${other} and ${identities[i]}`,
      );
      owner.set(keys[i], identities[i]);
    }
  });

  it("rejects on an unexpected reply (a short one, a number that is not one), and throws a TypeError without a client", async () => {
    for (const reply of [[1, 1], [1, 1, "four", 1_000, 1, 1, 0], [1, 1, 4, Infinity, 1, 1, 0]]) {
      const { client } = fakeClient(() => reply);
      await assert.rejects(
        createRedisRateLimitStore({ client }).checkBatch([{ counters, deadline: Date.now() + 50 }]),
        TypeError,
      );
    }
    assert.throws(() => createRedisRateLimitStore({} as never), TypeError);
  });

  it("says to pass { client } when given a node-redis client in place of its options, in one short line", () => {
    const client = createClient({ url: "redis://127.0.0.1:1" }); // never connected
    assert.throws(() => createRedisRateLimitStore(client as never), {
      name: "TypeError",
      message: "createRedisRateLimitStore takes options: pass the client as `{ client }`",
    });
  });

  it("refuses an unknown option, a non-boolean clustered and a logger that is not a function by name, before listening to the client", () => {
    const { client } = fakeClient(() => []);
    assert.throws(
      () => createRedisRateLimitStore({ client, clusterd: true } as never),
      { name: "TypeError", message: /^createRedisRateLimitStore: unknown option `clusterd`/ },
    );
    for (const clustered of ["true", 1, null]) {
      assert.throws(
        () => createRedisRateLimitStore({ client, clustered } as never),
        { name: "TypeError", message: /^createRedisRateLimitStore: clustered must be a boolean/ },
      );
    }
    // A prefix is written before the hash tag: a brace in it would make it the tag (`rl:{}:`:
    // every key of a check in another slot, CROSSSLOT, passed uncounted under `open`).
    for (const prefix of ["rl:{}:", "{t}:", "a}", "rl:\n", "\ud800", 5, "x".repeat(65)]) {
      assert.throws(
        () => createRedisRateLimitStore({ client, prefix } as never),
        { name: "TypeError", message: /^createRedisRateLimitStore: prefix must be/ },
      );
    }
    assert.throws(
      () => createRedisRateLimitStore({ client, logger: "console.warn" } as never),
      { name: "TypeError", message: /^createRedisRateLimitStore: logger must be a function$/ },
    );
    assert.equal(client.listenerCount("error"), 0);
    for (const clustered of [true, false, undefined]) {
      createRedisRateLimitStore({ client, prefix: "t:", clustered, logger: () => {} }).close();
    }
  });
});
