import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { activityPath, whatOf, whoOf } from "../../../client/elements/_activity.ts";
import { API_KEYS_MANAGER_STRINGS as s } from "../../../client/elements/strings.ts";

describe("client/elements/_activity.ts", () => {
  it("activityPath: 25 a page, the key and the cursor when given", () => {
    assert.equal(activityPath(null, null), "/audit?limit=25");
    assert.equal(activityPath("k 1", "c&2"), "/audit?limit=25&keyId=k+1&cursor=c%262");
  });

  it("whatOf and whoOf read the strings; unknown actions and actors as given", () => {
    assert.equal(whatOf("key.revoked", "success", s), "Revoked");
    for (const action of ["constructor", "toString", "__proto__"]) {
      assert.equal(whatOf(action, "success", s), action, "a prototype name is an unknown action");
    }
    assert.equal(whatOf("key.credits_updated", "success", s), "Credits changed");
    assert.equal(whatOf("key.created", "refused", s), "Created (refused)");
    assert.equal(whatOf("key.future", "success", s), "key.future");
    assert.equal(whatOf("key.rotated", "success", { ...s, auditRotated: "Tourné" }), "Tourné");
    assert.equal(whoOf("system", s), "System");
    assert.equal(whoOf("alice@example.com", s), "alice@example.com");
  });
});
