import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { epochMsOf, instantOf, sqlInstant } from "../../../api_keys/storage/_sql_instant.ts";

// On a real Prisma Client in a session whose time zone is not UTC: tests/postgres/usage_day_test.ts
// and tests/postgres/audit_test.ts.
describe("instants across a raw statement", () => {
  it("goes in as ISO text with its Z (none: null) and comes back from epoch ms", () => {
    const at = new Date("2030-05-01T10:00:00.123Z");
    assert.equal(sqlInstant(at), "2030-05-01T10:00:00.123Z");
    assert.equal(sqlInstant(undefined), null);
    assert.equal(epochMsOf("page.at"), "(extract(epoch FROM page.at) * 1000)::float8");
    assert.deepEqual(instantOf(at.getTime()), at);
    assert.deepEqual(instantOf(at), at, "a driver's Date (pg) as it is");
    for (const unreadable of ["2030-05-01T10:00:00Z", null, undefined, 10n]) {
      assert.ok(Number.isNaN(instantOf(unreadable).getTime()), String(unreadable));
    }
  });
});
