#!/usr/bin/env node
// `npm start`: the demo server with its own light install (demo/start.json and demo/start.lock:
// only the packages the demo loads, not the development lock). Needs only Node and npm.
//
// 1. `deno info --json` through scripts/deno.mjs, which fetches the pinned Deno first: where
//    Deno's npm cache is;
// 2. `deno install` of the demo's graph;
//    both watched: STALL_SECONDS without download progress (no output, no bytes arriving in
//    `.tools/` for 1, no package arriving in Deno's npm cache for 2) end them with one line saying
//    what to retry;
// 3. `deno run` of demo/main.ts with this script's arguments (`npm start -- --port 8080`).
// SIGINT and SIGTERM are passed on to whichever runs (the whole process group of 1 and 2).
import { spawn } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { exitAs, forwardSignals, runChild } from "./child.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const deno = join(root, "scripts", "deno.mjs");
/** The demo's light config (`DEMO_START_CONFIG`: another copy of it, for the tests). */
const config = ["--config", process.env.DEMO_START_CONFIG ?? "demo/start.json"];
/** Seconds without any download progress after which the install is ended. */
const STALL_SECONDS = Number(process.env.DEMO_STALL_SECONDS ?? 60);
/** How often the download's progress is measured. */
const POLL_MS = Math.min(1000, STALL_SECONDS * 250);

/** Bytes of the files under `path` (links not followed; 0 when it is missing). */
function bytesUnder(path) {
  let entries;
  try {
    entries = readdirSync(path, { withFileTypes: true });
  } catch {
    return 0;
  }
  let bytes = 0;
  for (const entry of entries) {
    const child = join(path, entry.name);
    if (entry.isDirectory()) bytes += bytesUnder(child);
    else if (entry.isFile()) bytes += statSync(child, { throwIfNoEntry: false })?.size ?? 0;
  }
  return bytes;
}

/** The folders in `path` (none when it is missing). */
function folders(path) {
  try {
    return readdirSync(path, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => join(path, entry.name));
  } catch {
    return [];
  }
}

/**
 * The package versions in Deno's npm cache (`<registry>/[@scope/]<name>/<version>/`): a count,
 * not bytes, so the poll stays cheap in a large cache (Deno unpacks a package once fetched).
 */
function cachedPackages(npmCache) {
  let count = 0;
  for (const registry of folders(npmCache)) {
    for (const entry of folders(registry)) {
      const names = entry.slice(registry.length + 1).startsWith("@") ? folders(entry) : [entry];
      for (const name of names) count += folders(name).length;
    }
  }
  return count;
}

/**
 * Runs `node scripts/deno.mjs ...args` in its own process group, relaying its stderr and (unless
 * `capture`) its stdout. The group is killed when for STALL_SECONDS it printed nothing and
 * `measure()` did not change: one line says what to retry, and this script exits 1. SIGINT and
 * SIGTERM are passed on to the group, and this script ends with the signal once it has exited;
 * another failure exits as it did. Resolves to its stdout when captured.
 */
function watched(args, measure, capture = false) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [deno, ...args], {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    const killGroup = (signal) => {
      try {
        process.kill(-child.pid, signal);
      } catch {
        child.kill(signal);
      }
    };
    const signals = forwardSignals(killGroup);
    let stdout = "";
    let stalled = false;
    let last = measure();
    let progressAt = Date.now();
    const poll = setInterval(() => {
      const now = measure();
      if (now !== last) {
        last = now;
        progressAt = Date.now();
      } else if (Date.now() - progressAt >= STALL_SECONDS * 1000) {
        stalled = true;
        clearInterval(poll);
        killGroup("SIGKILL");
      }
    }, POLL_MS);
    child.stdout.on("data", (chunk) => {
      progressAt = Date.now();
      if (capture) stdout += chunk;
      else process.stdout.write(chunk);
    });
    child.stderr.on("data", (chunk) => {
      progressAt = Date.now();
      process.stderr.write(chunk);
    });
    child.on("close", (code, signal) => {
      clearInterval(poll);
      signals.stop();
      if (signals.received()) exitAs({ signal: signals.received() });
      if (stalled) {
        console.error(
          `npm start: no download progress for ${STALL_SECONDS} s (the npm registry is ` +
            "unreachable or the download stalled); check the connection, then run `npm start` " +
            "again",
        );
        process.exit(1);
      }
      if (code !== 0) exitAs({ code, signal });
      resolve(stdout);
    });
  });
}

const { npmCache } = JSON.parse(
  await watched(["info", "--json", ...config], () => bytesUnder(join(root, ".tools")), true),
);
await watched(
  ["install", ...config, "--entrypoint", "demo/main.ts"],
  () => cachedPackages(npmCache),
);
exitAs(
  await runChild(
    process.execPath,
    [deno, "run", "-A", "--no-code-cache", ...config, "demo/main.ts", ...process.argv.slice(2)],
    { cwd: root },
  ),
);
