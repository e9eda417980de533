/** The per-service event sink that the leaked-key handlers emit through. */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { attachEventSink, serviceEventSink } from "../../api_keys/_service_events.ts";
import { makeService } from "./helpers.ts";

describe("service event sinks", () => {
  it("records a dispatcher per object and ignores an absent one", () => {
    const withSink = {};
    const withoutSink = {};
    const emit = () => {};
    attachEventSink(withSink, emit);
    attachEventSink(withoutSink, undefined);
    assert.equal(serviceEventSink(withSink), emit);
    assert.equal(serviceEventSink(withoutSink), undefined);
  });

  it("holds the onEvent dispatcher of every ApiKeysService that has one", () => {
    const { service, events } = makeService();
    const sink = serviceEventSink(service);
    assert.equal(typeof sink, "function");
    const event = { type: "api_key.revoked", at: new Date(0) } as never;
    sink!(event);
    assert.deepEqual(events, [event]);
    assert.equal(serviceEventSink(makeService({ onEvent: undefined }).service), undefined);
  });
});
