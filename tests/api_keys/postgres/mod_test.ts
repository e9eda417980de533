import { describe, it } from "node:test";
import assert from "node:assert/strict";
import * as postgres from "../../../api_keys/postgres/mod.ts";
import { DEFAULT_FEED_CHANNEL, DEFAULT_FEED_POLL_MS } from "../../../api_keys/postgres/_feed.ts";

describe("api_keys/postgres/mod.ts", () => {
  it("exports the feed factory; its defaults are the ones docs/operations.md states", () => {
    assert.deepEqual(Object.keys(postgres).sort(), ["createPostgresFeed"]);
    assert.equal(DEFAULT_FEED_CHANNEL, "api_key_changes");
    assert.equal(DEFAULT_FEED_POLL_MS, 500);
  });

  it("createPostgresFeed rejects bad options before connecting", () => {
    assert.throws(() => postgres.createPostgresFeed({} as never), TypeError);
    assert.throws(
      () => postgres.createPostgresFeed({ client: () => ({}) as never, pollMs: -1 }),
      TypeError,
    );
  });
});
