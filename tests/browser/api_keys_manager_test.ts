/**
 * `<api-keys-manager>` in headless Chromium (`_chromium.ts`) against a fake of
 * the admin routes (`_admin_fake.ts`): axe-core finds 0 WCAG 2.2 AA violations
 * in every state (empty, list in light and dark, create, reveal, confirm
 * revoke, error); keyboard alone creates, copies and revokes a key; focus and
 * announcements; the secret is gone from the DOM, the element and storage once
 * the reveal closes. Also asserts the bundle stays under 30 KB minified and
 * gzipped (not skipped without Chromium). `UPDATE_SCREENSHOT=1` rewrites
 * docs/settings-page.png.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import process from "node:process";
import { gzipSync } from "node:zlib";
import axe from "axe-core";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { bundleElements } from "../../demo/page_assets.ts";
import { type AdminFake, FAKE_CSRF, type FakeKey, startAdminFake } from "./_admin_fake.ts";
import { launchChromium, skipWithoutChromium } from "./_chromium.ts";

const SIZE_LIMIT = 30 * 1024;
const WCAG = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"];
const DAY = 86_400_000;

let bundle = "";
async function elementsBundle(): Promise<string> {
  return bundle ||= await bundleElements();
}

describe("<api-keys-manager> size", () => {
  it(`is under ${SIZE_LIMIT} bytes minified and gzipped`, async () => {
    const code = await elementsBundle();
    const gzipped = gzipSync(code, { level: 9 }).length;
    console.log(`client/elements/mod.ts: ${code.length} bytes minified, ${gzipped} gzipped`);
    assert.ok(code.includes("api-keys-manager"), "the bundle defines the element");
    assert.ok(gzipped < SIZE_LIMIT, `${gzipped} bytes gzipped`);
  });
});

/** axe-core's WCAG 2.2 AA violations on the page (shadow DOM included), as `id: targets`. */
async function violations(page: Page): Promise<string[]> {
  if (!await page.evaluate(() => "axe" in globalThis)) {
    await page.addScriptTag({ content: axe.source });
  }
  return page.evaluate(async (tags) => {
    // deno-lint-ignore no-explicit-any
    const result = await (globalThis as any).axe.run(document, {
      runOnly: { type: "tag", values: tags },
    });
    // deno-lint-ignore no-explicit-any
    return result.violations.map((v: any) =>
      // deno-lint-ignore no-explicit-any
      `${v.id}: ${v.nodes.map((n: any) => JSON.stringify(n.target)).join(" ")}`
    );
  }, WCAG);
}

/** In the page: text of the element's shadow root, or of its open dialog. */
function shadowText(page: Page, selector = "section"): Promise<string> {
  return page.evaluate((selector) => {
    const root = document.querySelector("api-keys-manager")!.shadowRoot!;
    return (root.querySelector(selector) as HTMLElement | null)?.innerText ?? "";
  }, selector);
}

/** Waits until the shadow root's `selector` text includes `text`. */
async function waitForText(page: Page, text: string, selector = "section"): Promise<void> {
  await page.waitForFunction(({ text, selector }) => {
    const root = document.querySelector("api-keys-manager")?.shadowRoot;
    return ((root?.querySelector(selector) as HTMLElement | null)?.innerText ?? "").includes(text);
  }, { text, selector });
}

/** The focused element inside the shadow root: tag, role-ish label and text. */
function focused(page: Page): Promise<string> {
  return page.evaluate(() => {
    const active = document.querySelector("api-keys-manager")!.shadowRoot!.activeElement;
    if (!active) return "";
    return `${active.tagName.toLowerCase()}:${
      active.getAttribute("aria-label") ?? (active as HTMLElement).innerText ?? ""
    }`.trim();
  });
}

/** Presses Tab until the focused element is `target` (at most 20 times). */
async function tabTo(page: Page, target: string, key = "Tab"): Promise<void> {
  for (let i = 0; i < 20; i++) {
    if (await focused(page) === target) return;
    await page.keyboard.press(key);
  }
  assert.fail(`never reached ${target}, last ${await focused(page)}`);
}

function key(id: string, fields: Partial<FakeKey> = {}): FakeKey {
  return {
    id,
    name: `key ${id}`,
    prefix: `sk_live_${id}`,
    environment: "live",
    scopes: ["orders:read"],
    status: "active",
    createdAt: new Date(Date.now() - 40 * DAY).toISOString(),
    lastUsedAt: null,
    expiresAt: null,
    ...fields,
  };
}

const skip = skipWithoutChromium("<api-keys-manager> browser test");

describe("<api-keys-manager> in headless Chromium", { skip }, () => {
  let fake: AdminFake;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;

  before(async () => {
    fake = await startAdminFake(await elementsBundle());
    browser = await launchChromium();
    context = await browser.newContext();
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: fake.origin });
    page = await context.newPage();
  });

  after(async () => {
    await browser?.close();
    await fake?.close();
  });

  async function open(path = "/"): Promise<void> {
    await page.goto(fake.origin + path);
    await page.waitForFunction(() => customElements.get("api-keys-manager") !== undefined);
  }

  it("empty: says so, 0 axe violations", async () => {
    fake.keys = [];
    await open();
    await waitForText(page, "No API keys yet.");
    assert.deepEqual(await violations(page), []);
    await page.evaluate(() =>
      document.querySelector("api-keys-manager")!.shadowRoot!.append(
        document.createElement("input"),
      )
    );
    const found = await violations(page);
    assert.equal(found.length, 1, "axe sees into the shadow root");
    assert.match(found[0], /^label: /);
  });

  it("list: name, prefix, environment, scopes, dates, badge, credits, usage; 0 violations in light and dark", async () => {
    fake.keys = [
      key("k901", { credits: 120, lastUsedAt: new Date(Date.now() - DAY).toISOString() }),
      key("k902", {
        name: "nightly export",
        scopes: ["orders:write", "invoices:read"],
        expiresAt: new Date(Date.now() + 2 * DAY).toISOString(),
      }),
      key("k903", { name: "old", status: "rotating" }),
    ];
    await open();
    await waitForText(page, "nightly export");
    await page.waitForFunction(() =>
      document.querySelector("api-keys-manager")!.shadowRoot!.querySelectorAll("svg").length === 3
    );
    const text = await shadowText(page);
    for (
      const expected of [
        "key k901",
        "sk_live_k901",
        "orders:write, invoices:read",
        "Never used",
        "Expires soon",
        "120",
        "Rotating",
        "Last 24 hours",
        "Credits",
      ]
    ) assert.ok(text.includes(expected), `${expected} in\n${text}`);
    const charts = await page.evaluate(() =>
      [...document.querySelector("api-keys-manager")!.shadowRoot!.querySelectorAll("svg")].map(
        (svg) => `${svg.getAttribute("role")}|${svg.getAttribute("aria-label")}`,
      )
    );
    assert.deepEqual(charts, Array(3).fill("img|46 requests in the last 24 hours"));
    assert.deepEqual(await violations(page), []);
    await page.emulateMedia({ colorScheme: "dark" });
    const background = await page.evaluate(() =>
      getComputedStyle(document.querySelector("api-keys-manager")!).backgroundColor
    );
    assert.equal(background, "rgb(13, 17, 23)");
    assert.deepEqual(await violations(page), []);
    await page.emulateMedia({ colorScheme: "light" });
  });

  it("error: the envelope's message in role=alert, a retry, 0 violations", async () => {
    fake.failList = true;
    try {
      await open();
      await waitForText(page, "The keys could not be loaded.", "[role=alert]");
      assert.ok(!(await shadowText(page)).includes("Loading"), "no endless loading line");
      assert.deepEqual(await violations(page), []);
      fake.failList = false;
      fake.keys = [];
      await page.evaluate(() =>
        (document.querySelector("api-keys-manager")!.shadowRoot!.querySelector(
          "[part=error] button",
        ) as HTMLButtonElement).click()
      );
      await waitForText(page, "No API keys yet.");
      assert.equal(
        await page.evaluate(() =>
          (document.querySelector("api-keys-manager")!.shadowRoot!.querySelector(
            "[part=error]",
          ) as HTMLElement).hidden
        ),
        true,
        "the error goes once a retry succeeds",
      );
    } finally {
      fake.failList = false;
    }
  });

  it("keyboard only: create -> reveal -> copy -> done -> revoke; focus, announcements, 0 violations", async () => {
    fake.keys = [];
    fake.requests = [];
    await open();
    await waitForText(page, "No API keys yet.");
    await page.waitForFunction(() =>
      !(document.querySelector("api-keys-manager")!.shadowRoot!.querySelector(
        "[part~=create-button]",
      ) as HTMLButtonElement).disabled
    );
    await tabTo(page, "button:Create key");
    await page.keyboard.press("Enter");
    assert.equal(await focused(page), "input:", "the create form focuses the name");
    assert.deepEqual(await violations(page), [], "create");
    await page.keyboard.type("ci deploy");
    await page.keyboard.press("Tab"); // environment: live
    await page.keyboard.press("Tab"); // orders:read
    await page.keyboard.press("Space");
    await tabTo(page, "button:Create key");
    await page.keyboard.press("Enter");

    await page.waitForFunction(() =>
      document.querySelector("api-keys-manager")!.shadowRoot!.querySelector(
        "dialog[open][role=alertdialog] [part=secret]",
      ) !== null
    );
    const secret = fake.secrets.at(-1)!;
    const created = fake.requests.find((r) => r.method === "POST" && r.path === "/admin/keys")!;
    assert.deepEqual(created.body, {
      name: "ci deploy",
      environment: "live",
      scopes: ["orders:read"],
      expiresIn: "never",
    });
    assert.equal(created.headers[FAKE_CSRF.header.toLowerCase()], FAKE_CSRF.value);
    assert.ok((await shadowText(page, "dialog")).includes(secret));
    assert.ok((await shadowText(page, "dialog")).includes("you will not see this again"));
    assert.equal(await focused(page), "button:Copy", "focus on the least destructive control");
    assert.deepEqual(await violations(page), [], "reveal");
    await page.keyboard.press("Enter");
    await waitForText(page, "Copied", "[role=status]");
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), secret);
    await page.keyboard.press("Tab");
    assert.equal(await focused(page), "button:Done");
    await page.keyboard.press("Enter");

    await waitForText(page, "ci deploy", "table");
    const leftovers = await page.evaluate((secret) => {
      const element = document.querySelector("api-keys-manager")!;
      const own = Object.getOwnPropertyNames(element).map((name) => {
        try {
          return JSON.stringify((element as unknown as Record<string, unknown>)[name]) ?? "";
        } catch {
          return "";
        }
      });
      const storage = [localStorage, sessionStorage].flatMap((store) =>
        Object.keys(store).map((name) => `${name}=${store.getItem(name)}`)
      );
      return [
        document.documentElement.outerHTML,
        element.shadowRoot!.innerHTML,
        (element.shadowRoot!.querySelector("section") as HTMLElement).innerText,
        ...own,
        ...storage,
      ].filter((text) => text.includes(secret)).length;
    }, secret);
    assert.equal(leftovers, 0, "the secret is gone once the reveal closes");
    assert.ok(!(await shadowText(page, "table")).includes(secret));

    await tabTo(page, "button:Revoke ci deploy");
    await page.keyboard.press("Enter");
    assert.equal(
      await page.evaluate(() =>
        document.querySelector("api-keys-manager")!.shadowRoot!.querySelector("dialog[open]")
          ?.getAttribute("role")
      ),
      "alertdialog",
    );
    assert.equal(await focused(page), "button:Cancel", "focus on the least destructive control");
    assert.deepEqual(await violations(page), [], "confirm revoke");
    await page.keyboard.press("Shift+Tab");
    assert.equal(await focused(page), "input:");
    await page.keyboard.type("ci deplo");
    await page.keyboard.press("Enter");
    assert.equal(fake.keys[0].status, "active", "a wrong name does not revoke");
    await page.keyboard.type("y");
    await page.keyboard.press("Enter");
    await waitForText(page, "Revoked", "[role=status]");
    assert.equal(fake.keys[0].status, "revoked");
    const revoke = fake.requests.find((r) => r.method === "DELETE")!;
    assert.equal(revoke.path, `/admin/keys/${fake.keys[0].id}`);
    assert.equal(revoke.headers[FAKE_CSRF.header.toLowerCase()], FAKE_CSRF.value);
  });

  it("rotates with a grace preset and reveals the new secret (Escape drops it); renames", async () => {
    fake.keys = [key("k950", { name: "billing" })];
    fake.requests = [];
    await open();
    await waitForText(page, "billing", "table");
    const shadow = page.locator("api-keys-manager");
    await shadow.getByRole("button", { name: "Rotate billing" }).click();
    const grace = shadow.getByLabel("Old key keeps working for");
    assert.equal(await grace.inputValue(), "24h", "the documented default");
    assert.deepEqual(await grace.locator("option").allInnerTexts(), [
      "None: the old key stops at once",
      "1 hour",
      "24 hours",
      "7 days",
    ]);
    await grace.selectOption("7d");
    await shadow.locator("dialog").getByRole("button", { name: "Rotate" }).click();
    await page.waitForFunction(() =>
      document.querySelector("api-keys-manager")!.shadowRoot!.querySelector("[part=secret]")
    );
    assert.deepEqual(fake.requests.find((r) => r.path.endsWith("/rotate"))!.body, {
      grace: "7d",
    });
    const secret = fake.secrets.at(-1)!;
    assert.ok((await shadowText(page, "dialog")).includes(secret));
    await page.keyboard.press("Escape"); // closing by Escape drops the secret too
    assert.equal(
      await page.evaluate(
        (secret) =>
          document.querySelector("api-keys-manager")!.shadowRoot!.innerHTML.includes(secret),
        secret,
      ),
      false,
    );
    await shadow.getByRole("button", { name: "Rename billing" }).first().click();
    await shadow.locator("dialog input").fill("billing v2");
    await shadow.getByRole("button", { name: "Save" }).click();
    await waitForText(page, "billing v2", "table");
    assert.deepEqual(fake.requests.find((r) => r.method === "PATCH")!.body, {
      name: "billing v2",
    });
  });

  it("i18n replaces strings; getToken sends a bearer token, and its throw is an error state", async () => {
    fake.keys = [key("k960")];
    fake.requests = [];
    await open();
    await waitForText(page, "key k960", "table");
    await page.evaluate(() => {
      // deno-lint-ignore no-explicit-any
      const element = document.querySelector("api-keys-manager") as any;
      element.i18n = { title: "Clés d'API", neverUsed: "Jamais utilisée", bogus: "x" };
      element.getToken = () => Promise.resolve("token-123");
      return element.refresh();
    });
    const text = await shadowText(page);
    assert.ok(text.includes("Clés d'API") && text.includes("Jamais utilisée"), text);
    assert.ok(text.includes("Create key"), "other strings stay English");
    assert.equal(fake.requests.at(-1)!.headers.authorization, "Bearer token-123");
    const error = await page.evaluate(async () => {
      // deno-lint-ignore no-explicit-any
      const element = document.querySelector("api-keys-manager") as any;
      const seen = new Promise((resolve) =>
        element.addEventListener("api-keys-error", (event: CustomEvent) => resolve(event.detail))
      );
      element.getToken = () => {
        throw new Error("session expired");
      };
      await element.refresh();
      return seen;
    });
    assert.deepEqual(error, { code: "TOKEN_ERROR", message: "getToken failed" });
    await waitForText(page, "getToken failed", "[role=alert]");
  });

  it("docs/settings-page.png (with UPDATE_SCREENSHOT=1)", {
    skip: process.env.UPDATE_SCREENSHOT !== "1",
  }, async () => {
    fake.keys = [
      key("k970", {
        name: "production server",
        scopes: ["orders:write", "invoices:read"],
        lastUsedAt: new Date(Date.now() - 3_600_000).toISOString(),
        credits: 9_500,
      }),
      key("k971", {
        name: "nightly export",
        expiresAt: new Date(Date.now() + 3 * DAY).toISOString(),
      }),
      key("k972", { name: "staging", environment: "test", prefix: "sk_test_k972" }),
    ];
    await page.setViewportSize({ width: 1280, height: 400 });
    await open();
    await page.waitForFunction(() =>
      document.querySelector("api-keys-manager")!.shadowRoot!.querySelectorAll("svg").length === 3
    );
    await page.locator("api-keys-manager").screenshot({ path: "docs/settings-page.png" });
  });
});
