import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  createPostgresRateLimitStore,
  type PostgresQueryable,
} from "../../../rate_limits/postgres/mod.ts";

// The store's SQL runs on real PostgreSQL in tests/limits/; here, what it sends.
describe("createPostgresRateLimitStore", () => {
  it("sends one statement per check with every counter, and reads its rows in order", async () => {
    const sent: [string, unknown[] | undefined][] = [];
    const pool: PostgresQueryable = {
      query: (text, values) => {
        sent.push([text, values]);
        return Promise.resolve({
          rows: [
            { allowed: true, remaining: 4, reset_ms: 900 },
            { allowed: false, remaining: 0, reset_ms: 100 },
          ],
        });
      },
    };
    const store = createPostgresRateLimitStore({ pool });
    const counters = [
      { kind: "window" as const, subject: "s", name: "a", limit: 5, windowMs: 1_000, cost: 1 },
      { kind: "window" as const, subject: "s", name: "b", limit: 1, windowMs: 500, cost: 1 },
    ];
    assert.deepEqual(await store.check(counters), [
      { allowed: true, remaining: 4, resetMs: 900 },
      { allowed: false, remaining: 0, resetMs: 100 },
    ]);
    assert.equal(sent.length, 1);
    assert.match(sent[0][0], /FROM rate_limit_check\(/);
    assert.deepEqual(sent[0][1], [["s", "s"], ["a", "b"], [5, 1], [1_000, 500], [1, 1]]);
    assert.equal(store.name, "postgres");
  });

  it("throws a TypeError without a pool", () => {
    assert.throws(() => createPostgresRateLimitStore({} as never), TypeError);
  });
});
