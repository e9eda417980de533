import { describe, it } from "node:test";
import assert from "node:assert/strict";
import * as admin from "../../../api_keys/admin/mod.ts";
import { loadedAtImport, WITH_DENO_INFO } from "../../module_graph.ts";

/**
 * The most library files `./api-keys/admin` may load at import: 25 (20 before the name reader of
 * thrown values moved to telemetry/_error_name.ts, one home for both cores' log lines, and the name
 * and search bound to `client/elements/_limits.ts`, its one home shared with the settings element;
 * 22 also while its query checks imported the usage window's rule from the usage recorder, which
 * loaded the recorder and the service's options with it); 23 since the detached call of a caller's
 * function (`callDetached`) moved to `telemetry/_detached.ts`, a leaf shared with the rate-limits
 * core; 24 since the lone-surrogate rule of stored text (key names, the audit context) moved to
 * `telemetry/_text.ts`, the same kind of shared leaf; 25 since the strict ISO 8601 reader moved to
 * `client/_instant.ts`, shared with the imports, the deprecation dates and the HTTP-date reader; 26
 * since the CSRF header's default moved to `client/_csrf.ts`, shared with the element and the
 * OpenAPI document; 27 since a key's listed status (`storage/_paging.ts`) reads when it stops
 * being accepted from `_accepted_until.ts`, the rule's one home with verify; 28 since the option
 * checks it shares with the leak intake (`leaks/_core.ts`) bound timer options by
 * `telemetry/_timer.ts`, the longest delay's one home; 29 since the rule of key names and its
 * code-point bound (`api_keys/_key_name.ts`, shared with the service's create, rotate and import)
 * left `_input.ts`, which the guard loads at import. No slack: a file more
 * is a choice to make here.
 */
const MAX_FILES_AT_IMPORT = 29;

describe("api_keys/admin/mod.ts", () => {
  it("exports the handler factory and the no-escalation rule", () => {
    assert.deepEqual(Object.keys(admin).sort(), ["createApiKeysAdminHandler", "findEscalation"]);
  });

  it(
    "loads the usage window's rule but not the usage recorder at import, in a bounded number of files",
    WITH_DENO_INFO,
    async () => {
      const { files } = await loadedAtImport(
        new URL("../../../api_keys/admin/mod.ts", import.meta.url).href,
      );
      assert.ok(files.includes("api_keys/admin/_query.ts"), files.join("\n"));
      assert.ok(files.includes("api_keys/metering/_usage_window.ts"), files.join("\n"));
      assert.ok(!files.includes("api_keys/metering/_usage.ts"), files.sort().join("\n"));
      assert.ok(
        files.length <= MAX_FILES_AT_IMPORT,
        `${files.length} files at import (at most ${MAX_FILES_AT_IMPORT}):\n${
          files.sort().join("\n")
        }`,
      );
    },
  );
});
