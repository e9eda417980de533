/**
 * Headless Chromium for the browser tests: Debian's `chromium`, driven by
 * playwright-core. Without /usr/bin/chromium a suite is skipped with a
 * message, except under CI=true, where it fails: install it with
 * scripts/install_chromium.sh.
 */
import { existsSync } from "node:fs";
import process from "node:process";
import { type Browser, chromium } from "playwright-core";

const CHROMIUM = "/usr/bin/chromium";
const hasChromium = existsSync(CHROMIUM);

/**
 * The `skip` option of a suite that needs Chromium: a message (also printed)
 * when it is missing outside CI, else `false`.
 */
export function skipWithoutChromium(what: string): string | false {
  const skip = !hasChromium && process.env.CI !== "true"
    ? `${CHROMIUM} not found: ${what} skipped (run scripts/install_chromium.sh)`
    : false;
  if (skip) console.warn(`SKIP ${skip}`);
  return skip;
}

/** Launches headless Chromium; throws when it is missing (under CI=true). */
export function launchChromium(): Promise<Browser> {
  if (!hasChromium) {
    throw new Error(`${CHROMIUM} is missing under CI=true: run scripts/install_chromium.sh`);
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}
