/** The audit SQL's parameters and row readers (run on PostgreSQL in tests/postgres/audit_test.ts). */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  readAuditParams,
  readAuditSql,
  toAuditChainState,
  toAuditReadAnswer,
  toStoredAuditRecord,
} from "../../../api_keys/audit/_sql.ts";

describe("api_keys/audit/_sql.ts", () => {
  it("orders as asked and passes each absent filter as null", () => {
    assert.match(readAuditSql("asc"), /ORDER BY seq ASC/);
    assert.match(readAuditSql("desc"), /ORDER BY seq DESC/);
    // One statement reads the page and the heads row (one snapshot).
    assert.match(readAuditSql("asc"), /FROM api_key_audit_heads[\s\S]*FROM api_key_audit\b/);
    assert.match(readAuditSql("desc"), /ORDER BY page\.seq DESC$/);
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
    assert.deepEqual(toAuditChainState(undefined).head, null);
    assert.deepEqual(
      toAuditChainState({ head_seq: 2n, head_hash: "h", anchor_seq: 1n, anchor_prev_hash: "z" }),
      { head: { seq: 2, hash: "h" }, anchor: { seq: 1, prevHash: "z" } },
    );
  });

  it("reads the joined rows as the records and the state read with them", () => {
    const at = new Date(0);
    const head = { head_seq: 7n, head_hash: "h", anchor_seq: 3n, anchor_prev_hash: "z" };
    const none = { tenant_id: null, seq: null, at: null, body: null, prev_hash: null, hash: null };
    assert.deepEqual(toAuditReadAnswer([{ ...head, ...none }]), {
      records: [],
      state: { head: { seq: 7, hash: "h" }, anchor: { seq: 3, prevHash: "z" } },
    });
    const empty = { head_seq: null, head_hash: null, anchor_seq: null, anchor_prev_hash: null };
    assert.deepEqual(toAuditReadAnswer([{ ...empty, ...none }]).state.head, null);
    const row = { tenant_id: "t", seq: 4n, at, body: "{}", prev_hash: "p", hash: "q" };
    assert.deepEqual(toAuditReadAnswer([{ ...head, ...row }]).records, [
      { tenantId: "t", seq: 4, at, body: "{}", prevHash: "p", hash: "q" },
    ]);
  });
});
