/**
 * The demo's web page in headless Chromium (`_chromium.ts`): paste the reader
 * key, call the projects list, and see the success envelope and the client
 * guards' verdicts on the page; then the same page with no key shows the error
 * envelope.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Browser, Page } from "playwright-core";
import type { DemoServer } from "../../demo/server.ts";
import { startTestDemo } from "../demo/_demo.ts";
import { launchChromium, skipWithoutChromium } from "./_chromium.ts";

const skip = skipWithoutChromium("demo page test");

/** The verdict the page shows for each guard, in the page's order. */
async function guardVerdicts(page: Page): Promise<Record<string, string>> {
  const verdicts: Record<string, string> = {};
  for (const row of await page.locator("#guards tr[data-guard]").all()) {
    const name = await row.getAttribute("data-guard");
    verdicts[name ?? "?"] = await row.locator("td[data-result]").getAttribute("data-result") ??
      "";
  }
  return verdicts;
}

describe("demo web page in headless Chromium", { skip }, () => {
  let server: DemoServer;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];

  before(async () => {
    server = await startTestDemo();
    browser = await launchChromium();
    page = await browser.newPage();
    page.on("pageerror", (error) => pageErrors.push(error.message));
    await page.goto(`${server.url}/`);
  });

  after(async () => {
    await browser?.close();
    await server?.close();
  });

  it("shows the success envelope and the guards' verdicts for the reader key", async () => {
    await page.fill("#api-key", server.keys!.reader.key);
    await page.selectOption("#route", {
      label: "GET /api/projects?page=1&limit=5&sort=name&order=asc&status=active",
    });
    await page.click("#send");
    await page.waitForSelector("#guards tr[data-guard]");
    assert.equal(await page.textContent("#status"), "200 OK");
    assert.equal(await page.textContent("#verdict"), "success envelope");
    const body = JSON.parse((await page.textContent("#body")) ?? "null");
    assert.equal(body.success, true);
    assert.equal(body.data.length, 5);
    assert.equal(body.meta.pagination.page, 1);
    assert.deepEqual(await guardVerdicts(page), {
      isSuccess: "true",
      isError: "false",
      isProblemDetailsResponse: "false",
      isPaginated: "true",
      isOffsetPagination: "true",
      isCursorPagination: "false",
      isDeprecated: "false",
      hasResponseTime: "true",
      hasSort: "true",
      hasFilters: "true",
      hasFieldSelection: "false",
      hasRateLimit: "true",
    });
    assert.match((await page.textContent("#headers")) ?? "", /x-ratelimit-remaining: \d+/);
    assert.deepEqual(pageErrors, []);
  });

  it("shows the error envelope when the key is missing", async () => {
    await page.fill("#api-key", "");
    await page.click("#send");
    await page.locator("#status", { hasText: "401 Unauthorized" }).waitFor();
    assert.equal(await page.textContent("#verdict"), "error envelope: api_key_missing");
    const verdicts = await guardVerdicts(page);
    assert.equal(verdicts.isError, "true");
    assert.equal(verdicts.isSuccess, "false");
    assert.equal(verdicts.isPaginated, "false");
    assert.deepEqual(pageErrors, []);
  });
});
