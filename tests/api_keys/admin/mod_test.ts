import { describe, it } from "node:test";
import assert from "node:assert/strict";
import * as admin from "../../../api_keys/admin/mod.ts";
import { loadedAtImport } from "../../module_graph.ts";

describe("api_keys/admin/mod.ts", () => {
  it("exports the handler factory and the no-escalation rule", () => {
    assert.deepEqual(Object.keys(admin).sort(), ["createApiKeysAdminHandler", "findEscalation"]);
  });

  it(
    "loads the usage window's rule but not the usage recorder at import",
    { skip: !("Deno" in globalThis) && "it reads the module graph with deno info" },
    async () => {
      const { files } = await loadedAtImport(
        new URL("../../../api_keys/admin/mod.ts", import.meta.url).href,
      );
      assert.ok(files.includes("api_keys/admin/_query.ts"), files.join("\n"));
      assert.ok(!files.includes("api_keys/metering/_usage.ts"), files.sort().join("\n"));
    },
  );
});
