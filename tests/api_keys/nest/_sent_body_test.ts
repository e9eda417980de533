import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { sentBody } from "../../../api_keys/nest/_sent_body.ts";

describe("sentBody", () => {
  it("HTTP/1.1: a content-length above 0 or a transfer-encoding", () => {
    assert.equal(sentBody({ headers: { "content-length": "48" } }), true);
    assert.equal(sentBody({ headers: { "transfer-encoding": "chunked" } }), true);
    assert.equal(sentBody({ headers: { "content-length": "0" } }), false);
    assert.equal(sentBody({ headers: {} }), false);
  });

  it("HTTP/2: a stream the headers did not end, on the request or Fastify's raw one", () => {
    const open = { stream: { endAfterHeaders: false } };
    const ended = { stream: { endAfterHeaders: true } };
    assert.equal(sentBody({ headers: {}, ...open }), true);
    assert.equal(sentBody({ headers: {}, raw: open }), true);
    assert.equal(sentBody({ headers: { "content-length": "48" }, raw: ended }), false);
  });
});
