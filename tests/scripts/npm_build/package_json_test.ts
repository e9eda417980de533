import { describe, it } from "node:test";
import assert from "node:assert/strict";

// The build scripts run on Deno only (they read deno.json with Deno APIs).
const onDeno = "Deno" in globalThis;

describe("npm package.json dependencies", { skip: !onDeno && "the build runs on Deno" }, () => {
  it("refuses a test-only package (Hono) as a dependency; pinned ones pass", async () => {
    const module = "../../../scripts/npm_build/package_json.ts"; // computed: Deno only
    const config = "../../../scripts/npm_build/config.ts";
    const { splitDependencies } = await import(module);
    const { readDenoJson, TEST_ONLY_PACKAGES } = await import(config);
    const deno = readDenoJson();
    assert.deepEqual(TEST_ONLY_PACKAGES, ["hono", "@hono/node-server"]);
    for (const name of TEST_ONLY_PACKAGES) {
      assert.ok(name in deno.imports, `${name} is pinned for the tests`);
      assert.throws(() => splitDependencies(deno, [name]), /only the tests may use/);
      assert.throws(() => splitDependencies(deno, [`${name}/sub`]), /only the tests may use/);
    }
    assert.deepEqual(splitDependencies(deno, ["@noble/hashes"]).dependencies, {
      "@noble/hashes": `^${deno.imports["@noble/hashes"].split("@").at(-1)}`,
    });
  });

  it("lists prisma/ in files: the schema and the migrations ship beside the code", async () => {
    const module = "../../../scripts/npm_build/package_json.ts";
    const config = "../../../scripts/npm_build/config.ts";
    const { packageJson } = await import(module);
    const { readDenoJson } = await import(config);
    assert.deepEqual(packageJson(readDenoJson(), []).files, [
      "CHANGELOG.md",
      "cjs/",
      "esm/",
      "prisma/",
    ]);
  });
});
