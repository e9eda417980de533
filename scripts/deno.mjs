#!/usr/bin/env node
// Runs the pinned Deno (installed from the npm package `deno` into `.tools/`) with the given
// arguments, passing SIGINT and SIGTERM on to it and exiting as it does. Needs only Node and npm.
//
// Deno counts as installed only when `.tools/node_modules/.bin/deno --version` reports the pinned
// version: npm unpacks the `deno` package before the platform package with the binary (42 MB), so
// an install cut off midway leaves a package.json without a working binary. An install goes into
// a temporary folder in `.tools/`, moved into place when npm has finished.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { exitAs, runChild } from "./child.mjs";

const DENO_VERSION = "2.9.6";
const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const toolsDir = join(root, ".tools");
const modulesDir = join(toolsDir, "node_modules");
const denoBin = join(modulesDir, ".bin", "deno");
/** Name prefix of an install in progress (or one cut off, removed by the next install). */
const PARTIAL = "partial-";
/** What to do when `.tools/` holds a Deno that cannot run. */
const REMEDY = "delete .tools/ and run the command again";

/** The version `.tools/`'s Deno reports (`deno 2.9.6 (...)`), or undefined when it does not run. */
function installedVersion() {
  const run = spawnSync(denoBin, ["--version"], { encoding: "utf8" });
  return /^deno (\S+)/.exec(run.stdout ?? "")?.[1];
}

/** Installs the pinned Deno into a temporary folder of `.tools/`, then moves it into place. */
async function install() {
  console.error(`Installing deno@${DENO_VERSION} from npm into .tools/ ...`);
  mkdirSync(toolsDir, { recursive: true });
  for (const name of readdirSync(toolsDir).filter((name) => name.startsWith(PARTIAL))) {
    rmSync(join(toolsDir, name), { recursive: true, force: true });
  }
  const partial = mkdtempSync(join(toolsDir, PARTIAL));
  const ended = await runChild(
    "npm",
    [
      "install",
      "--no-audit",
      "--no-fund",
      "--no-save",
      // A stalled fetch fails (60 s) instead of waiting; each fetch is logged as it completes.
      "--fetch-timeout=60000",
      "--fetch-retries=1",
      "--loglevel=http",
      "--prefix",
      partial,
      `deno@${DENO_VERSION}`,
    ],
    // npm's stdout goes to stderr: this script's stdout is Deno's (`deno.mjs info --json`).
    { cwd: root, stdio: ["inherit", 2, "inherit"] },
  ).catch((error) => ({ code: 1, error }));
  if (ended.code !== 0) {
    rmSync(partial, { recursive: true, force: true });
    if (ended.received || ended.signal) exitAs(ended);
    console.error(
      `Installing deno@${DENO_VERSION} from npm failed (see above${
        ended.error ? `: ${ended.error.message}` : ""
      }): check the connection to the npm registry, then run the command again`,
    );
    process.exit(ended.code ?? 1);
  }
  if (existsSync(modulesDir)) renameSync(modulesDir, join(partial, "replaced"));
  renameSync(join(partial, "node_modules"), modulesDir);
  rmSync(partial, { recursive: true, force: true });
}

if (installedVersion() !== DENO_VERSION) {
  await install();
  if (installedVersion() !== DENO_VERSION) {
    console.error(
      `scripts/deno.mjs: .tools/node_modules/.bin/deno does not run as deno ${DENO_VERSION} ` +
        `after the install: ${REMEDY}`,
    );
    process.exit(1);
  }
}

const ended = await runChild(denoBin, process.argv.slice(2), { cwd: root }).catch((error) => {
  console.error(
    `scripts/deno.mjs: cannot run .tools/node_modules/.bin/deno (${error.code}): ${REMEDY}`,
  );
  process.exit(1);
});
exitAs(ended);
