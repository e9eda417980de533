import { describe, it } from "node:test";
import assert from "node:assert/strict";
import * as admin from "../../../api_keys/admin/mod.ts";

describe("api_keys/admin/mod.ts", () => {
  it("exports the handler factory and the no-escalation rule", () => {
    assert.deepEqual(Object.keys(admin).sort(), ["createApiKeysAdminHandler", "findEscalation"]);
  });
});
