import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createSafeFetch } from "../../../safe_response/fetch/mod.ts";
import { readJsonBody, RequestBodyError } from "../../../safe_response/fetch/read_json_body.ts";
import { countingBody } from "../../counting_body.ts";

/** A request whose body is `total` bytes in 1 KiB chunks, counting what was pulled. */
function streamed(total: number, headers: Record<string, string> = {}) {
  const { stream, pulled } = countingBody(total, 1024);
  const init = { method: "POST", body: stream, headers, duplex: "half" };
  return { request: new Request("http://x/", init as RequestInit), pulled };
}

const post = (body: BodyInit) => new Request("http://x/", { method: "POST", body });

async function refusal(promise: Promise<unknown>): Promise<RequestBodyError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof RequestBodyError, String(error));
    return error;
  }
  assert.fail("not refused");
}

describe("readJsonBody", () => {
  it("parses a JSON body within the cap", async () => {
    assert.deepEqual(await readJsonBody(post('{"a":[1,"é"]}'), { maxBytes: 14 }), { a: [1, "é"] });
    assert.equal(await readJsonBody(post("null")), null);
  });

  it("refuses a streamed body past the cap with 413, reading at most the cap and a chunk", async () => {
    const { request, pulled } = streamed(50 * 1024 * 1024);
    const error = await refusal(readJsonBody(request, { maxBytes: 10_000 }));
    assert.deepEqual([error.status, error.code], [413, "CONTENT_TOO_LARGE"]);
    assert.ok(pulled() <= 10_000 + 2 * 1024, `${pulled()} bytes read`);
  });

  it("refuses a declared Content-Length past the cap before reading a byte", async () => {
    const { request, pulled } = streamed(1024 * 1024, { "Content-Length": String(1024 * 1024) });
    assert.equal((await refusal(readJsonBody(request, { maxBytes: 1024 }))).status, 413);
    assert.equal(pulled(), 0);
  });

  it("has a 100 KiB default cap", async () => {
    assert.equal(await readJsonBody(post(`"${"a".repeat(102_398)}"`)), "a".repeat(102_398));
    assert.equal((await refusal(readJsonBody(post(`"${"a".repeat(102_399)}"`)))).status, 413);
  });

  it("refuses what is not JSON in UTF-8 with 400 INVALID_JSON_BODY", async () => {
    for (const body of ["", "{", "{'a':1}", new Uint8Array([0x22, 0xff, 0x22])]) {
      const error = await refusal(readJsonBody(post(body)));
      assert.deepEqual([error.status, error.code], [400, "INVALID_JSON_BODY"]);
    }
  });

  it("throws a TypeError for a maxBytes out of range", async () => {
    for (const maxBytes of [0, -1, 1.5, NaN, 2 ** 31, "10" as unknown as number]) {
      await assert.rejects(readJsonBody(post("1"), { maxBytes }), TypeError);
    }
  });

  it("is answered by createSafeFetch's routes as an error envelope", async () => {
    const route = createSafeFetch().route({}, (request) => readJsonBody(request, { maxBytes: 8 }));
    const response = await route(post('{"a":"long enough"}'));
    assert.equal(response.status, 413);
    assert.equal((await response.json()).error.code, "CONTENT_TOO_LARGE");
  });

  it("throws a TypeError (a server bug: a 500, not the client's 400) for a body already read or locked", async () => {
    const used = post('{"a":1}');
    await used.json();
    await assert.rejects(readJsonBody(used), (error) => {
      assert.ok(error instanceof TypeError && !(error instanceof RequestBodyError));
      assert.match(error.message, /already/);
      return true;
    });
    const locked = post('{"a":1}');
    locked.body!.getReader();
    await assert.rejects(readJsonBody(locked), TypeError);
    const safe = createSafeFetch({ logger: { warn() {}, error() {} } });
    const answer = await safe.route({}, (request) => readJsonBody(request))(used);
    assert.equal(answer.status, 500);
  });
});
