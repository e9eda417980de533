import { describe, it } from "node:test";
import assert from "node:assert/strict";

// The build scripts run on Deno only (they read deno.json with Deno APIs).
const onDeno = "Deno" in globalThis;
const nodeTests = "../../../scripts/npm_build/node_tests.ts"; // computed: Deno only

describe("Node test build", { skip: !onDeno && "the build runs on Deno" }, () => {
  it("names the type errors of an API newer than Node's lib (Array.fromAsync on Node 20), not others", async () => {
    const { newerThanNode } = await import(nodeTests);
    const newer = [
      "tests/a_test.ts(145,31): error TS2550: Property 'fromAsync' does not exist on type " +
      "'ArrayConstructor'. Do you need to change your target library? Try changing the 'lib' " +
      "compiler option to 'esnext' or later.",
      "tests/b_test.ts(3,1): error TS2583: Cannot find name 'AsyncDisposableStack'. Do you need to " +
      "change your target library? Try changing the 'lib' compiler option to 'esnext' or later.",
    ];
    const others = [
      "tests/load_guard_test.ts(13,46): error TS2304: Cannot find name 'Deno'.",
      "tests/c_test.ts(1,1): error TS2339: Property 'x' does not exist on type 'Y'.",
    ];
    assert.deepEqual(newerThanNode([...others, ...newer]), newer);
    assert.deepEqual(newerThanNode(others), []);
  });
});
