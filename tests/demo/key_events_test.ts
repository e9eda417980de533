/** The demo's log lines of key lifecycle events (demo/key_events.ts). */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { ApiKeyEvent } from "../../api_keys/mod.ts";
import { formatKeyEvent, keyEventLogger } from "../../demo/key_events.ts";

const at = new Date("2030-01-01T00:00:00.000Z");
const common = { at, tenantId: "demo", environment: "live" as const };

describe("demo key event log", () => {
  it("writes expiry notices, waiting rotations and completed rotations, with prefixes only", () => {
    const lines: string[] = [];
    const log = keyEventLogger((line) => lines.push(line));
    const events: ApiKeyEvent[] = [
      {
        ...common,
        type: "api_key.expiring",
        keyId: "k1",
        prefix: "AbCdEfGhIjKl",
        expiresAt: new Date("2030-01-02T00:00:00.000Z"),
        thresholdMs: 86_400_000,
      },
      {
        ...common,
        type: "api_key.rotated",
        oldKeyId: "k1",
        oldPrefix: "AbCdEfGhIjKl",
        newKeyId: "k2",
        newPrefix: "MnOpQrStUvWx",
        scopes: ["projects:read"],
        graceExpiresAt: new Date("2030-01-01T02:30:00.000Z"),
        graceStarts: "first-use",
        createdBy: null,
      },
      {
        ...common,
        type: "api_key.rotation_completed",
        oldKeyId: "k1",
        oldPrefix: "AbCdEfGhIjKl",
        newKeyId: "k2",
        rotatedAt: at,
        endedAt: new Date("2030-01-01T01:00:00.000Z"),
      },
      {
        ...common,
        type: "api_key.expiring",
        keyId: "k3",
        prefix: "ZyXwVuTsRqPo",
        expiresAt: new Date("2030-01-01T00:01:30.000Z"),
        thresholdMs: 90_000,
      },
    ];
    for (const event of events) log(event);
    assert.deepEqual(lines, [
      "expiry notice: key AbCdEfGhIjKl (tenant demo, live) expires within 1 day, at 2030-01-02T00:00:00.000Z",
      "rotation waiting: key AbCdEfGhIjKl works until the first use of MnOpQrStUvWx plus its grace, at the latest 2030-01-01T02:30:00.000Z",
      "rotation completed: key AbCdEfGhIjKl stopped working at 2030-01-01T01:00:00.000Z",
      "expiry notice: key ZyXwVuTsRqPo (tenant demo, live) expires within 90000 ms, at 2030-01-01T00:01:30.000Z",
    ]);
  });

  it("skips the other events, rotations whose grace starts at once among them", () => {
    assert.equal(
      formatKeyEvent({ ...common, type: "api_key.revoked", keyId: "k1", prefix: "AbCdEfGhIjKl" }),
      undefined,
    );
    assert.equal(
      formatKeyEvent({
        ...common,
        type: "api_key.rotated",
        oldKeyId: "k1",
        oldPrefix: "AbCdEfGhIjKl",
        newKeyId: "k2",
        newPrefix: "MnOpQrStUvWx",
        scopes: [],
        graceExpiresAt: at,
        graceStarts: "rotation",
        createdBy: null,
      }),
      undefined,
    );
  });
});
