/**
 * docs/settings-page.md's two apps, the Deno.serve one and the Nest one (its
 * cookie-session setup), each run as tests/docs_test.ts runs it
 * (`servingSettingsPage`: the doc's bundle command on this checkout's
 * sources) or, where the consumer matrix left its app in `API_KIT_DOCS_APP`
 * (`.ci/run`, whose consumers stage runs first; required under CI=true), the
 * Nest one compiled on Node from the packed npm build, its bundle made from the
 * installed package; driven in headless Chromium signed in with the doc's session
 * cookie: the page lists the tenant's keys; keyboard alone creates a key,
 * copies it, closes the reveal, rotates it and revokes another, with focus
 * checked after each step and the secret gone after each reveal; axe-core
 * finds 0 WCAG 2.2 AA violations and the layout holds at 320, 375, 768, 1280 and 1920 px.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import process from "node:process";
import type { Browser, Page } from "playwright-core";
import { allBlocks, servingSettingsPage, SETTINGS_SESSION } from "../doc_blocks.ts";
import { launchChromium, skipWithoutChromium } from "./_chromium.ts";
import {
  assertFits,
  copyAndCloseByKeyboard,
  createByKeyboard,
  focused,
  revealedSecret,
  revokeByKeyboard,
  rotateByKeyboard,
  shadowText,
  violations,
  waitForText,
  WIDTHS,
} from "./_manager.ts";

const skip = skipWithoutChromium("settings page (the doc's apps) browser test");

/** The doc's app's keys as its admin routes list them, signed in. */
async function listed(origin: string): Promise<{ name: string; status: string }[]> {
  const answer = await fetch(`${origin}/account/api-keys/keys?status=all`, {
    headers: { cookie: `${SETTINGS_SESSION.name}=${SETTINGS_SESSION.value}` },
  });
  assert.equal(answer.status, 200);
  return (await answer.json()).keys;
}

/** The page fits and has 0 violations at every width of WIDTHS. */
async function checkWidths(page: Page, what: string): Promise<void> {
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 720 });
    assert.deepEqual(await violations(page), [], `${what} at ${width}`);
    await assertFits(page, `${what} at ${width}`);
  }
}

describe("docs/settings-page.md's apps in headless Chromium", { skip }, () => {
  const { examples } = allBlocks();
  let browser: Browser;

  before(async () => {
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
  });

  const nodeApp = process.env.API_KIT_DOCS_APP || undefined;
  const apps: [string, string | undefined][] = [
    ["settings-deno", undefined],
    ["settings-nest", nodeApp],
  ];
  for (const [name, app] of apps) {
    const how = app === undefined ? "under deno run" : "on Node from the packed npm build";
    it(`${name} ${how}: lists the keys; keyboard only create → copy → close → rotate → revoke, focus checked; axe and layout at 320–1920 px`, async () => {
      if (name === "settings-nest" && process.env.CI === "true") {
        assert.ok(
          app,
          "API_KIT_DOCS_APP is not set: .ci/run's consumers stage leaves its app there",
        );
      }
      if (app !== undefined) {
        assert.ok(
          existsSync(app),
          `API_KIT_DOCS_APP (${app}) holds no app: did test:consumers run?`,
        );
      }
      const pageErrors: string[] = [];
      const { status, output } = await servingSettingsPage(name, examples, async (origin) => {
        // A key made before the page opens: the element must list it.
        const seeded = await fetch(`${origin}/account/api-keys/keys`, {
          method: "POST",
          headers: {
            cookie: `${SETTINGS_SESSION.name}=${SETTINGS_SESSION.value}`,
            "x-requested-with": "api-keys-manager",
            "content-type": "application/json",
          },
          body: JSON.stringify({ name: "seeded ci", scopes: ["projects:read"] }),
        });
        assert.equal(seeded.status, 201, await seeded.text());
        const context = await browser.newContext({
          locale: "en-US",
          timezoneId: "UTC",
          viewport: { width: 1280, height: 720 },
        });
        try {
          await context.addCookies([{ ...SETTINGS_SESSION, url: origin }]);
          await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin });
          const page = await context.newPage();
          page.on("pageerror", (error) => pageErrors.push(error.message));
          const answer = await page.goto(`${origin}/settings`);
          assert.equal(answer?.status(), 200);
          await page.waitForFunction(() => customElements.get("api-keys-manager") !== undefined);
          await waitForText(page, "seeded ci", "table");
          await checkWidths(page, "list");

          await createByKeyboard(page, "browser key");
          await copyAndCloseByKeyboard(page, await revealedSecret(page));
          await waitForText(page, "browser key", "table");
          assert.match(await focused(page), /^button:Actions for browser key \(/, "created");

          await rotateByKeyboard(page, "browser key");
          await assertFits(page, "the rotation's reveal at 1280");
          await copyAndCloseByKeyboard(page, await revealedSecret(page));
          assert.match(await focused(page), /^button:Actions for browser key \(/, "rotated");
          await waitForText(page, "Replaced by", "table");
          await checkWidths(page, "rotation state");
          await page.setViewportSize({ width: 1280, height: 720 });

          await page.keyboard.press("Escape");
          await revokeByKeyboard(page, "seeded ci", async () => {
            const seededNow = (await listed(origin)).find((key) => key.name === "seeded ci");
            assert.equal(seededNow?.status, "active", "a wrong name does not revoke");
          });
          const seededNow = (await listed(origin)).find((key) => key.name === "seeded ci");
          assert.equal(seededNow?.status, "revoked");
          assert.match(await focused(page), /^button:Actions for browser key \(/, "revoked");
          const text = await shadowText(page, "table");
          assert.ok(text.includes("Revoked"), text);
          assert.deepEqual(pageErrors, []);
        } finally {
          await context.close();
        }
      }, app);
      assert.ok(status !== undefined, `no HTTP answer:\n${output}`);
    });
  }
});
