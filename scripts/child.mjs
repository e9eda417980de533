// Child processes of scripts/deno.mjs and scripts/start_demo.mjs: SIGINT and SIGTERM passed on to
// them (spawnSync passes on nothing: a stopped `npm start` left the demo holding its port), and
// this process's exit made the child's. package.json's scripts start with `exec`: npm passes a
// SIGTERM it receives to its script's shell only, which would die without passing it on.
import { spawn } from "node:child_process";
import process from "node:process";

const SIGNALS = ["SIGINT", "SIGTERM"];

/**
 * Calls `send(signal)` for each SIGINT and SIGTERM this process receives, until `stop()`;
 * `received()` is the first one (undefined before any).
 */
export function forwardSignals(send) {
  let first;
  const handler = (signal) => {
    first ??= signal;
    send(signal);
  };
  for (const signal of SIGNALS) process.on(signal, handler);
  return {
    stop: () => SIGNALS.forEach((signal) => process.off(signal, handler)),
    received: () => first,
  };
}

/**
 * Runs `command` with this process's stdio (`options.stdio` to change it), passing SIGINT and
 * SIGTERM on to it. Resolves to how it ended, `{ code, signal, received }` (`received`: the
 * signal this process passed on, if any); rejects when it cannot start.
 */
export function runChild(command, args, options = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: "inherit", ...options });
    const signals = forwardSignals((signal) => child.kill(signal));
    child.on("error", (error) => {
      signals.stop();
      reject(error);
    });
    child.on("close", (code, signal) => {
      signals.stop();
      resolve({ code, signal, received: signals.received() });
    });
  });
}

/** Exits as a child ended: by the same signal, or with its code (1 without one). */
export function exitAs({ code, signal }) {
  if (signal) process.kill(process.pid, signal);
  process.exit(code ?? 1);
}
