/** The audit log's types: the action list. */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { AUDIT_ACTIONS } from "../../../api_keys/audit/types.ts";

describe("api_keys/audit/types.ts", () => {
  it("lists each action once, frozen, all of the key.* family", () => {
    assert.equal(new Set(AUDIT_ACTIONS).size, AUDIT_ACTIONS.length);
    assert.ok(Object.isFrozen(AUDIT_ACTIONS));
    for (const action of AUDIT_ACTIONS) assert.match(action, /^key\.[a-z_]+$/);
  });
});
