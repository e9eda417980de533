/**
 * Headless Chromium for the smoke tour's page steps and the browser tests:
 * Debian's `chromium`, driven by playwright-core. Install it with
 * `scripts/install_chromium.sh`.
 *
 * @module
 */
import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";

/** Where Debian installs Chromium. */
export const CHROMIUM = "/usr/bin/chromium";

/** Why Chromium cannot run (it is not installed), or `false` when it is there. */
export function chromiumMissing(): string | false {
  return existsSync(CHROMIUM) ? false : `${CHROMIUM} not found (run scripts/install_chromium.sh)`;
}

/** Launches headless Chromium; throws when it is missing. */
export function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: run scripts/install_chromium.sh`);
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
