#!/usr/bin/env node
// Runs the pinned Deno (installed from the npm package `deno` into `.tools/`)
// with the given arguments. Needs only Node and npm.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const DENO_VERSION = "2.9.6";
const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const toolsDir = join(root, ".tools");
const packageJson = join(toolsDir, "node_modules", "deno", "package.json");
const denoBin = join(toolsDir, "node_modules", ".bin", "deno");

function installedVersion() {
  if (!existsSync(packageJson)) return undefined;
  return JSON.parse(readFileSync(packageJson, "utf8")).version;
}

if (installedVersion() !== DENO_VERSION) {
  console.error(`Installing deno@${DENO_VERSION} from npm into .tools/ ...`);
  const install = spawnSync(
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
      toolsDir,
      `deno@${DENO_VERSION}`,
    ],
    { stdio: "inherit", cwd: root },
  );
  if (install.status !== 0) {
    console.error(
      `Installing deno@${DENO_VERSION} from npm failed (see above): check the connection to the npm registry, then run the command again`,
    );
    process.exit(install.status ?? 1);
  }
}

const run = spawnSync(denoBin, process.argv.slice(2), { stdio: "inherit", cwd: root });
process.exit(run.status ?? 1);
