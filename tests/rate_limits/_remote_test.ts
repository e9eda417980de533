import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import { byKind, reportErrors } from "../../rate_limits/_remote.ts";
import type { RateLimitCounter } from "../../rate_limits/store.ts";
import { collectUnhandledRejections } from "../reliability/harness.ts";

describe("reportErrors", () => {
  it("keeps an error event from throwing, logs one line per interval with the count left out", () => {
    const client = new EventEmitter();
    const lines: string[] = [];
    const stop = reportErrors(client, "redis", (line) => lines.push(line), 0);
    client.emit("error", Object.assign(new AggregateError([]), { code: "ECONNREFUSED" }));
    assert.deepEqual(lines, ["rate-limit store redis: client error: ECONNREFUSED"]);
    stop();
    assert.equal(client.listenerCount("error"), 0);
  });

  it("a logger that throws or rejects (an async log client whose service is down) is contained: no unhandled rejection", async () => {
    const rejections = collectUnhandledRejections();
    const client = new EventEmitter();
    const stops = [
      reportErrors(client, "redis", () => Promise.reject(new Error("log service down")), 0),
      reportErrors(client, "redis", () => {
        throw new Error("log service down");
      }, 0),
    ];
    client.emit("error", new Error("ECONNRESET"));
    await new Promise((resolve) => setTimeout(resolve, 10));
    await rejections.stop();
    for (const stop of stops) stop();
    assert.deepEqual(rejections.reasons, []);
  });

  it("an error event whose message cannot be read (a revoked Proxy, a throwing getter) is logged as unknown, never thrown", () => {
    const client = new EventEmitter();
    const lines: string[] = [];
    reportErrors(client, "redis", (line) => lines.push(line), 0);
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    client.emit("error", proxy);
    client.emit("error", {
      get message(): string {
        throw new Error("getter");
      },
    });
    client.emit("error", new Error("x".repeat(300)));
    assert.deepEqual(lines, [
      "rate-limit store redis: client error: unknown",
      "rate-limit store redis: client error: unknown",
      `rate-limit store redis: client error: ${"x".repeat(200)}`,
    ]);
  });

  it("contains a throwing logger, counts what it left out, and ignores a client without events", () => {
    const client = new EventEmitter();
    let calls = 0;
    reportErrors(client, "postgres", () => {
      calls++;
      throw new Error("logger down");
    }, 60_000);
    client.emit("error", new Error("a"));
    client.emit("error", new Error("b"));
    assert.equal(calls, 1);
    assert.doesNotThrow(() => reportErrors({}, "redis")());
  });
});

describe("byKind", () => {
  it("splits windows from credits and puts answers back in the order given", () => {
    const w = (name: string): RateLimitCounter => ({
      kind: "window",
      subject: "k",
      name,
      limit: 1,
      windowMs: 1_000,
      cost: 1,
    });
    const c = (name: string): RateLimitCounter => ({
      kind: "credit",
      subject: "k",
      name,
      cost: 1,
      initial: 1,
    });
    const { windows, credits, inOrder } = byKind([c("c1"), w("w1"), c("c2"), w("w2")]);
    assert.deepEqual(windows.map((x) => x.name), ["w1", "w2"]);
    assert.deepEqual(credits.map((x) => x.name), ["c1", "c2"]);
    assert.deepEqual(inOrder(["w1", "w2", "c1", "c2"]), ["c1", "w1", "c2", "w2"]);
  });
});
