/**
 * docs/settings-page.md's Deno.serve app (its `settings-deno` block, run as
 * tests/docs_test.ts runs it, with the doc's bundle command on this
 * checkout's sources) driven in headless Chromium with the doc's session
 * cookie: the page loads, the element lists the tenant's keys, then create →
 * reveal → copy → close leaves the new key listed and its secret nowhere.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { allBlocks, bundleSettingsPage, servingExample } from "../doc_blocks.ts";
import { launchChromium, skipWithoutChromium } from "./_chromium.ts";
import { copyAndCloseByKeyboard, revealedSecret, violations, waitForText } from "./_manager.ts";

const skip = skipWithoutChromium("settings page (Deno.serve app) browser test");

describe("docs/settings-page.md's Deno.serve app in headless Chromium", { skip }, () => {
  const dir = mkdtempSync(join(tmpdir(), "api-kit-settings-deno-"));
  let browser: Browser;

  before(async () => {
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("the page loads, the element lists the keys, create → reveal → copy → close", async () => {
    const bundled = bundleSettingsPage(dir);
    assert.equal(bundled.status, 0, bundled.stderr);
    const { examples } = allBlocks();
    const pageErrors: string[] = [];
    const { status, output } = await servingExample(
      "settings-deno",
      examples,
      dir,
      async (origin) => {
        // A key made before the page opens: the element must list it.
        const seeded = await fetch(`${origin}/account/api-keys/keys`, {
          method: "POST",
          headers: {
            cookie: "sid=example",
            "x-requested-with": "api-keys-manager",
            "content-type": "application/json",
          },
          body: JSON.stringify({ name: "seeded ci", scopes: ["projects:read"] }),
        });
        assert.equal(seeded.status, 201, await seeded.text());
        const context = await browser.newContext({ locale: "en-US", timezoneId: "UTC" });
        try {
          await context.addCookies([{ name: "sid", value: "example", url: origin }]);
          await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin });
          const page = await context.newPage();
          page.on("pageerror", (error) => pageErrors.push(error.message));
          const answer = await page.goto(`${origin}/settings`);
          assert.equal(answer?.status(), 200);
          await page.waitForFunction(() => customElements.get("api-keys-manager") !== undefined);
          await waitForText(page, "seeded ci", "table");
          assert.deepEqual(await violations(page), [], "list");
          const manager = page.locator("api-keys-manager");
          await manager.getByRole("button", { name: "Create key" }).click();
          await manager.getByLabel("Name", { exact: true }).fill("browser key");
          await manager.locator("dialog input[type=checkbox]").first().check();
          await manager.locator("dialog").getByRole("button", { name: "Create key" }).click();
          await page.waitForFunction(() =>
            document.querySelector("api-keys-manager")!.shadowRoot!.querySelector(
              "dialog[open][role=alertdialog] [part=secret]",
            ) !== null
          );
          const secret = await revealedSecret(page);
          assert.ok(secret.length > 20, "a secret is revealed");
          await copyAndCloseByKeyboard(page, secret);
          await waitForText(page, "browser key", "table");
          const listed = await page.evaluate(() =>
            document.querySelector("api-keys-manager")!.shadowRoot!.querySelector("table")!
              .innerText
          );
          assert.ok(listed.includes("seeded ci"), listed);
          assert.ok(!listed.includes(secret));
          assert.deepEqual(pageErrors, []);
        } finally {
          await context.close();
        }
      },
    );
    assert.ok(status !== undefined, `no HTTP answer:\n${output}`);
  });
});
