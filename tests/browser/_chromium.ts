/**
 * Headless Chromium for the browser tests (`demo/smoke/chromium.ts`): without
 * /usr/bin/chromium a suite is skipped with a message, except under CI=true,
 * where it fails.
 */
import process from "node:process";
import { chromiumMissing } from "../../demo/smoke/chromium.ts";

export { launchChromium } from "../../demo/smoke/chromium.ts";

/** The `skip` option of a suite that needs Chromium: a message (also printed), else `false`. */
export function skipWithoutChromium(what: string): string | false {
  const missing = process.env.CI === "true" ? false : chromiumMissing();
  const skip = missing && `${what} skipped: ${missing}`;
  if (skip) console.warn(`SKIP ${skip}`);
  return skip;
}
