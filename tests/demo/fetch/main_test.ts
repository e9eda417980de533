/**
 * `deno task demo:fetch --smoke` as a subprocess: the Nest demo's tour (less
 * its OpenAPI and ValidationPipe steps, with its leaked-key steps) against the
 * Fetch demo must pass, with every failure code it promises and the page's
 * `<api-keys-manager>` driven in Chromium; and the Fetch
 * demo's server loads no Nest package at run time.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import process from "node:process";
import {
  assertCreditSteps,
  assertPageSteps,
  demoEnv,
  ROOT,
  spawnDemo,
  TOUR_CODES,
} from "../_demo.ts";

/** Codes the tour must show (one line each at least). */
const CODES = [...TOUR_CODES, "INVALID_CURSOR", "PROJECT_CREATED"];

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: demoEnv(),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
}

describe("demo:fetch --smoke", () => {
  it("exits 0 and prints every step with its status and code", async () => {
    const { code, stdout, stderr } = await run(["run", "-A", "demo/fetch/main.ts", "--smoke"]);
    assert.equal(code, 0, `smoke failed:\n${stdout}\n${stderr}`);
    assert.match(stdout, /smoke tour: \d+ passed, 0 failed/);
    assert.doesNotMatch(stdout, /^FAIL/m);
    const passed = Number(/smoke tour: (\d+) passed/.exec(stdout)?.[1]);
    assert.ok(passed >= 44, `only ${passed} steps ran`);
    for (const expected of CODES) {
      assert.match(stdout, new RegExp(`^ok +\\d{3} ${expected} `, "m"), `no step with ${expected}`);
    }
    assert.match(stdout, /^ok +200 .*deprecated route/m);
    assert.match(stdout, /^ok +403 api_key_ip_not_allowed +localhost-only key from 203/m);
    assert.match(stdout, /^ok +200 .*localhost-only key from 127\.0\.0\.1/m);
    assert.match(stdout, /^ok +404 PROJECT_NOT_FOUND +unknown project: RFC 9457/m);
    assert.match(stdout, /^ok +200 .*field selection: \?fields=id,name trims data/m);
    assert.match(stdout, /Deno\.serve with the Fetch bindings/);
    assertCreditSteps(stdout);
    assertPageSteps(stdout);
    // the leaked-key routes: the page's report form and the partner route with the local signer
    for (
      const line of [
        /^ok +202 - +public report of a genuine key: the same fixed 202 \(POST \/api\/leaked-keys\)/m,
        /^ok +202 - +public report of not a key: the same fixed 202/m,
        /^ok +401 api_key_revoked +the publicly reported key is revoked/m,
        /^ok +401 secret_scanning_signature_invalid +partner report with a bad signature/m,
        /^ok +200 .*the key still works after the forged report/m,
        /^ok +200 - +signed partner report \(POST \/api\/github\/secret-scanning\)/m,
        /^ok +401 api_key_revoked +the key reported by secret scanning is revoked/m,
      ]
    ) assert.match(stdout, line);
  });

  it("its banner names no Swagger UI nor OpenAPI address (it serves none)", async () => {
    const demo = spawnDemo(["--port", "0"], {}, "demo/fetch/main.ts");
    try {
      const banner = await demo.waitFor("Ctrl+C stops the server.");
      assert.match(banner, /^ {2}web page: http:\/\/127\.0\.0\.1:\d+\/$/m);
      assert.doesNotMatch(banner, /Swagger|\/docs|openapi\.json/);
    } finally {
      demo.kill("SIGTERM");
      await demo.exited;
    }
  });

  it("refuses --adapter (it has none) with the usage, exit 2", async () => {
    const { code, stderr } = await run(["run", "-A", "demo/fetch/main.ts", "--adapter", "express"]);
    assert.equal(code, 2);
    assert.match(stderr, /has no --adapter/);
    assert.match(stderr, /Usage: deno task demo:fetch/);
  });
});

describe("the Fetch demo's server", () => {
  it("reaches no Nest package through its run-time imports", async () => {
    const { code, stdout } = await run(["info", "--json", "demo/fetch/server.ts"]);
    assert.equal(code, 0);
    const info = JSON.parse(stdout) as {
      roots: string[];
      modules: {
        specifier: string;
        kind?: string;
        dependencies?: { code?: { specifier?: string } }[];
      }[];
    };
    const modules = new Map(info.modules.map((module) => [module.specifier, module]));
    const seen = new Set<string>();
    const packages = new Set<string>();
    const stack = [...info.roots];
    while (stack.length > 0) {
      const specifier = stack.pop()!;
      if (seen.has(specifier)) continue;
      seen.add(specifier);
      const module = modules.get(specifier);
      if (specifier.startsWith("npm:") || module?.kind === "npm") {
        packages.add(specifier);
        continue;
      }
      for (const dependency of module?.dependencies ?? []) {
        if (dependency.code?.specifier) stack.push(dependency.code.specifier);
      }
    }
    assert.ok(seen.size > 20, "walked the graph");
    const nest = [...packages].filter((name) => /@nestjs|rxjs|reflect-metadata/.test(name));
    assert.deepEqual(nest, []);
  });
});
