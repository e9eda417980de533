/** The in-memory audit chains: appends in order, only with a change that happened. */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { MemoryAuditChains } from "../../../api_keys/audit/_memory.ts";
import { verifyAuditChain } from "../../../api_keys/audit/chain.ts";
import type { AuditAppend } from "../../../api_keys/audit/types.ts";

const audit = (keyId: string): AuditAppend => ({
  tenantId: "t1",
  body: JSON.stringify({ keyId }),
  at: new Date(),
  keyId,
  actor: "a",
  action: "key.created",
});

describe("api_keys/audit/_memory.ts", () => {
  it("appends nothing when the change throws or answers false, and leaves no gap", async () => {
    const chains = new MemoryAuditChains();
    await chains.run(audit("a"), () => true);
    await assert.rejects(chains.run(audit("b"), () => {
      throw new Error("refused");
    }));
    assert.deepEqual(await chains.run(audit("c"), () => false), [false, null]);
    await chains.run(audit("d"), () => undefined);
    const records = chains.read({ tenantId: "t1", order: "asc", limit: 10 });
    assert.deepEqual(records.map((r) => [r.seq, JSON.parse(r.body).keyId]), [[1, "a"], [2, "d"]]);
    assert.equal(
      (await verifyAuditChain(records, { tenantId: "t1", ...chains.state("t1") })).ok,
      true,
    );
  });

  it("prunes before a time keeping the last record as the anchor", async () => {
    const chains = new MemoryAuditChains();
    for (const key of ["a", "b", "c"]) await chains.run(audit(key), () => true);
    assert.equal(chains.prune("t1", new Date(Date.now() + 1_000)), 2);
    assert.equal(chains.prune("none", new Date()), 0);
    const state = chains.state("t1");
    assert.equal(state.anchor.seq, 3);
    const records = chains.read({ tenantId: "t1", order: "asc", limit: 10 });
    assert.equal((await verifyAuditChain(records, { tenantId: "t1", ...state })).ok, true);
  });
});
