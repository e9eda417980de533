/** The audit SQL's parameters and row readers (run on PostgreSQL in tests/postgres/audit_test.ts). */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  readAuditParams,
  readAuditSql,
  toAuditChainState,
  toStoredAuditRecord,
} from "../../../api_keys/audit/_sql.ts";

describe("api_keys/audit/_sql.ts", () => {
  it("orders as asked and passes each absent filter as null", () => {
    assert.match(readAuditSql("asc"), /ORDER BY seq ASC/);
    assert.match(readAuditSql("desc"), /ORDER BY seq DESC/);
    assert.deepEqual(readAuditParams({ tenantId: "t", order: "asc", limit: 5, keyId: "k" }), [
      "t",
      null,
      null,
      null,
      null,
      "k",
      null,
      null,
      5,
    ]);
  });

  it("reads bigint columns as numbers and an absent head as an empty chain", () => {
    const at = new Date(0);
    assert.deepEqual(
      toStoredAuditRecord({ seq: 3n, at, prev_hash: "p", hash: "h" }, {
        tenantId: "t",
        body: "{}",
      }),
      { tenantId: "t", seq: 3, at, body: "{}", prevHash: "p", hash: "h" },
    );
    assert.deepEqual(toAuditChainState([]).head, null);
    assert.deepEqual(
      toAuditChainState([{ seq: 2n, hash: "h", anchor_seq: 1n, anchor_prev_hash: "z" }]),
      { head: { seq: 2, hash: "h" }, anchor: { seq: 1, prevHash: "z" } },
    );
  });
});
