/**
 * Helpers of the tests of scripts/deno.mjs and scripts/start_demo.mjs: a copy of the scripts in a
 * temporary root, a fake Deno (a Node script) installed into its `.tools/` as npm would, a local
 * npm registry serving that fake as the package `deno` (at a chosen rate), the scripts run as
 * subprocesses, their signal case, and the wait for a subprocess's output (the demo tests' too).
 *
 * @module
 */
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

const SCRIPTS = fileURLToPath(new URL("../../scripts/", import.meta.url));

/** The Deno version scripts/deno.mjs pins ("" in a test tree without scripts/: the run on Node). */
export const DENO_VERSION: string = /const DENO_VERSION = "([^"]+)"/.exec(
  existsSync(join(SCRIPTS, "deno.mjs")) ? readFileSync(join(SCRIPTS, "deno.mjs"), "utf8") : "",
)?.[1] ?? "";

/**
 * The fake Deno's source: `--version` prints `deno <version> (fake)`, `info --json` a JSON object
 * with `npmCache`; with `FAKE_DENO=wait-<command>`, `<command>` prints `fake deno <command>: pid
 * <pid>` and waits, exiting 7 on SIGINT or SIGTERM; any other command prints its arguments.
 */
function fakeDenoSource(version: string): string {
  return `#!/usr/bin/env node
const args = process.argv.slice(2);
if (args[0] === "--version") {
  console.log("deno ${version} (fake)");
} else if (args[0] === "info") {
  console.log(JSON.stringify({ npmCache: require("node:path").join(__dirname, "npm_cache") }));
} else if (process.env.FAKE_DENO === "wait-" + args[0]) {
  const stop = (signal) => {
    console.log("fake deno: " + signal);
    process.exit(7);
  };
  process.on("SIGINT", stop).on("SIGTERM", stop);
  console.log("fake deno " + args[0] + ": pid " + process.pid);
  setInterval(() => {}, 1000);
} else {
  console.log("fake deno: " + args.join(" "));
}
`;
}

/** A temporary root holding a copy of package.json and scripts/*.mjs (and nothing in `.tools/`). */
export function scriptsRoot(): string {
  const root = mkdtempSync(join(tmpdir(), "deno-mjs-"));
  copyFileSync(join(SCRIPTS, "..", "package.json"), join(root, "package.json"));
  mkdirSync(join(root, "scripts"));
  for (const name of readdirSync(SCRIPTS).filter((name) => name.endsWith(".mjs"))) {
    copyFileSync(join(SCRIPTS, name), join(root, "scripts", name));
  }
  return root;
}

/** Removes a root made by {@link scriptsRoot}. */
export function removeRoot(root: string): void {
  rmSync(root, { recursive: true, force: true });
}

/**
 * Installs the fake Deno into `root/.tools` as npm does: the package (its package.json names the
 * pinned version) and its `.bin/deno` link; the binary reports `reports`.
 */
export function installFakeDeno(root: string, reports: string = DENO_VERSION): void {
  const modules = join(root, ".tools", "node_modules");
  mkdirSync(join(modules, "deno"), { recursive: true });
  mkdirSync(join(modules, ".bin"), { recursive: true });
  writeFileSync(
    join(modules, "deno", "package.json"),
    JSON.stringify({ name: "deno", version: DENO_VERSION }),
  );
  writeFileSync(join(modules, "deno", "bin.cjs"), fakeDenoSource(reports));
  chmodSync(join(modules, "deno", "bin.cjs"), 0o755);
  symlinkSync("../deno/bin.cjs", join(modules, ".bin", "deno"));
}

/** A local npm registry serving the fake Deno as the pinned `deno`. */
export interface FakeRegistry {
  /** The registry URL (for `npm_config_registry`). */
  url: string;
  /** How many times the `deno` tarball was requested. */
  tarballRequests(): number;
  /** Stops the server. */
  close(): Promise<void>;
}

/** `files` packed by `npm pack` (offline): the tarball's bytes. */
function pack(files: Record<string, string | Uint8Array>): Uint8Array {
  const work = mkdtempSync(join(tmpdir(), "fake-deno-package-"));
  try {
    const dir = join(work, "package");
    mkdirSync(dir);
    for (const [name, content] of Object.entries(files)) {
      writeFileSync(join(dir, name), content);
      chmodSync(join(dir, name), 0o755);
    }
    const packed = spawnSync("npm", ["pack", "--silent", "--pack-destination", work], {
      cwd: dir,
      encoding: "utf8",
    });
    if (packed.status !== 0) throw new Error(`npm pack failed: ${packed.stderr}`);
    return readFileSync(join(work, packed.stdout.trim().split("\n").pop()!));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * Serves the fake Deno (reporting `reports`) as `deno@<pinned version>`, laid out as the real one:
 * a small `deno` package with the `bin`, depending on `deno-payload` (`payloadBytes` of random,
 * incompressible bytes, standing for the platform package's binary), whose tarball is sent in
 * chunks at `bytesPerSecond`.
 */
export async function fakeRegistry(
  options: { reports?: string; payloadBytes?: number; bytesPerSecond?: number } = {},
): Promise<FakeRegistry> {
  const version = DENO_VERSION;
  const deno = { name: "deno", version, bin: { deno: "bin.cjs" } };
  const denoDependencies = { dependencies: { "deno-payload": version } };
  const payload = { name: "deno-payload", version };
  const packages = {
    deno: {
      manifest: { ...deno, ...denoDependencies },
      tarball: pack({
        "package.json": JSON.stringify({ ...deno, ...denoDependencies }),
        "bin.cjs": fakeDenoSource(options.reports ?? version),
      }),
    },
    "deno-payload": {
      manifest: payload,
      tarball: pack({
        "package.json": JSON.stringify(payload),
        "payload.bin": randomBytes(options.payloadBytes ?? 1024),
      }),
    },
  };
  const rate = options.bytesPerSecond ?? Infinity;
  let requests = 0;
  const server: Server = createServer((request, response) => {
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    for (const [name, { manifest, tarball }] of Object.entries(packages)) {
      if (request.url === `/${name}`) {
        const integrity = `sha512-${createHash("sha512").update(tarball).digest("base64")}`;
        const dist = { tarball: `${base}/${name}/-/${name}-${version}.tgz`, integrity };
        response.setHeader("Content-Type", "application/json");
        response.end(JSON.stringify({
          name,
          "dist-tags": { latest: version },
          versions: { [version]: { ...manifest, dist } },
        }));
        return;
      }
      if (request.url === `/${name}/-/${name}-${version}.tgz`) {
        if (name === "deno") requests++;
        response.setHeader("Content-Length", tarball.length);
        const slow = name === "deno-payload" && Number.isFinite(rate);
        const chunk = slow ? Math.max(1, Math.floor(rate / 10)) : tarball.length;
        let sent = 0;
        const send = () => {
          if (response.destroyed) return;
          response.write(tarball.subarray(sent, sent + chunk));
          sent += chunk;
          if (sent >= tarball.length) response.end();
          else setTimeout(send, 100);
        };
        send();
        return;
      }
    }
    response.statusCode = 404;
    response.end("{}");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    tarballRequests: () => requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A script's subprocess: its output so far, and how it ended. */
export interface ScriptProcess {
  /** The subprocess's pid. */
  pid: number;
  /** stdout and stderr so far, interleaved. */
  output(): string;
  /** Resolves when the output matches `pattern` (rejects after `timeoutMs` or at exit). */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Resolves when it exits: its code, or the signal that ended it. */
  exited: Promise<{ code: number | null; signal: string | null; output: string }>;
}

/**
 * Starts `node scripts/<script> ...args` in `root` with this environment plus `env`, and
 * an npm cache of its own (`root/npm_cache`) unless `env` names one.
 */
export function runScript(
  root: string,
  script: string,
  args: string[],
  env: Record<string, string> = {},
  options: { detached?: boolean } = {},
): ScriptProcess {
  return start(root, "node", [join("scripts", script), ...args], env, options.detached ?? false);
}

/** Starts `npm ...args` (`npm start`, `npm test`: package.json's scripts) as {@link runScript} does. */
export function runNpm(
  root: string,
  args: string[],
  env: Record<string, string> = {},
): ScriptProcess {
  return start(root, "npm", args, env, false);
}

function start(
  root: string,
  command: string,
  args: string[],
  env: Record<string, string>,
  detached: boolean,
): ScriptProcess {
  const child = spawn(command, args, {
    cwd: root,
    env: {
      ...process.env,
      npm_config_cache: join(root, "npm_cache"),
      npm_config_update_notifier: "false",
      NO_COLOR: "1",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
    detached,
  });
  let output = "";
  const listeners = new Set<() => void>();
  const append = (chunk: string) => {
    output += chunk;
    for (const listener of listeners) listener();
  };
  child.stdout!.setEncoding("utf8").on("data", append);
  child.stderr!.setEncoding("utf8").on("data", append);
  let ended = false;
  const exited = new Promise<{ code: number | null; signal: string | null; output: string }>(
    (resolve) => {
      child.on("close", (code, signal) => {
        ended = true;
        for (const listener of listeners) listener();
        resolve({ code, signal, output });
      });
    },
  );
  return {
    pid: child.pid!,
    output: () => output,
    exited,
    waitFor: async (pattern, timeoutMs = 60_000) => {
      const watched = { text: () => output, ended: () => ended, listeners };
      return (await waitForOutput(watched, pattern, timeoutMs)).match(pattern)!;
    },
  };
}

/** Output a subprocess has printed so far, watched for a pattern (see {@link waitForOutput}). */
export interface WatchedOutput {
  /** The output so far. */
  text(): string;
  /** Whether the process has ended (no more output comes). */
  ended(): boolean;
  /** Called on each new output and at the end. */
  listeners: Set<() => void>;
  /** What a failure shows (default: `text()`). */
  shown?(): string;
}

/**
 * Resolves with the output once it contains `pattern` (a string, or a RegExp's match); rejects,
 * showing the output, once the process ended without it or after `timeoutMs`.
 */
export function waitForOutput(
  watched: WatchedOutput,
  pattern: string | RegExp,
  timeoutMs: number,
): Promise<string> {
  const shown = () => watched.shown?.() ?? watched.text();
  return new Promise((resolve, reject) => {
    const check = () => {
      const text = watched.text();
      if (typeof pattern === "string" ? text.includes(pattern) : pattern.test(text)) {
        cleanup();
        resolve(text);
      } else if (watched.ended()) {
        cleanup();
        reject(new Error(`exited before printing ${pattern}:\n${shown()}`));
      }
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`timed out waiting for ${pattern}:\n${shown()}`));
    }, timeoutMs);
    const cleanup = () => {
      clearTimeout(timer);
      watched.listeners.delete(check);
    };
    watched.listeners.add(check);
    check();
  });
}

/**
 * The signal case of a script: in a fresh root with the fake Deno installed, starts `node
 * scripts/<script> ...args` or `npm ...args` (its Deno waiting in `command`), sends `signal` to it
 * once Deno printed its pid, waits until Deno is gone, checks that Deno received the signal, and
 * resolves with the run's exit.
 */
export async function signalReachesDeno(
  command: string,
  signal: NodeJS.Signals,
  run: { script: string; args: string[] } | { npm: string[] },
): Promise<{ code: number | null; signal: string | null; output: string }> {
  const root = scriptsRoot();
  let denoPid = 0;
  try {
    installFakeDeno(root);
    const env = { FAKE_DENO: `wait-${command}` };
    const started = "npm" in run
      ? runNpm(root, run.npm, env)
      : runScript(root, run.script, run.args, env);
    const pidLine = new RegExp(`^fake deno ${command}: pid (\\d+)$`, "m");
    denoPid = Number((await started.waitFor(pidLine))[1]);
    process.kill(started.pid, signal);
    await gone(denoPid); // before the exit: a Deno left running holds the output open
    const exit = await started.exited;
    assert.match(exit.output, new RegExp(`^fake deno: ${signal}$`, "m"));
    return exit;
  } finally {
    if (denoPid && alive(denoPid)) process.kill(denoPid, "SIGKILL");
    removeRoot(root);
  }
}

/** Whether process `pid` is still running (a zombie, exited but not yet reaped, is not). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return true; // no /proc (macOS): kill(0) is the answer
  }
}

/** Resolves once process `pid` has exited (rejects after `timeoutMs`). */
async function gone(pid: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (alive(pid)) {
    if (Date.now() > deadline) throw new Error(`process ${pid} still runs after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
