import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";

// The build scripts run on Deno only (they read deno.json with Deno APIs).
const onDeno = "Deno" in globalThis;
const MODULE = "../../../scripts/npm_build/lazy_requires.ts"; // computed: Deno only
const COMPILE = "../../../scripts/npm_build/compile.ts";
const CONFIG = "../../../scripts/npm_build/config.ts";

/** Runs CommonJS `code` with a `require` that records what it loads; answers the module's exports and the loads. */
function run(code: string, modules: Record<string, Record<string, unknown>>) {
  const loaded: string[] = [];
  const require = (specifier: string) => {
    loaded.push(specifier);
    return modules[specifier];
  };
  const exports: Record<string, unknown> = {};
  new Function("exports", "require", code)(exports, require);
  return { exports, loaded };
}

/** What `tsc` emits for a file importing `{ add }` from `./math.ts` and `Base` from `./base.ts`. */
const EMITTED = `"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.Child = void 0;
exports.sum = sum;
exports.make = make;
const math_ts_1 = require("./math.js");
const base_ts_1 = require("./base.js");
const pkg_1 = require("pkg");
function sum(a, b) { return (0, math_ts_1.add)(a, b); }
function make() { return new math_ts_1.Counter(1); }
class Child extends base_ts_1.Base {}
exports.Child = Child;
`;

describe(
  "npm build: CommonJS requires on first use",
  { skip: !onDeno && "the build runs on Deno" },
  () => {
    it("a relative require used only as x.name loads when first read; a class's base loads at once", async () => {
      const { lazyRequires } = await import(MODULE);
      const lazy: string = lazyRequires(EMITTED, () => true);
      assert.match(
        lazy,
        /function math_ts_1\(\) \{ return math_ts_1\$ \?\?= require\("\.\/math\.js"\); \}/,
      );
      assert.match(lazy, /\(0, \(math_ts_1\(\)\)\.add\)\(a, b\)/);
      assert.match(lazy, /const pkg_1 = require\("pkg"\);/, "a package's require stays");
      const { exports, loaded } = run(lazy, {
        "./math.js": {
          add: (a: number, b: number) => a + b,
          Counter: class Counter {
            constructor(readonly count: number) {}
          },
        },
        "./base.js": { Base: class {} },
        pkg: {},
      });
      assert.deepEqual(loaded, ["pkg", "./base.js"], "the base class at definition, math not yet");
      assert.equal((exports.sum as (a: number, b: number) => number)(2, 3), 5);
      assert.equal((exports.sum as (a: number, b: number) => number)(1, 1), 2);
      assert.deepEqual(loaded, ["pkg", "./base.js", "./math.js"], "math once, at the first call");
      // `new (x()).Counter(1)`, not `new x().Counter(1)` (which would construct `x`).
      assert.equal((exports.make as () => { count: number })().count, 1);
    });

    it("keeps the eager require of a file lateOk refuses or used other than as x.name", async () => {
      const { lazyRequires } = await import(MODULE);
      assert.equal(lazyRequires(EMITTED, () => false), EMITTED);
      const passed =
        `"use strict";\nconst a_1 = require("./a.js");\nuse(a_1);\nexports.x = a_1.x;\n`;
      assert.equal(lazyRequires(passed, () => true), passed);
      const shorthand = `"use strict";\nconst a_1 = require("./a.js");\nexports.o = { a_1 };\n`;
      assert.equal(lazyRequires(shorthand, () => true), shorthand);
      const sideEffect = `"use strict";\nrequire("./a.js");\n`;
      assert.equal(lazyRequires(sideEffect, () => true), sideEffect);
    });

    it("a file is declarative when its top level only declares, exports and decorates", async () => {
      const { isDeclarative } = await import(MODULE);
      assert.equal(isDeclarative(EMITTED), true);
      assert.equal(
        isDeclarative(
          `"use strict";\nlet A = class A {};\nexports.A = A;\nexports.A = A = __decorate([x()], A);\n`,
        ),
        true,
      );
      assert.equal(
        isDeclarative(`const T = new Uint8Array(4);\nfor (const c of "ab") T[0] = 1;\n`),
        false,
      );
      assert.equal(isDeclarative(`if (globalThis.x === undefined) globalThis.x = 1;\n`), false);
      assert.equal(isDeclarative(`customElements.define("x-y", class {});\n`), false);
      assert.equal(isDeclarative(`Object.freeze(exports.Codes);\n`), false);
    });

    it("effectfulFiles: the .js files whose top level does more than declare, relative and sorted", async () => {
      const { effectfulFiles } = await import(MODULE);
      const { join } = await import("node:path");
      const dir = await Deno.makeTempDir({ prefix: "api-kit-effectful-" });
      try {
        await Deno.mkdir(join(dir, "elements"));
        await Deno.writeTextFile(join(dir, "plain.js"), EMITTED);
        await Deno.writeTextFile(join(dir, "plain.d.ts"), `customElements.define("x-y", X);\n`);
        await Deno.writeTextFile(
          join(dir, "elements", "mod.js"),
          `"use strict";\nfunction define() {}\ndefine();\n`,
        );
        await Deno.writeTextFile(join(dir, "table.js"), `const T = [];\nT.push(1);\n`);
        assert.deepEqual(effectfulFiles(dir), ["elements/mod.js", "table.js"]);
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    });

    it("./api-keys/nest built as CommonJS runs at most 12 files at require and works once used", {
      timeout: 180_000,
    }, async () => {
      const { lazyRequiresIn } = await import(MODULE);
      const { compile, compilerOptions } = await import(COMPILE);
      const { ROOT } = await import(CONFIG);
      const { join } = await import("node:path");
      const out = await Deno.makeTempDir({ prefix: "api-kit-lazy-" });
      try {
        const entries = ["api_keys/nest/mod", "api_keys/mod", "api_keys/storage/in_memory"];
        const { errors } = compile(
          entries.map((entry) => join(ROOT, `${entry}.ts`)),
          compilerOptions("cjs", out, false),
        );
        assert.deepEqual(errors, []);
        assert.ok(lazyRequiresIn(out, new Set(entries.map((entry) => `${entry}.js`))) > 10);
        const probe = `
        require("reflect-metadata"); require("@nestjs/core"); require("@nestjs/common");
        const before = new Set(Object.keys(require.cache));
        const nest = require(${JSON.stringify(join(out, "api_keys/nest/mod.js"))});
        const atImport = Object.keys(require.cache).filter((f) => !before.has(f)).length;
        const { ApiKeysService } = require(${JSON.stringify(join(out, "api_keys/service.js"))});
        const { InMemoryApiKeyStorage } = require(${
          JSON.stringify(join(out, "api_keys/storage/in_memory.js"))
        });
        const storage = new InMemoryApiKeyStorage();
        const service = new ApiKeysService({ peppers: { 1: "p".repeat(32) }, storage });
        service.create({ tenantId: "t", name: "k", scopes: [{ resource: "orders", level: "read" }] })
          .then(({ key }) => service.verify(key))
          .then((record) => console.log(JSON.stringify({
            atImport, module: typeof nest.ApiKeysModule.forRoot, scopes: record.scopes,
            later: Object.keys(require.cache).filter((f) => !before.has(f)).length,
          })));`;
        const result = spawnSync("node", ["-e", probe], {
          encoding: "utf8",
          env: { ...Deno.env.toObject(), NODE_PATH: join(ROOT, "node_modules") },
        });
        assert.equal(result.status, 0, result.stderr);
        const seen = JSON.parse(result.stdout.trim().split("\n").at(-1)!);
        assert.ok(seen.atImport <= 12, `${seen.atImport} files at require (at most 12)`);
        assert.equal(seen.module, "function");
        assert.deepEqual(seen.scopes, ["orders:read"]);
        assert.ok(seen.later > seen.atImport, "the service's files load once it is used");
      } finally {
        await Deno.remove(out, { recursive: true });
      }
    });
  },
);
