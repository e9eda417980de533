/** The events and the metric carry exactly the spec's fields, and no key material. */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  type ApiKeyEvent,
  type ApiKeyVerificationMetric,
  createdEvent,
} from "../../api_keys/events.ts";
import { storedRecord } from "./storage/stored_record.ts";
import { makeService, PEPPER_1, READ_ORDERS, rejection } from "./helpers.ts";

const FIELDS: Record<ApiKeyEvent["type"], string[]> = {
  "api_key.created": ["at", "createdBy", "environment", "keyId", "prefix", "scopes", "tenantId"],
  "api_key.revoked": ["at", "environment", "keyId", "prefix", "tenantId"],
  "api_key.rotated": [
    "at",
    "createdBy",
    "environment",
    "graceExpiresAt",
    "graceStarts",
    "newKeyId",
    "newPrefix",
    "oldKeyId",
    "oldPrefix",
    "scopes",
    "tenantId",
  ],
  "api_key.auth_failed": ["at", "code", "environment", "keyId", "prefix", "tenantId"],
  "api_key.authorization_denied": ["at", "code"],
  "api_key.used": ["at", "environment", "keyId", "prefix", "scopes", "tenantId"],
  // emitted by the leaked-key handlers (tests/api_keys/leaks/public_revocation_test.ts)
  "api_key.exposed": ["at", "environment", "keyId", "prefix", "source", "tenantId", "url"],
  "api_key.rehash_failed": [
    "at",
    "environment",
    "hashScheme",
    "keyId",
    "pepperVersion",
    "prefix",
    "tenantId",
  ],
  "api_key.expiring": [
    "at",
    "environment",
    "expiresAt",
    "keyId",
    "prefix",
    "tenantId",
    "thresholdMs",
  ],
  // emitted by the audit log (tests/api_keys/audit/_log_test.ts)
  "api_key.audit_checkpoint": ["at", "checkpoint"],
  "api_key.rotation_completed": [
    "at",
    "endedAt",
    "environment",
    "newKeyId",
    "oldKeyId",
    "oldPrefix",
    "rotatedAt",
    "tenantId",
  ],
  // emitted by spends (tests/api_keys/credits_test.ts)
  "api_key.credits_low": ["at", "keyId", "nextRefillAt", "remaining", "tenantId", "threshold"],
  "api_key.credits_exhausted": ["at", "keyId", "nextRefillAt", "remaining", "tenantId"],
};

describe("events and metrics", () => {
  it("each event type has the spec's fields (type and at included), nothing else", async () => {
    const { service, events, metrics, clocks } = makeService({ emitUsageEvents: true });
    const { id, key } = await service.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
    await service.verify(key);
    const rotated = await service.rotate(id, { gracePeriodMs: 1000 });
    await service.notifyExpiring({ thresholdsMs: [60_000] });
    clocks.advance(1000);
    await service.notifyExpiring({ thresholdsMs: [60_000] });
    await service.revoke(rotated.id);
    await rejection(service.verify(rotated.key));
    await rejection(service.verify("garbage"));
    const seen = new Set(events.map((event) => event.type));
    assert.equal(seen.size, 7);
    for (const event of events) {
      const fields = Object.keys(event).filter((f) => f !== "type").sort();
      const allowed = FIELDS[event.type];
      assert.ok(fields.every((f) => allowed.includes(f)), `${event.type}: ${fields}`);
      const text = JSON.stringify(event);
      for (const secret of [key, rotated.key, PEPPER_1]) assert.ok(!text.includes(secret));
    }
    const failed = events.filter((event) => event.type === "api_key.auth_failed");
    assert.deepEqual(failed.map((event) => Object.keys(event).sort()), [
      ["at", "code", "environment", "keyId", "prefix", "tenantId", "type"],
      ["at", "code", "prefix", "type"],
    ]);
    const metricFields = (m: ApiKeyVerificationMetric) => Object.keys(m).sort().join(",");
    assert.deepEqual(
      [...new Set(metrics.map(metricFields))].sort(),
      ["durationMs,environment,outcome,type", "durationMs,outcome,type"],
    );
  });

  it("createdEvent (create and importKeys) has the created fields and its own copy of the scopes", () => {
    const record = storedRecord();
    const at = new Date(5);
    const event = createdEvent(record, at);
    assert.deepEqual(Object.keys(event).sort(), ["type", ...FIELDS["api_key.created"]].sort());
    assert.deepEqual(event, {
      type: "api_key.created",
      at,
      keyId: "k1",
      tenantId: "t1",
      prefix: "AbCdEfGhIjKl",
      environment: "live",
      scopes: ["orders:read"],
      createdBy: null,
    });
    assert.notEqual(event.scopes, record.scopes);
  });
});
