import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";

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
    assert.deepEqual(packageJson(readDenoJson(), [], []).files, [
      "CHANGELOG.md",
      "cjs/",
      "esm/",
      "prisma/",
    ]);
  });

  it(
    "sideEffects lists the files that act when loaded: a bundled bare import of ./client/elements defines the element",
    {
      timeout: 180_000,
    },
    async () => {
      const module = "../../../scripts/npm_build/package_json.ts";
      const config = "../../../scripts/npm_build/config.ts";
      const compiler = "../../../scripts/npm_build/compile.ts";
      const lazy = "../../../scripts/npm_build/lazy_requires.ts";
      const { packageJson } = await import(module);
      const { readDenoJson, ROOT } = await import(config);
      const { compile, compilerOptions } = await import(compiler);
      const { effectfulFiles } = await import(lazy);
      const esbuild = await import("esbuild");
      const root = await Deno.makeTempDir({ prefix: "api-kit-side-effects-" });
      try {
        // The package as built, without esm/package.json: esbuild then reads `sideEffects` at the
        // package root, as Rollup (and Vite's production build) always do.
        const pkgDir = join(root, "node_modules", "@saferoute", "api-kit");
        for (const format of ["esm", "cjs"]) {
          const entry = join(ROOT, "client", "elements", "mod.ts");
          const { errors } = compile([entry], compilerOptions(format, join(pkgDir, format), false));
          assert.deepEqual(errors, []);
        }
        const pkg = packageJson(readDenoJson(), [], effectfulFiles(join(pkgDir, "cjs")));
        assert.deepEqual(pkg.sideEffects, [
          "./cjs/client/elements/_dom.js",
          "./cjs/client/elements/api_keys_manager.js",
          "./cjs/client/elements/mod.js",
          "./esm/client/elements/_dom.js",
          "./esm/client/elements/api_keys_manager.js",
          "./esm/client/elements/mod.js",
        ]);
        for (const file of pkg.sideEffects) assert.ok(existsSync(join(pkgDir, file)), file);
        writeFileSync(join(pkgDir, "package.json"), JSON.stringify(pkg));
        writeFileSync(join(root, "app.mjs"), `import "@saferoute/api-kit/client/elements";\n`);
        const bundle = join(root, "bundle.mjs");
        await esbuild.build({
          entryPoints: [join(root, "app.mjs")],
          bundle: true,
          format: "esm",
          platform: "browser",
          outfile: bundle,
          logLevel: "silent",
        });
        const probe = `const defined = [];
        globalThis.HTMLElement = class {};
        globalThis.customElements = { get: () => undefined, define: (name) => defined.push(name) };
        await import(${JSON.stringify(bundle)});
        console.log(JSON.stringify(defined));`;
        const run = spawnSync("node", ["--input-type=module", "-e", probe], { encoding: "utf8" });
        assert.equal(run.status, 0, run.stderr);
        assert.deepEqual(JSON.parse(run.stdout), ["api-keys-manager"]);
      } finally {
        await esbuild.stop();
        await Deno.remove(root, { recursive: true });
      }
    },
  );
});
