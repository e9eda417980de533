import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import { reportErrors } from "../../rate_limits/_report.ts";

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
