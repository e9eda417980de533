import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readBounded } from "../../../api_keys/fetch/_bounded_body.ts";

/** A stream of `chunks` chunks of `size` bytes that records how many were pulled and a cancel. */
function source(chunks: number, size: number) {
  const state = { pulled: 0, cancelled: false };
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (state.pulled === chunks) return controller.close();
      controller.enqueue(new Uint8Array(size).fill(state.pulled++));
    },
    cancel() {
      state.cancelled = true;
    },
  }, { highWaterMark: 0 });
  return { stream, state };
}

describe("readBounded", () => {
  it("reads a body under the limit whole", async () => {
    const { stream, state } = source(3, 10);
    const bytes = await readBounded(stream, 100);
    assert.equal(bytes.length, 30);
    assert.deepEqual([bytes[0], bytes[10], bytes[29]], [0, 1, 2]);
    assert.equal(state.cancelled, false);
  });

  it("stops at the limit and cancels the rest of the stream", async () => {
    const { stream, state } = source(1_000, 10);
    const bytes = await readBounded(stream, 25);
    assert.equal(bytes.length, 25);
    assert.ok(state.pulled <= 4, `${state.pulled} chunks pulled`);
    assert.equal(state.cancelled, true);
  });

  it("reads no body as empty", async () => {
    assert.equal((await readBounded(null, 10)).length, 0);
  });
});
