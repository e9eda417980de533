#!/usr/bin/env node
// `npm start`: the demo server with its own light install (demo/start.json and demo/start.lock:
// only the packages the demo loads, not the development lock). Needs only Node and npm.
//
// 1. `deno install` of the demo's graph (through scripts/deno.mjs, which fetches the pinned Deno
//    first), watched: no download progress for STALL_SECONDS ends it with one line saying what to
//    retry;
// 2. `deno run` of demo/main.ts with this script's arguments (`npm start -- --port 8080`).
import { spawn, spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const deno = join(root, "scripts", "deno.mjs");
/** The demo's light config (`DEMO_START_CONFIG`: another copy of it, for the tests). */
const config = ["--config", process.env.DEMO_START_CONFIG ?? "demo/start.json"];
/** Seconds without any download progress after which the install is ended. */
const STALL_SECONDS = Number(process.env.DEMO_STALL_SECONDS ?? 60);

/** Runs the install phase; resolves to its exit code (1 after a stall, with the message). */
function install() {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [deno, "install", ...config, "--entrypoint", "demo/main.ts"],
      { cwd: root, stdio: ["ignore", "pipe", "pipe"], detached: true },
    );
    let stalled = false;
    let timer;
    const watch = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        stalled = true;
        try {
          process.kill(-child.pid, "SIGKILL");
        } catch {
          child.kill("SIGKILL");
        }
      }, STALL_SECONDS * 1000);
    };
    const relay = (to) => (chunk) => {
      watch();
      to.write(chunk);
    };
    child.stdout.on("data", relay(process.stdout));
    child.stderr.on("data", relay(process.stderr));
    watch();
    child.on("close", (code) => {
      clearTimeout(timer);
      if (stalled) {
        console.error(
          `npm start: no download progress for ${STALL_SECONDS} s (the npm registry is ` +
            "unreachable or the download stalled); check the connection, then run `npm start` " +
            "again (what was downloaded is kept)",
        );
        resolve(1);
      } else {
        resolve(code ?? 1);
      }
    });
  });
}

const installed = await install();
if (installed !== 0) process.exit(installed);
const run = spawnSync(
  process.execPath,
  [deno, "run", "-A", "--no-code-cache", ...config, "demo/main.ts", ...process.argv.slice(2)],
  { cwd: root, stdio: "inherit" },
);
process.exit(run.status ?? 1);
