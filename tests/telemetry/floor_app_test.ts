/**
 * The bridge on the lowest `@opentelemetry/api` of its peer range (1.3.0), in a process of its
 * own: on Deno from the sources (an import map swaps the API), on Node from the npm build (a
 * resolve hook swaps it; `deno task test:node` runs this file there).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import type { FloorReport } from "./floor_app.ts";

const FLOOR = "1.3.0";
const ON_DENO = "Deno" in globalThis;
/** The floor API's folder (Deno installs every version deno.json imports under `.deno/`). */
const FLOOR_DIR = new URL(
  `../../node_modules/.deno/@opentelemetry+api@${FLOOR}/node_modules/`,
  import.meta.url,
);
/** The app beside this file: `.ts` on Deno, the compiled `.js` on Node. */
const APP = fileURLToPath(new URL(`./floor_app.${ON_DENO ? "ts" : "js"}`, import.meta.url));

/** Deno: deno.json's import map with the API swapped. Node: a hook resolving it from the floor. */
function launcher(dir: string): { command: string; args: string[] } {
  if (ON_DENO) {
    const config = JSON.parse(readFileSync(new URL("../../deno.json", import.meta.url), "utf8"));
    const imports: Record<string, string> = {
      ...config.imports,
      "@opentelemetry/api": `npm:@opentelemetry/api@${FLOOR}`,
    };
    // deno.json maps subpaths (`pkg/sub`) by itself; an import map needs a prefix entry each.
    for (const [name, target] of Object.entries(imports)) {
      if (target.startsWith("npm:")) imports[`${name}/`] = `npm:/${target.slice(4)}/`;
    }
    const map = join(dir, "import_map.json");
    writeFileSync(map, JSON.stringify({ imports }));
    return { command: process.execPath, args: ["run", "-A", `--import-map=${map}`, APP] };
  }
  // Every `import "@opentelemetry/api"` (the built bridge's, the app's) resolves as if made
  // from inside the floor's folder, so it finds that version.
  const parent = JSON.stringify(new URL("floor.js", FLOOR_DIR).href);
  writeFileSync(
    join(dir, "hooks.mjs"),
    `export function resolve(specifier, context, next) {
  return specifier === "@opentelemetry/api"
    ? next(specifier, { ...context, parentURL: ${parent} })
    : next(specifier, context);
}\n`,
  );
  writeFileSync(
    join(dir, "register.mjs"),
    `import { register } from "node:module";\nregister("./hooks.mjs", import.meta.url);\n`,
  );
  return { command: process.execPath, args: ["--import", join(dir, "register.mjs"), APP] };
}

describe(`the bridge on @opentelemetry/api ${FLOOR} (${ON_DENO ? "Deno" : "Node"})`, () => {
  it("records instruments and spans (parents, links) through the lowest supported API", () => {
    const dir = mkdtempSync(join(tmpdir(), "api-kit-floor-"));
    try {
      const { command, args } = launcher(dir);
      const out = spawnSync(command, args, { encoding: "utf8", timeout: 120_000 });
      assert.equal(out.status, 0, out.stderr);
      const report = JSON.parse(out.stdout.trim().split("\n").at(-1)!) as FloorReport;
      assert.match(report.api, new RegExp(`api@${FLOOR.replaceAll(".", "\\.")}`));
      assert.deepEqual(report.recorded, {
        "rate_limit.checks": 3,
        "rate_limit.check.duration": 3,
        "rate_limit.store.duration": 2, // the first check alone, the two others coalesced
        "api_key.authorizations": 1,
        "api_key.authorization.duration": 1,
        "api_key.cache.lookups": 1,
      });
      const spans = report.spans.map((s) => `${s.name} < ${s.parent} [${s.links.join(",")}]`);
      assert.deepEqual(spans.sort(), [
        "api_key.storage.lookup < request []",
        "api_key.storage.touch < request []",
        "rate_limit.check < request []",
        "rate_limit.check < request []",
        "rate_limit.check < request []",
        "rate_limit.store.call < rate_limit.check [rate_limit.check,rate_limit.check]",
        "rate_limit.store.call < rate_limit.check [rate_limit.check]",
        "request < null []",
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
