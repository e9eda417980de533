/**
 * `npm start` (scripts/start_demo.mjs): a download that stalls ends the start with one line saying
 * what to retry, instead of waiting forever. The registry here is a local port that accepts
 * connections and never answers; the demo's light config (with its linked stand-ins) is copied into a temporary folder so its
 * `node_modules` and a fresh Deno cache start empty.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

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
    } finally {
      listener.close();
      await accepting.catch(() => {});
      for (const conn of held) conn.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
