/**
 * `npm start` (scripts/start_demo.mjs): a download that stalls ends the start with one line saying
 * what to retry, instead of waiting forever. The registry here is a local port that accepts
 * connections and never answers; the demo's light config (with its linked stand-ins) is copied into a temporary folder so its
 * `node_modules` and a fresh Deno cache start empty. A slow download that keeps receiving bytes is
 * no stall, and SIGINT/SIGTERM reach the install and the demo (a copy of the scripts in a temporary
 * root with a fake Deno: tests/scripts/_fake_deno.ts).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  fakeRegistry,
  removeRoot,
  runScript,
  scriptsRoot,
  signalReachesDeno,
} from "./_fake_deno.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

// Deno APIs (a listener, a subprocess with its own environment): the run on Node skips it.
const onDeno = "Deno" in globalThis;

describe("scripts/start_demo.mjs", { skip: !onDeno && "runs on Deno" }, () => {
  it("a stalled download fails within the stall bound with one line saying what to retry", async () => {
    const held: Deno.Conn[] = [];
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const accepting = (async () => {
      for await (const conn of listener) held.push(conn); // never answered
    })();
    const dir = mkdtempSync(join(tmpdir(), "start-demo-"));
    try {
      copyFileSync(join(ROOT, "demo/start.json"), join(dir, "start.json"));
      copyFileSync(join(ROOT, "demo/start.lock"), join(dir, "start.lock"));
      cpSync(join(ROOT, "demo/stand_ins"), join(dir, "stand_ins"), { recursive: true });
      const started = performance.now();
      const { code, stderr } = await new Deno.Command("node", {
        args: ["scripts/start_demo.mjs", "--port", "0"],
        cwd: ROOT,
        env: {
          DEMO_START_CONFIG: join(dir, "start.json"),
          DEMO_STALL_SECONDS: "3",
          DENO_DIR: join(dir, "deno_dir"),
          NPM_CONFIG_REGISTRY: `http://127.0.0.1:${listener.addr.port}/`,
        },
        stdout: "null",
        stderr: "piped",
      }).output();
      const seconds = (performance.now() - started) / 1000;
      const text = new TextDecoder().decode(stderr);
      assert.equal(code, 1, text);
      assert.ok(seconds < 60, `took ${seconds.toFixed(1)} s`);
      assert.match(
        text,
        /^npm start: no download progress for 3 s .*run `npm start` again.*$/m,
      );
      assert.doesNotMatch(text, /is kept/); // a download cut off is not
    } finally {
      listener.close();
      await accepting.catch(() => {});
      for (const conn of held) conn.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a slow download that keeps receiving bytes is no stall", async () => {
    // About 5 s of download at 300 kB/s, with a stall bound of 2 s: npm prints nothing meanwhile.
    const registry = await fakeRegistry({ payloadBytes: 1_500_000, bytesPerSecond: 300_000 });
    const root = scriptsRoot();
    try {
      const started = performance.now();
      const { code, output } = await runScript(root, "start_demo.mjs", ["--port", "0"], {
        npm_config_registry: registry.url,
        DEMO_STALL_SECONDS: "2",
      }).exited;
      const seconds = (performance.now() - started) / 1000;
      assert.equal(code, 0, output);
      assert.doesNotMatch(output, /no download progress/);
      assert.match(output, /^fake deno: run .*demo\/main\.ts --port 0$/m);
      assert.ok(
        seconds > 4,
        `the download took ${seconds.toFixed(1)} s: not slower than the bound`,
      );
    } finally {
      removeRoot(root);
      await registry.close();
    }
  });

  const signalCases: [phase: string, signal: NodeJS.Signals][] = [
    ["install", "SIGINT"],
    ["install", "SIGTERM"],
    ["run", "SIGTERM"],
  ];
  for (const [phase, signal] of signalCases) {
    it(`${signal} during the ${phase} ends Deno's ${phase} too`, async () => {
      const run = { script: "start_demo.mjs", args: [] };
      const { code, signal: ended, output } = await signalReachesDeno(phase, signal, run);
      if (phase === "run") assert.equal(code, 7, output); // the demo's own exit code
      else assert.ok(ended === signal || code === 128 + (signal === "SIGINT" ? 2 : 15), output);
    });
  }

  it("SIGTERM to `npm start` itself (a process manager's, docker stop's) stops the demo", async () => {
    // npm passes it on to its script's shell only
    const { code, output } = await signalReachesDeno("run", "SIGTERM", { npm: ["start"] });
    assert.notEqual(code, 0, output);
  });
});
