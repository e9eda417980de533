/**
 * The contract of api_keys/leaks/types.ts, held by both handlers: an
 * `ApiKeysService` is a `LeakedKeyService`, a handler is a `LeakReportHandler`,
 * and `api_key.exposed` carries exactly the fields of `ApiKeyExposedEvent`.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { ApiKeyExposedEvent } from "../../../api_keys/events.ts";
import type {
  LeakedKeyService,
  LeakReportHandler,
  LeakReportResponse,
} from "../../../api_keys/leaks/types.ts";
import { createPublicRevocationHandler } from "../../../api_keys/mod.ts";
import { makeService, READ_ORDERS } from "../helpers.ts";

const EXPOSED_FIELDS: (keyof ApiKeyExposedEvent)[] = [
  "at",
  "environment",
  "keyId",
  "prefix",
  "source",
  "tenantId",
  "type",
  "url",
];

describe("leaked_keys.ts", () => {
  it("a handler answers a LeakReportRequest and reports ApiKeyExposedEvent", async () => {
    const { service } = makeService();
    const leakedKeyService: LeakedKeyService = service;
    const exposed: ApiKeyExposedEvent[] = [];
    const handler = createPublicRevocationHandler({
      service: leakedKeyService,
      onExposed: (event) => void exposed.push(event),
    });
    const asContract: LeakReportHandler = handler;
    assert.equal(asContract.maxBodyBytes, 4_096);
    const { key, id } = await service.create({ tenantId: "t1", name: "k", scopes: READ_ORDERS });
    const response: LeakReportResponse = await asContract({ body: key, headers: () => undefined });
    assert.equal(response.status, 202);
    assert.equal(typeof response.body, "string");
    await handler.drain();
    assert.equal(exposed.length, 1);
    assert.deepEqual(Object.keys(exposed[0]).sort(), EXPOSED_FIELDS);
    assert.equal(exposed[0].keyId, id);
    assert.equal(exposed[0].source, "public_report");
    assert.equal(exposed[0].url, null);
  });
});
