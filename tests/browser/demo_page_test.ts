/**
 * The demo's web page in headless Chromium (`_chromium.ts`): paste the reader
 * key, call the projects list, and see the success envelope and the client
 * guards' verdicts on the page; then the same page with no key shows the error
 * envelope. Then, on the real Nest demo and the real Fetch demo, the page's
 * `<api-keys-manager>` over the demo's own admin routes: axe-core finds 0
 * WCAG 2.2 AA violations in every state (list, create, reveal, confirm
 * revoke); only grantable scopes are offered; keyboard alone creates, copies
 * and revokes a key; the
 * secret is gone once the reveal closes; a key used from the request console
 * gets its usage bars and its "last used"; the trial key's row shows its
 * credits in the Credits column.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Browser, Page } from "playwright-core";
import type { FetchDemoServer } from "../../demo/fetch/server.ts";
import { TRIAL_KEY_CREDITS } from "../../demo/limits.ts";
import type { DemoKeys } from "../../demo/seed.ts";
import type { DemoServer } from "../../demo/server.ts";
import { call, startTestDemo, startTestFetchDemo } from "../demo/_demo.ts";
import { launchChromium, skipWithoutChromium } from "./_chromium.ts";
import {
  copyAndCloseByKeyboard,
  createByKeyboard,
  revealedSecret,
  revokeByKeyboard,
  shadowText,
  violations,
  waitForText,
} from "./_manager.ts";

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

/** The text of the Credits column in the element's row of the key named `name`, or null. */
function creditsCell(page: Page, name: string): Promise<string | null> {
  return page.evaluate((name) => {
    const table = document.querySelector("api-keys-manager")!.shadowRoot!.querySelector("table")!;
    const column = [...table.tHead!.rows[0].cells].findIndex((th) => th.innerText === "Credits");
    const row = [...table.tBodies[0].rows].find((tr) => tr.cells[0].innerText.startsWith(name));
    return column < 0 || row === undefined ? null : row.cells[column].innerText;
  }, name);
}

/** Both demos as the demo tests start them: in process, free port, random pepper, seeded keys. */
const DEMOS: Record<string, () => Promise<DemoServer | FetchDemoServer>> = {
  "Nest demo": () => startTestDemo(),
  "Fetch demo": startTestFetchDemo,
};

for (const [demo, start] of Object.entries(DEMOS)) {
  describe(`${demo}: the page's <api-keys-manager> in headless Chromium`, { skip }, () => {
    let server: DemoServer | FetchDemoServer;
    let keys: DemoKeys;
    let browser: Browser;
    let page: Page;
    const pageErrors: string[] = [];

    before(async () => {
      server = await start();
      keys = server.keys!;
      browser = await launchChromium();
      const context = await browser.newContext();
      await context.grantPermissions(["clipboard-read", "clipboard-write"], {
        origin: server.url,
      });
      page = await context.newPage();
      page.on("pageerror", (error) => pageErrors.push(error.message));
    });

    after(async () => {
      await browser?.close();
      await server?.close();
    });

    /** The demo tenant's keys as the admin routes list them. */
    async function listed(): Promise<{ id: string; name: string; status: string }[]> {
      const answer = await call(server, "GET", "/admin/keys", keys.admin.key);
      assert.equal(answer.status, 200);
      return answer.body.keys;
    }

    it("list: the demo tenant's seeded keys, signed in with no setup; 0 violations in light and dark", async () => {
      await page.goto(`${server.url}/`);
      await waitForText(page, "demo key limited to 2 requests a minute", "table");
      const text = await shadowText(page, "table");
      for (const name of ["demo admin", "demo reader", "demo test key"]) {
        assert.ok(text.includes(name), `${name} in\n${text}`);
      }
      assert.ok(text.includes("Expires soon"), "the key expiring in 3 days has its badge");
      assert.match(
        await creditsCell(page, "demo trial key") ?? "",
        new RegExp(`^${new Intl.NumberFormat("en-US").format(TRIAL_KEY_CREDITS)} left`),
      );
      assert.ok(!text.includes(keys.otherTenant.id), "another tenant's key is not listed");
      assert.ok(!text.includes(keys.admin.key), "no secret is shown");
      assert.deepEqual(await violations(page), []);
      await page.emulateMedia({ colorScheme: "dark" });
      assert.deepEqual(await violations(page), [], "dark");
      await page.emulateMedia({ colorScheme: "light" });
      assert.deepEqual(pageErrors, []);
    });

    it("roles: the create dialog offers only the scopes the admin key may grant; 0 violations", async () => {
      const manager = page.locator("api-keys-manager");
      await manager.getByRole("button", { name: "Create key" }).click();
      await manager.locator("dialog input").first().waitFor();
      assert.equal(await manager.getByRole("checkbox", { name: /billing:read/ }).count(), 0);
      assert.ok(await manager.getByRole("checkbox").count() > 0, "grantable scopes are offered");
      assert.deepEqual(await violations(page), []);
      await manager.getByRole("button", { name: "Cancel" }).click();
    });

    it("activity: the demo keeps no audit log, so config's can.audit is false and no Activity is offered", async () => {
      await page.goto(`${server.url}/`);
      await waitForText(page, "demo admin", "table");
      const manager = page.locator("api-keys-manager");
      assert.equal(await manager.getByRole("button", { name: "Activity", exact: true }).count(), 0);
      // The element offers Create key (can.create) beside where Activity would be: config answered.
      assert.equal(await manager.getByRole("button", { name: "Create key" }).count(), 1);
      assert.deepEqual(pageErrors, []);
    });

    it("keyboard only: create -> copy -> use it in the request console -> usage bars -> revoke", async () => {
      await page.goto(`${server.url}/`);
      await waitForText(page, "demo admin", "table");
      await createByKeyboard(page, "browser key");
      const secret = await revealedSecret(page);
      assert.match(secret, /^ak_live_/);
      await copyAndCloseByKeyboard(page, secret);
      await waitForText(page, "browser key", "table");
      const created = (await listed()).find((key) => key.name === "browser key")!;
      assert.equal(created.status, "active");

      // The console sends a request with it; the page reloads the list once usage is flushed.
      await page.fill("#api-key", secret);
      await page.selectOption("#route", { label: "GET /api/projects/prj_001" });
      await page.click("#send");
      await page.locator("#status", { hasText: "200 OK" }).waitFor();
      await page.waitForFunction(
        () => {
          const root = document.querySelector("api-keys-manager")!.shadowRoot!;
          const row = [...root.querySelectorAll("tr")].find((tr) =>
            tr.innerText.includes("browser key")
          );
          return row?.querySelector("svg[aria-label='1 request in the last 24 hours']") &&
            !row.innerText.includes("Never used");
        },
        undefined,
        { timeout: 15_000 },
      );
      assert.deepEqual(await violations(page), [], "list with usage");

      await revokeByKeyboard(page, "browser key", async () => {
        const key = (await listed()).find((key) => key.id === created.id)!;
        assert.equal(key.status, "active", "a wrong name does not revoke");
      });
      const after = (await listed()).find((key) => key.id === created.id);
      assert.notEqual(after?.status ?? "revoked", "active", "revoked (or no longer listed)");
      const answer = await call(server, "GET", "/api/projects/prj_001", secret);
      assert.equal(answer.status, 401);
      assert.equal(answer.body.error.code, "api_key_revoked");
      assert.deepEqual(pageErrors, []);
    });
  });
}
