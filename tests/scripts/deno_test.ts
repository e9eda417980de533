/**
 * scripts/deno.mjs (`npm test`, `npm run deno -- ...`): Deno counts as installed only when
 * `.tools/`'s binary runs and reports the pinned version, an install cut off midway is installed
 * again, and SIGINT/SIGTERM reach Deno, whose exit is the script's. A copy of the scripts runs in a
 * temporary root, against a local registry serving a fake Deno (tests/scripts/_fake_deno.ts).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import process from "node:process";
import {
  DENO_VERSION,
  fakeRegistry,
  installFakeDeno,
  removeRoot,
  runScript,
  scriptsRoot,
  signalReachesDeno,
} from "./_fake_deno.ts";

const noScripts = !existsSync(new URL("../../scripts/deno.mjs", import.meta.url)) &&
  "scripts/ is not in this test tree";
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const INSTALLING = new RegExp(`^Installing deno@${DENO_VERSION} from npm into \\.tools/`, "m");

/** A local port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe("scripts/deno.mjs", { skip: noScripts }, () => {
  it("a .tools/ whose Deno is missing, truncated or another version is installed again", async () => {
    const registry = await fakeRegistry();
    try {
      for (const broken of ["missing", "truncated", "another version"]) {
        const root = scriptsRoot();
        try {
          // package.json (what npm unpacks first) always names the pinned version.
          installFakeDeno(root, broken === "another version" ? "2.0.0" : DENO_VERSION);
          const modules = join(root, ".tools", "node_modules");
          if (broken === "missing") rmSync(join(modules, ".bin", "deno"));
          if (broken === "truncated") {
            writeFileSync(join(modules, "deno", "bin.cjs"), "\x7fELF\x02");
          }
          const env = { npm_config_registry: registry.url };
          const before = registry.tarballRequests();
          const first = await runScript(root, "deno.mjs", ["eval", "1"], env).exited;
          assert.equal(first.code, 0, `${broken}:\n${first.output}`);
          assert.match(first.output, INSTALLING, broken);
          assert.match(first.output, /^fake deno: eval 1$/m, broken);
          assert.equal(registry.tarballRequests(), before + 1, broken);
          assert.deepEqual(readdirSync(join(root, ".tools")), ["node_modules"], broken);
          // Now installed: the next run downloads nothing.
          const second = await runScript(root, "deno.mjs", ["eval", "2"], env).exited;
          assert.equal(second.code, 0, second.output);
          assert.doesNotMatch(second.output, INSTALLING);
          assert.equal(registry.tarballRequests(), before + 1, broken);
        } finally {
          removeRoot(root);
        }
      }
    } finally {
      await registry.close();
    }
  });

  it("an install killed during the download is installed again by the next run", async () => {
    const slow = await fakeRegistry({ payloadBytes: 3_000_000, bytesPerSecond: 250_000 });
    const fast = await fakeRegistry();
    const root = scriptsRoot();
    try {
      const first = runScript(root, "deno.mjs", ["eval", "1"], { npm_config_registry: slow.url }, {
        detached: true,
      });
      await first.waitFor(INSTALLING);
      while (slow.tarballRequests() === 0) await sleep(50);
      await sleep(1500);
      process.kill(-first.pid, "SIGKILL");
      await first.exited;
      const second = await runScript(root, "deno.mjs", ["eval", "1"], {
        npm_config_registry: fast.url,
      }).exited;
      assert.equal(second.code, 0, second.output);
      assert.match(second.output, INSTALLING);
      assert.match(second.output, /^fake deno: eval 1$/m);
      // Nothing is left of the cut-off install.
      assert.deepEqual(readdirSync(join(root, ".tools")), ["node_modules"]);
    } finally {
      removeRoot(root);
      await slow.close();
      await fast.close();
    }
  });

  it("an install that fails says what to check and leaves no partial install", async () => {
    const root = scriptsRoot();
    try {
      const { code, output } = await runScript(root, "deno.mjs", ["eval", "1"], {
        npm_config_registry: `http://127.0.0.1:${await closedPort()}/`,
        npm_config_fetch_retry_mintimeout: "100",
        npm_config_fetch_retry_maxtimeout: "200",
      }).exited;
      assert.equal(code, 1, output);
      assert.match(
        output,
        new RegExp(`^Installing deno@${DENO_VERSION} from npm failed .*check the connection`, "m"),
      );
      assert.deepEqual(readdirSync(join(root, ".tools")), []);
    } finally {
      removeRoot(root);
    }
  });

  it("a Deno that still does not run after the install: one line naming .tools/", async () => {
    const registry = await fakeRegistry({ reports: "2.0.0" });
    const root = scriptsRoot();
    try {
      const { code, output } = await runScript(root, "deno.mjs", ["eval", "1"], {
        npm_config_registry: registry.url,
      }).exited;
      assert.equal(code, 1, output);
      assert.match(output, INSTALLING);
      assert.doesNotMatch(output, /fake deno: eval/);
      assert.match(
        output,
        new RegExp(
          `^scripts/deno\\.mjs: \\.tools/node_modules/\\.bin/deno does not run as deno ` +
            `${DENO_VERSION} .*: delete \\.tools/ and run the command again$`,
          "m",
        ),
      );
    } finally {
      removeRoot(root);
      await registry.close();
    }
  });

  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    it(`${signal} reaches Deno, and the script exits with Deno's code`, async () => {
      const run = { script: "deno.mjs", args: ["test"] };
      const { code, output } = await signalReachesDeno("test", signal, run);
      assert.equal(code, 7, output);
    });
  }

  it("SIGTERM to `npm test` itself reaches Deno", async () => {
    // npm passes it on to its script's shell only
    const { code, output } = await signalReachesDeno("task", "SIGTERM", { npm: ["test"] });
    assert.notEqual(code, 0, output);
  });
});
