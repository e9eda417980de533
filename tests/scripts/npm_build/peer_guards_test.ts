import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

// The build scripts run on Deno only (they read deno.json with Deno APIs).
const onDeno = "Deno" in globalThis;
const MODULE = "../../../scripts/npm_build/peer_guards.ts"; // computed: Deno only
const ESBUILD = "esbuild"; // computed: Deno only

/** Writes `files` (path → text) under `root`. */
function write(root: string, files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
}

/** Runs `node <file>` in `cwd`; answers its exit code and output. */
function node(cwd: string, file: string) {
  const run = spawnSync("node", [file], { cwd, encoding: "utf8" });
  return { status: run.status, out: run.stdout.trim(), err: run.stderr };
}

/**
 * A package `pkg` whose entry `pkg/nest` (ESM and CommonJS, as tsc emits them) imports the
 * optional peer `peer-a`, guarded by the build; `peer-a` needs `peer-dep` itself.
 */
const PACKAGE = {
  "node_modules/pkg/package.json": JSON.stringify({
    name: "pkg",
    exports: { "./nest": { import: "./esm/nest/mod.js", require: "./cjs/nest/mod.js" } },
  }),
  "node_modules/pkg/esm/package.json": `{"type":"module"}`,
  "node_modules/pkg/esm/nest/mod.js":
    `import { hello } from "peer-a";\nexport function greet() { return hello(); }\nexport default greet;\n`,
  "node_modules/pkg/cjs/package.json": `{"type":"commonjs"}`,
  "node_modules/pkg/cjs/nest/mod.js": `"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.greet = greet;
const peer_a_1 = require("peer-a");
function greet() { return (0, peer_a_1.hello)(); }
exports.default = greet;
`,
  "node_modules/peer-a/package.json": JSON.stringify({ name: "peer-a", main: "index.js" }),
  "node_modules/peer-a/index.js":
    `const { name } = require("peer-dep");\nexports.hello = () => "hello from " + name;\n`,
  "node_modules/peer-dep/package.json": JSON.stringify({ name: "peer-dep", main: "index.js" }),
  "node_modules/peer-dep/index.js": `exports.name = "peer-a";\n`,
  "app.mjs":
    `import greet, { greet as named } from "pkg/nest";\nconsole.log(greet() === named() ? greet() : "differ");\n`,
  "app.cjs": `const { greet } = require("pkg/nest");\nconsole.log(greet());\n`,
  "load.mjs": `import("pkg/nest").then(() => console.log("loaded"), (error) =>
  console.log(JSON.stringify({ code: error.code, message: error.message })));\n`,
  "load.cjs": `try { require("pkg/nest"); console.log("loaded"); } catch (error) {
  console.log(JSON.stringify({ code: error.code, message: error.message, cause: error.cause?.code }));
}\n`,
};

describe(
  "npm build: optional-peer entries",
  { skip: !onDeno && "the build runs on Deno" },
  () => {
    let root = "";
    /** Where the bundles go: outside `root`, so no node_modules above them. */
    let dist = "";
    before(async () => {
      root = mkdtempSync(join(tmpdir(), "peer-guards-"));
      dist = mkdtempSync(join(tmpdir(), "peer-guards-dist-"));
      write(root, PACKAGE);
      const { guardEntries } = await import(MODULE);
      const guarded = guardEntries(
        join(root, "node_modules", "pkg"),
        "pkg",
        [{ subpath: "./nest", stem: "nest/mod", names: ["default", "greet"] }],
        new Set(["peer-a"]),
      );
      assert.deepEqual(guarded, { "./nest": ["peer-a"] });
    });
    after(() => {
      rmSync(root, { recursive: true, force: true });
      rmSync(dist, { recursive: true, force: true });
    });

    it("an ESM entry is plain static imports: no top-level await, no import.meta.resolve", () => {
      const esm = readFileSync(join(root, "node_modules/pkg/esm/nest/mod.js"), "utf8");
      assert.doesNotMatch(esm, /\bawait\b|import\.meta\.resolve/);
    });

    it("the installed entries load and run, ESM and CommonJS", () => {
      assert.deepEqual(node(root, "app.mjs"), { status: 0, out: "hello from peer-a", err: "" });
      assert.deepEqual(node(root, "app.cjs"), { status: 0, out: "hello from peer-a", err: "" });
    });

    for (const [app, format] of [["app.mjs", "cjs"], ["app.mjs", "esm"], ["app.cjs", "cjs"]]) {
      it(`${app} bundled whole by esbuild (format ${format}) runs where no node_modules is`, async () => {
        const esbuild = await import(ESBUILD);
        try {
          const out = join(dist, `${app}.${format}.${format === "esm" ? "mjs" : "cjs"}`);
          await esbuild.build({
            entryPoints: [join(root, app)],
            bundle: true,
            platform: "node",
            format,
            outfile: out,
            logLevel: "silent",
          });
          assert.deepEqual(node(dirname(out), out), {
            status: 0,
            out: "hello from peer-a",
            err: "",
          });
        } finally {
          await esbuild.stop();
        }
      });
    }

    describe("with a module missing", () => {
      /** Moves `node_modules/<name>` aside while `body` runs. */
      function without(name: string, body: () => void): void {
        const path = join(root, "node_modules", name);
        renameSync(path, `${path}.aside`);
        try {
          body();
        } finally {
          renameSync(`${path}.aside`, path);
        }
      }

      it("CommonJS: a missing peer throws the install command, Node's error as its cause", () => {
        without("peer-a", () => {
          const { out } = node(root, "load.cjs");
          const error = JSON.parse(out);
          assert.equal(error.cause, "MODULE_NOT_FOUND");
          assert.equal(
            error.message,
            "pkg/nest needs peer-a, not installed: run `npm install peer-a`",
          );
        });
      });

      it("CommonJS: a module missing under an installed peer is Node's own error", () => {
        without("peer-dep", () => {
          const error = JSON.parse(node(root, "load.cjs").out);
          assert.equal(error.code, "MODULE_NOT_FOUND");
          assert.match(error.message, /^Cannot find module 'peer-dep'/);
        });
      });

      it("ESM: a missing peer is Node's ERR_MODULE_NOT_FOUND naming it", () => {
        without("peer-a", () => {
          const error = JSON.parse(node(root, "load.mjs").out);
          assert.equal(error.code, "ERR_MODULE_NOT_FOUND");
          assert.match(error.message, /Cannot find package 'peer-a'/);
        });
      });
    });
  },
);
