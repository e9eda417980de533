import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readBounded } from "../../../api_keys/fetch/_bounded_body.ts";
import { countingBody } from "../../counting_body.ts";

describe("readBounded", () => {
  it("reads a body under the limit whole", async () => {
    const { stream, cancelled } = countingBody(30, 10);
    const bytes = await readBounded(stream, 100);
    assert.equal(new TextDecoder().decode(bytes), " ".repeat(30));
    assert.equal(cancelled(), false);
  });

  it("stops at the limit and cancels the rest of the stream", async () => {
    const { stream, pulled, cancelled } = countingBody(10_000, 10);
    const bytes = await readBounded(stream, 25);
    assert.equal(bytes.length, 25);
    assert.ok(pulled() <= 40, `${pulled()} bytes pulled`);
    assert.equal(cancelled(), true);
  });

  it("reads no body as empty", async () => {
    assert.equal((await readBounded(null, 10)).length, 0);
  });
});
