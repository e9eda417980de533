/**
 * `<api-keys-manager>` in headless Chromium (`_chromium.ts`) against a fake of
 * the admin routes (`_admin_fake.ts`, the contract of issue 43): layout from
 * 320 to 1920 px (cards below the breakpoint, no horizontal scroll, long
 * names, dialogs inside the viewport); 1,000 keys (requests, tab stops,
 * search, filters, pages, usage not refetched after an action); the reveal's
 * copy feedback and copy failure; the facts (expiry, times, usage per hour,
 * credits, the tenant pool, rotation); roles and errors (401, 403, network,
 * 502); theme and axe-core (0 WCAG 2.2 AA violations) on light and dark host
 * pages; keyboard-only create → copy → rotate → revoke with focus checked.
 * Also asserts the bundle stays small (not skipped without Chromium).
 * `UPDATE_SCREENSHOT=1` rewrites docs/settings-page-*.png.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import process from "node:process";
import { gzipSync } from "node:zlib";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { MAX_API_KEY_NAME_LENGTH } from "../../api_keys/types.ts";
import { bundleElements } from "../../demo/page_assets.ts";
import {
  type AdminFake,
  FAKE_CONFIG,
  FAKE_CSRF,
  type FakeKey,
  startAdminFake,
} from "./_admin_fake.ts";
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
  tabTo,
  violations,
  waitForCharts,
  waitForText,
  WIDTHS,
} from "./_manager.ts";

const SIZE_LIMIT = 30 * 1024;
const DAY = 86_400_000;
/** The host pages of the fake, light and dark, with the element's background on each. */
const HOSTS = [["/", "rgb(255, 255, 255)"], ["/dark", "rgb(13, 17, 23)"]] as const;

let bundle = "";
async function elementsBundle(): Promise<string> {
  return bundle ||= await bundleElements();
}

describe("<api-keys-manager> size", () => {
  test(`is under ${SIZE_LIMIT} bytes minified and gzipped`, async () => {
    const code = await elementsBundle();
    const gzipped = gzipSync(code, { level: 9 }).length;
    console.log(`client/elements/mod.ts: ${code.length} bytes minified, ${gzipped} gzipped`);
    assert.ok(code.includes("api-keys-manager"), "the bundle defines the element");
    assert.ok(gzipped < SIZE_LIMIT, `${gzipped} bytes gzipped`);
  });
});

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

const LONG = "x".repeat(200);

/** A rotation pair named `name`: `old` rotating for another hour, replaced by `next`. */
function rotationPair(old: string, next: string, name: string): FakeKey[] {
  return [
    key(old, {
      name,
      status: "rotating",
      expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
      replacedByKeyId: next,
    }),
    key(next, { name, replacesKeyId: old }),
  ];
}

const skip = skipWithoutChromium("<api-keys-manager> browser test");
/** `ONLY=<part of a name>` runs only the matching cases of the suite below. */
const only = process.env.ONLY;
/** A case of the suite; `reset` restores the fake after it, whether it passed or not. */
const test = (name: string, run: () => Promise<void>, reset = () => {}) =>
  it(name, { skip: only !== undefined && !name.includes(only) }, async () => {
    try {
      await run();
    } finally {
      reset();
    }
  });

describe("<api-keys-manager> in headless Chromium", { skip }, () => {
  let fake: AdminFake;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;

  before(async () => {
    fake = await startAdminFake(await elementsBundle());
    browser = await launchChromium();
    context = await browser.newContext({ locale: "en-US", timezoneId: "Europe/Paris" });
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: fake.origin });
    page = await context.newPage();
  });

  after(async () => {
    await browser?.close();
    await fake?.close();
  });

  async function open(path = "/", width = 1280): Promise<void> {
    fake.requests = [];
    await page.setViewportSize({ width, height: 800 });
    await page.goto(fake.origin + path);
    await page.waitForFunction(() => customElements.get("api-keys-manager") !== undefined);
  }

  /** Runs `body` with `page` at 200 % zoom (a 1280x800 window at 200 %: 640x400 CSS px) on `path`. */
  async function atZoom(path: string, body: () => Promise<void>): Promise<void> {
    const main = page;
    const zoomed = await browser.newContext({
      locale: "en-US",
      timezoneId: "Europe/Paris",
      viewport: { width: 640, height: 400 },
      deviceScaleFactor: 2,
    });
    try {
      page = await zoomed.newPage();
      await page.goto(fake.origin + path);
      await body();
    } finally {
      await zoomed.close();
      page = main;
    }
  }

  const root = "document.querySelector('api-keys-manager').shadowRoot";
  const inShadow = <T>(expression: string): Promise<T> =>
    page.evaluate(`(() => { const r = ${root}; return ${expression}; })()`) as Promise<T>;

  /** Escape, then wait for the dialog's close (a later task than the key press) and its focus move. */
  async function escapeDialog(): Promise<void> {
    await page.keyboard.press("Escape");
    await page.waitForFunction(() =>
      !document.querySelector("api-keys-manager")!.shadowRoot!.querySelector("dialog[open]")
    );
    await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => setTimeout(done))));
  }

  /** Opens the actions of the row named `name` and clicks `action`. */
  async function act(name: string, action: string): Promise<void> {
    const element = page.locator("api-keys-manager");
    const toggle = element.getByRole("button", { name: new RegExp(`^Actions for ${name} \\(`) });
    if (await toggle.getAttribute("aria-expanded") !== "true") await toggle.click();
    await element.getByRole("button", { name: new RegExp(`^${action} ${name} \\(`) }).click();
  }

  test("layout 320–1920 px: cards below the breakpoint, no horizontal scroll, long names, dialogs fit", async () => {
    fake.keys = [
      key("k1", { name: LONG, prefix: `sk_live_${"y".repeat(40)}`, credits: 12 }),
      key("k2", { name: "nightly export", expiresAt: new Date(Date.now() + DAY).toISOString() }),
    ];
    for (const width of WIDTHS) {
      await open("/", width);
      await waitForCharts(page, 2);
      await assertFits(page, `list at ${width}`);
      const cards = await inShadow<string>("getComputedStyle(r.querySelector('tbody tr')).display");
      assert.equal(cards, width < 800 ? "block" : "table-row", `cards at ${width}`);
      const name = await inShadow<[string, boolean]>(
        "[r.querySelector('[data-id=k1] .name').title, r.querySelector('[data-id=k1] .name').getBoundingClientRect().right <= innerWidth]",
      );
      assert.deepEqual(name, [LONG, true], `the long name's title and box at ${width}`);
      await act(LONG, "Revoke");
      await assertFits(page, `revoke dialog at ${width}`);
      assert.ok((await shadowText(page, "dialog")).includes(`“${LONG}”`));
      await page.keyboard.press("Escape");
      await page.locator("api-keys-manager").getByRole("button", { name: "Create key" }).click();
      await assertFits(page, `create dialog at ${width}`);
      await page.keyboard.press("Escape");
    }
    const label = await page.locator("api-keys-manager").getByRole("button", {
      name: `Actions for ${LONG} (sk_live_${"y".repeat(40)})`,
    }).count();
    assert.equal(label, 1, "the accessible name carries the full name and prefix");
  });

  test("1,000 keys: 3 requests, 25 rows, ≤ 60 tab stops; search, filters and pages; usage once", async () => {
    fake.keys = Array.from({ length: 1000 }, (_, i) =>
      key(`k${1000 + i}`, {
        environment: i % 3 === 0 ? "test" : "live",
        prefix: `sk_${i % 3 === 0 ? "test" : "live"}_k${1000 + i}`,
      }));
    await open();
    await waitForCharts(page, 25);
    assert.deepEqual(
      fake.requests.filter((r) => r.path.startsWith("/admin/")).map((r) => `${r.method} ${r.path}`)
        .sort(),
      ["GET /admin/config", "GET /admin/keys", "GET /admin/usage"],
    );
    const list = fake.requests.find((r) => r.path === "/admin/keys")!;
    assert.equal(list.query.get("limit"), "25");
    const usage = fake.requests.find((r) => r.path === "/admin/usage")!.query;
    assert.equal(usage.get("keys")!.split(",").length, 25);
    const to = Date.parse(usage.get("to")!);
    assert.equal(
      Date.parse(usage.get("from")!),
      to - (to % 3_600_000) - 24 * 3_600_000,
      "the last 24 hours: the hour 24 hours before now's, whole, to now",
    );
    assert.equal(
      await inShadow<number>(
        "r.querySelector('svg[part=usage-chart]').querySelectorAll('rect').length",
      ),
      25,
      "a bar per hour asked",
    );
    assert.equal(await inShadow<number>("r.querySelectorAll('tbody tr').length"), 25);
    const tabStops = await inShadow<number>(
      "[...r.querySelectorAll('button,input,select,textarea,[tabindex]')].filter((e) => !e.disabled && e.tabIndex >= 0 && e.checkVisibility()).length",
    );
    assert.ok(tabStops <= 60, `${tabStops} tab stops`);

    fake.requests = [];
    await page.locator("api-keys-manager").getByRole("button", { name: "Next" }).click();
    await waitForText(page, "key k1974", "table");
    assert.equal(fake.requests.find((r) => r.path === "/admin/keys")!.query.get("cursor"), "25");
    await page.locator("api-keys-manager").getByRole("button", { name: "Previous" }).click();
    await waitForText(page, "key k1999", "table");

    await page.locator("api-keys-manager").getByLabel("Search by name or prefix").fill("k1500");
    await waitForText(page, "1 requests", "table").catch(() => {});
    await page.waitForFunction(() =>
      document.querySelector("api-keys-manager")!.shadowRoot!.querySelectorAll("tbody tr")
        .length === 1
    );
    assert.equal(fake.requests.findLast((r) => r.path === "/admin/keys")!.query.get("q"), "k1500");
    await page.locator("api-keys-manager").getByLabel("Search by name or prefix").fill("");
    await page.locator("api-keys-manager").getByLabel("Environment").first().selectOption("test");
    await page.waitForFunction(() =>
      [...document.querySelector("api-keys-manager")!.shadowRoot!.querySelectorAll("tbody code")]
        .every((code) => code.textContent!.startsWith("sk_test_"))
    );
    assert.equal(
      fake.requests.findLast((r) => r.path === "/admin/keys")!.query.get("environment"),
      "test",
    );
    const sortBy = async (sort: string, first: string) => {
      await page.locator("api-keys-manager").getByLabel("Sort").selectOption(sort);
      await page.waitForFunction(
        (first) =>
          document.querySelector("api-keys-manager")!.shadowRoot!.querySelector("tbody code")!
            .textContent === first,
        first,
      );
      return fake.requests.findLast((r) => r.path === "/admin/keys")!.query.get("sort");
    };
    assert.equal(await sortBy("name_asc", "sk_test_k1000"), "name_asc");
    assert.equal(await sortBy("", "sk_test_k1999"), null, "newest first: the server's default");
    await page.locator("api-keys-manager").getByLabel("Status").first().selectOption("revoked");
    await waitForText(page, "No keys match the search and filters.");

    await open();
    await waitForCharts(page, 25);
    fake.requests = [];
    await act("key k1999", "Revoke");
    await page.locator("api-keys-manager").locator("dialog input").fill("key k1999");
    await page.locator("api-keys-manager").locator("dialog").getByRole("button", {
      name: "Revoke",
    }).click();
    await waitForText(page, "Key revoked", "[part=status]");
    assert.deepEqual(fake.requests.map((r) => `${r.method} ${r.path}`), [
      "DELETE /admin/keys/k1999",
    ]);
    assert.equal(await focused(page), "button:Actions for key k1998 (sk_live_k1998)");
    await waitForCharts(page, 25); // kept, not refetched
    assert.ok((await shadowText(page, "table")).includes("Revoked"), "the row stays, marked");
  });

  test("reveal: copy feedback inside the dialog; on failure the secret stays selected and Done asks", async () => {
    fake.keys = [];
    await open();
    await waitForText(page, "No API keys yet.");
    await createByKeyboard(page, "ci deploy");
    const secret = fake.secrets.at(-1)!;
    await page.evaluate(() => {
      navigator.clipboard.writeText = () => Promise.reject(new Error("denied"));
    });
    await page.keyboard.press("Enter");
    await waitForText(page, "Copy failed", "dialog [role=status]");
    assert.equal(await page.evaluate(() => getSelection()!.toString()), secret, "selected");
    await page.locator("api-keys-manager").getByRole("button", { name: "Done" }).click();
    await waitForText(page, "You have not copied the key", "dialog");
    assert.equal(await focused(page), "button:Close without copying");
    assert.deepEqual(await violations(page), []);
    await page.keyboard.press("Escape");
    assert.equal(
      await inShadow<boolean>("r.querySelector('dialog').open"),
      true,
      "Escape asks too",
    );
    await page.keyboard.press("Enter");
    await page.waitForFunction(() =>
      !document.querySelector("api-keys-manager")!.shadowRoot!.querySelector("dialog[open]")
    );
    assert.ok(!(await inShadow<string>("r.innerHTML")).includes(secret));
    assert.match(await focused(page), /^button:Actions for ci deploy/, "focus on the new row");
  });

  test("reveal: Escape pressed again and again (Chrome then lets no cancel be refused) never closes an uncopied secret", async () => {
    fake.keys = [];
    await open();
    await waitForText(page, "No API keys yet.");
    await createByKeyboard(page, "impatient");
    const secret = fake.secrets.at(-1)!;
    for (let press = 1; press <= 6; press++) {
      await page.keyboard.press("Escape");
      await page.waitForTimeout(150); // the dialog's close event, a later task, has run
      assert.equal(
        await inShadow<boolean>("r.querySelector('dialog').matches(':modal')"),
        true,
        `Escape #${press}: still modal`,
      );
      assert.equal(await revealedSecret(page), secret, `Escape #${press}: the secret shown`);
      assert.equal(await focused(page), "button:Close without copying", `Escape #${press}`);
    }
    await page.keyboard.press("Enter");
    await page.waitForFunction(() =>
      !document.querySelector("api-keys-manager")!.shadowRoot!.querySelector("dialog[open]")
    );
    assert.ok(!(await inShadow<string>("r.innerHTML")).includes(secret), "gone once closed");
  });

  test("reveal: closed while the element is out of the page (nothing to reopen in), the secret leaves the DOM", async () => {
    fake.keys = [];
    await open();
    await waitForText(page, "No API keys yet.");
    await createByKeyboard(page, "detached");
    const secret = fake.secrets.at(-1)!;
    const left = await page.evaluate(async (secret) => {
      const element = document.querySelector("api-keys-manager")!;
      const dialog = element.shadowRoot!.querySelector("dialog")!;
      element.remove();
      dialog.close();
      await new Promise((resolve) => setTimeout(resolve, 100)); // its close event has run
      const kept = element.shadowRoot!.innerHTML.includes(secret);
      document.body.append(element);
      return kept;
    }, secret);
    assert.equal(left, false);
  });

  test("facts: expiry, times, usage per hour, credits, tenant pool; rotation marks the pair", async () => {
    const expires = new Date(Date.now() + 3 * DAY);
    fake.keys = [
      key("k301", {
        name: "billing",
        expiresAt: expires.toISOString(),
        lastUsedAt: new Date(Date.now() - 2 * 3_600_000).toISOString(),
        credits: 9_500,
        creditsRefillAmount: 10_000,
        creditsNextRefillAt: new Date(Date.now() + 5 * DAY).toISOString(),
      }),
      key("k302", { name: "pooled", creditsSharedBy: "tenant" }),
    ];
    fake.tenantCredits = { credits: 42_000, nextRefillAt: null, refillAmount: null };
    try {
      await open();
      await waitForCharts(page, 2);
      const text = await shadowText(page);
      const absolute = new Intl.DateTimeFormat("en-US", {
        dateStyle: "medium",
        timeStyle: "short",
        timeZone: "Europe/Paris",
      }).format(expires);
      for (
        const expected of [
          `Expires in 3 days (${absolute})`,
          "2 hours ago",
          "46 requests",
          "9,500 left",
          "+10,000 in 5 days",
          "Shared pool",
          "Shared credits: 42,000 left",
          "Never expires",
        ]
      ) assert.ok(text.includes(expected), `${expected} in\n${text}`);
      await page.locator("api-keys-manager").getByRole("img", { name: /46 requests/ }).first()
        .focus();
      await waitForText(page, ": 3 requests", ".tip");
      await page.keyboard.press("ArrowLeft");
      await waitForText(page, ": 2 requests", ".tip");
      // One request: its plural form, in the strings and in forms set through i18n.
      await page.keyboard.press("ArrowLeft");
      await waitForText(page, ": 1 request", ".tip");
      assert.match(
        await inShadow<string>("r.querySelector('.tip:not(:empty)').textContent"),
        /: 1 request$/,
      );
      await page.evaluate(() => {
        // deno-lint-ignore no-explicit-any
        (document.querySelector("api-keys-manager") as any).i18n = {
          usageTotal: { one: "{count} appel", other: "{count} appels" },
          usageHour: { one: "{time} : {count} appel", other: "{time} : {count} appels" },
          errorNotFound: { other: "a message takes no plural forms" },
          title: { other: "nor a label" },
        };
      });
      await waitForText(page, "46 appels");
      assert.deepEqual(
        await page.evaluate(() =>
          // deno-lint-ignore no-explicit-any
          Object.keys((document.querySelector("api-keys-manager") as any).i18n)
        ),
        ["usageTotal", "usageHour"],
      );
      await page.locator("api-keys-manager").getByRole("img", { name: /46 requests/ }).first()
        .focus();
      for (let i = 0; i < 2; i++) await page.keyboard.press("ArrowLeft");
      await waitForText(page, " : 1 appel", ".tip");
      assert.match(
        await inShadow<string>("r.querySelector('.tip:not(:empty)').textContent"),
        / : 1 appel$/,
      );
    } finally {
      fake.tenantCredits = null;
      await page.evaluate(() => {
        // deno-lint-ignore no-explicit-any
        (document.querySelector("api-keys-manager") as any).i18n = {};
      });
    }

    await act("billing", "Rotate");
    const grace = page.locator("api-keys-manager").getByLabel("Old key keeps working for");
    assert.equal(await grace.inputValue(), "1h", "the server's default grace");
    await page.locator("api-keys-manager").locator("dialog").getByRole("button", {
      name: "Rotate",
    }).click();
    await waitForText(page, "The old key sk_live_k301 keeps working until", "dialog");
    assert.deepEqual(fake.requests.find((r) => r.path.endsWith("/rotate"))!.body, {
      grace: "1h",
    });
    await page.locator("api-keys-manager").getByRole("button", { name: "Copy" }).click();
    await page.locator("api-keys-manager").getByRole("button", { name: "Done" }).click();
    assert.equal(await focused(page), "button:Actions for billing (sk_live_k301)");
    const rows = await inShadow<string[]>(
      "[...r.querySelectorAll('tbody tr')].map((row) => row.innerText.replace(/\\s+/g, ' '))",
    ).then((rows) => rows.filter((row) => row.startsWith("billing")));
    assert.match(rows[0], /billing sk_live_k\d+x.*Replaces sk_live_k301/);
    assert.match(rows[1], /Replaced by sk_live_k\d+x.*Rotating.*Stops in 1 hour/);
    await page.keyboard.press("Enter");
    const labels = await inShadow<string[]>(
      "[...r.querySelectorAll('.menu:not([hidden]) button')].map((b) => b.getAttribute('aria-label'))",
    );
    assert.deepEqual(labels, ["Rename billing (sk_live_k301)", "Revoke billing (sk_live_k301)"]);
  });

  test(
    "rotate: an unreadable graceExpiresAt still shows the new secret, once; the old key as the server lists it, not expired",
    async () => {
      const pageErrors: string[] = [];
      const onError = (error: Error) => pageErrors.push(error.message);
      page.on("pageerror", onError);
      try {
        // Malformed, null, out of Date's range, missing (a symbol: JSON leaves the field out).
        for (const unreadable of ["soon", null, "+275760-09-13T00:00:00.001Z", Symbol("missing")]) {
          const what = String(unreadable);
          fake.keys = [key("k310", { name: "payroll" })];
          fake.rotateGraceExpiresAt = unreadable;
          await open();
          await waitForText(page, "payroll", "table");
          await act("payroll", "Rotate");
          fake.requests = [];
          await page.locator("api-keys-manager").locator("dialog").getByRole("button", {
            name: "Rotate",
          }).click();
          await waitForText(page, "you will not see this again", "dialog");
          const dialog = await shadowText(page, "dialog");
          assert.ok(dialog.includes(fake.secrets.at(-1)!), `the new secret is shown (${what})`);
          assert.ok(!dialog.includes("keeps working until"), `no date said (${what})`);
          const manager = page.locator("api-keys-manager");
          await manager.getByRole("button", { name: "Copy", exact: true }).click();
          await manager.getByRole("button", { name: "Done" }).click();
          // The answer did not say when the old key stops: its row is the server's, read again.
          const listed = () =>
            fake.requests.some((r) => r.method === "GET" && r.path === "/admin/keys");
          for (let i = 0; i < 250 && !listed(); i++) {
            await new Promise((done) => setTimeout(done, 20));
          }
          assert.ok(listed(), `the list read again (${what})`);
          await waitForText(page, "Rotating", "tr[data-id=k310]");
          const old = await inShadow<string>("r.querySelector('tr[data-id=k310]').innerText");
          assert.doesNotMatch(old, /Expired/, what);
          assert.match(old, /Replaced by sk_live_k\d+x/, what);
          const rows = await inShadow<string>("r.querySelector('tbody').innerText");
          assert.match(rows, /Replaces sk_live_k310/, `the successor's row (${what})`);
        }
        assert.deepEqual(pageErrors, []);
      } finally {
        page.off("pageerror", onError);
      }
    },
    () => {
      fake.rotateGraceExpiresAt = undefined;
    },
  );

  test(
    "rotate without grace on a browser clock behind the server's: the old key is drawn expired at once",
    async () => {
      fake.keys = [key("k312", { name: "ledger" })];
      fake.serverAheadMs = 10 * 60_000;
      await open();
      await waitForText(page, "ledger", "table");
      await act("ledger", "Rotate");
      const dialog = page.locator("api-keys-manager").locator("dialog");
      await dialog.locator("select").selectOption("none");
      await dialog.getByRole("button", { name: "Rotate" }).click();
      await waitForText(page, "you will not see this again", "dialog");
      const manager = page.locator("api-keys-manager");
      await manager.getByRole("button", { name: "Copy", exact: true }).click();
      await manager.getByRole("button", { name: "Done" }).click();
      await waitForText(page, "Expired", "tr[data-id=k312]");
      const old = await inShadow<string>("r.querySelector('tr[data-id=k312]').innerText");
      assert.doesNotMatch(old, /Rotating/);
    },
    () => {
      fake.serverAheadMs = 0;
    },
  );

  test("create: a new key whose row fails to draw still reveals its secret", async () => {
    fake.keys = [key("k311", { name: "older" })];
    await open();
    await waitForText(page, "older", "table");
    const manager = page.locator("api-keys-manager");
    await manager.getByRole("button", { name: "Create key" }).click();
    await manager.getByLabel("Name", { exact: true }).fill("fresh");
    await manager.locator("dialog input[type=checkbox]").first().check();
    // Drawing a row formats its dates: from now on that throws (the page reloads at the next test).
    await page.evaluate(() =>
      Object.defineProperty(Intl.DateTimeFormat.prototype, "format", {
        get: () => () => {
          throw new RangeError("Invalid time value");
        },
      })
    );
    await manager.locator("dialog").getByRole("button", { name: "Create key" }).click();
    await waitForText(page, "you will not see this again", "dialog");
    assert.ok((await shadowText(page, "dialog")).includes(fake.secrets.at(-1)!));
  });

  test(
    "the tenant pool in place: a key created on the pool shows the pool above the list and its Credits column; a failed create keeps the form's input",
    async () => {
      fake.keys = [key("k801", { name: "plain" })];
      fake.newKeyFields = { credits: 7, creditsSharedBy: "tenant", creditsRefillAmount: null };
      fake.config = {
        ...structuredClone(FAKE_CONFIG),
        limits: {
          policies: [],
          credits: { amount: 7, refillAmount: null, refillEvery: null, sharedBy: "tenant" },
        },
      };
      await open();
      await waitForText(page, "plain", "table");
      assert.equal(await inShadow<boolean>("r.querySelector('[part=pool]').hidden"), true);
      const manager = page.locator("api-keys-manager");
      await manager.getByRole("button", { name: "Create key" }).click();
      const form = await shadowText(page, "dialog");
      assert.ok(form.includes("7 credits, shared by all your keys"), form);
      await manager.getByLabel("Name", { exact: true }).fill("pooled");
      await manager.locator("dialog input[type=checkbox]").first().check();
      fake.failAll = 500; // the admin routes' own failure: no key made
      await manager.locator("dialog").getByRole("button", { name: "Create key" }).click();
      await waitForText(page, "The server had a problem", "dialog [role=alert]");
      assert.equal(await manager.getByLabel("Name", { exact: true }).inputValue(), "pooled");
      fake.failAll = null;
      await manager.locator("dialog").getByRole("button", { name: "Create key" }).click();
      await manager.getByRole("button", { name: "Copy", exact: true }).click();
      await manager.getByRole("button", { name: "Done" }).click();
      await waitForText(page, "Shared credits: 7 left", "[part=pool]");
      const cells = await inShadow<number[]>(
        "[...r.querySelectorAll('tr')].map((row) => row.children.length)",
      );
      assert.equal(new Set(cells).size, 1, `one cell per column in every row: ${cells}`);
      const text = await shadowText(page, "table");
      for (const expected of ["Credits", "7 left", "Shared pool"]) {
        assert.ok(text.includes(expected), `${expected} in\n${text}`);
      }
      // A rotation's answer is fresher: the pool line and every row on the pool follow it.
      fake.newKeyFields = { ...fake.newKeyFields, credits: 5 };
      await act("pooled", "Rotate");
      await manager.locator("dialog").getByRole("button", { name: "Rotate" }).click();
      await manager.getByRole("button", { name: "Copy", exact: true }).click();
      await manager.getByRole("button", { name: "Done" }).click();
      await waitForText(page, "Shared credits: 5 left", "[part=pool]");
      const left = await inShadow<string[]>(
        "[...r.querySelectorAll('td[data-col=credits]')].map((c) => c.textContent)",
      );
      assert.deepEqual(left.filter((t) => t !== ""), ["5 leftShared pool", "5 leftShared pool"]);
    },
    () => {
      fake.failAll = null;
      fake.newKeyFields = {};
      fake.config = structuredClone(FAKE_CONFIG);
    },
  );

  test("roles: config.can hides actions; only the config's scopes and environments are offered", async () => {
    fake.config = {
      ...structuredClone(FAKE_CONFIG),
      can: { create: false, rename: false, rotate: false, revoke: true, audit: false },
    };
    fake.keys = [key("k401")];
    try {
      await open();
      await waitForText(page, "key k401", "table");
      assert.equal(
        await inShadow<boolean>("r.querySelector('[part~=create-button]').hidden"),
        true,
      );
      await page.locator("api-keys-manager").getByRole("button", { name: /^Actions for/ }).click();
      assert.deepEqual(
        await inShadow<string[]>(
          "[...r.querySelectorAll('.menu button')].map((b) => b.textContent)",
        ),
        ["Revoke"],
      );
      fake.config = {
        ...structuredClone(FAKE_CONFIG),
        environments: ["test"],
        scopes: [{ scope: "orders:read" }],
      };
      await open();
      await page.locator("api-keys-manager").getByRole("button", { name: "Create key" }).click();
      assert.deepEqual(
        await inShadow<string[]>(
          "[...r.querySelectorAll('dialog input[type=checkbox]')].map((b) => b.value)",
        ),
        ["orders:read"],
      );
      assert.equal(
        await inShadow<number>("r.querySelectorAll('dialog select').length"),
        1,
        "no environment choice",
      );
      const text = await shadowText(page, "dialog");
      assert.ok(text.includes("600 requests per 1 minute"), text);
      assert.ok(text.includes("10,000 credits, refilled with 10,000 every 30 days"), text);
      assert.ok(!text.includes("shared by"), `a key's own balance is no pool: ${text}`);
      assert.equal(
        await page.locator("api-keys-manager").getByLabel("Expires").inputValue(),
        "90d",
      );
      await page.locator("api-keys-manager").getByLabel("Name", { exact: true }).fill("ip key");
      await page.locator("api-keys-manager").locator("dialog input[type=checkbox]").first().check();
      await page.locator("api-keys-manager").getByLabel("IP allowlist").fill(
        "10.0.0.0/8\n192.0.2.1",
      );
      await page.locator("api-keys-manager").locator("dialog").getByRole("button", {
        name: "Create key",
      }).click();
      await page.waitForFunction(() =>
        document.querySelector("api-keys-manager")!.shadowRoot!.querySelector("[part=secret]")
      );
      assert.deepEqual(fake.requests.find((r) => r.method === "POST")!.body, {
        name: "ip key",
        environment: "test",
        scopes: ["orders:read"],
        expiresIn: "90d",
        allowedIpCidrs: ["10.0.0.0/8", "192.0.2.1"],
      });
    } finally {
      fake.config = structuredClone(FAKE_CONFIG);
    }
  });

  test("create: an expiry date and time instead of a preset, sent as the instant", async () => {
    fake.keys = [key("k450")];
    await open("/", 320);
    await waitForText(page, "key k450", "table");
    const manager = page.locator("api-keys-manager");
    await manager.getByRole("button", { name: "Create key" }).click();
    const date = manager.getByLabel("Expiry date and time");
    assert.equal(await date.isVisible(), false, "the date field waits for its choice");
    await manager.getByLabel("Expires").selectOption({ label: "On a date…" });
    assert.equal(await date.isVisible(), true);
    await manager.getByLabel("Name", { exact: true }).fill("dated key");
    await manager.locator("dialog input[type=checkbox]").first().check();
    const submit = manager.locator("dialog").getByRole("button", { name: "Create key" });
    await submit.click();
    assert.equal(
      fake.requests.filter((r) => r.method === "POST").length,
      0,
      "an empty date is not sent",
    );
    await assertFits(page, "create dialog with the date field at 320 px");
    await date.fill("2031-03-15T14:30");
    await submit.click();
    await page.waitForFunction(() =>
      document.querySelector("api-keys-manager")!.shadowRoot!.querySelector("[part=secret]")
    );
    const sent = fake.requests.find((r) => r.method === "POST")!.body as Record<string, unknown>;
    // Europe/Paris (the context's time zone) is UTC+1 in March.
    assert.equal(sent.expiresAt, "2031-03-15T13:30:00.000Z");
    assert.ok(!("expiresIn" in sent), JSON.stringify(sent));
  });

  test("create: a name of 200 code points (200 emoji) is sent whole; one more is refused before sending", async () => {
    fake.keys = [key("k455")];
    await open();
    await waitForText(page, "key k455", "table");
    const manager = page.locator("api-keys-manager");
    await manager.getByRole("button", { name: "Create key" }).click();
    const name = manager.getByLabel("Name", { exact: true });
    const submit = manager.locator("dialog").getByRole("button", { name: "Create key" });
    await manager.locator("dialog input[type=checkbox]").first().check();
    await name.fill("🔑".repeat(MAX_API_KEY_NAME_LENGTH - 1) + "nn");
    await submit.click();
    assert.equal(
      await name.evaluate((input: HTMLInputElement) => input.validationMessage),
      "Use at most 200 characters.",
    );
    assert.equal(fake.requests.filter((r) => r.method === "POST").length, 0, "not sent");
    const emoji = "🔑".repeat(MAX_API_KEY_NAME_LENGTH);
    await name.fill(emoji);
    assert.equal(await name.inputValue(), emoji, "400 UTF-16 units typed whole");
    await submit.click();
    await page.waitForFunction(() =>
      document.querySelector("api-keys-manager")!.shadowRoot!.querySelector("[part=secret]")
    );
    const sent = fake.requests.find((r) => r.method === "POST")!.body as Record<string, unknown>;
    assert.equal(sent.name, emoji);
  });

  test("create: a name of spaces only or no scope ticked is refused before sending, on its field; fixed, it is sent", async () => {
    fake.keys = [key("k456")];
    await open();
    await waitForText(page, "key k456", "table");
    const manager = page.locator("api-keys-manager");
    await manager.getByRole("button", { name: "Create key" }).click();
    const name = manager.getByLabel("Name", { exact: true });
    const box = manager.locator("dialog input[type=checkbox]").first();
    const submit = manager.locator("dialog").getByRole("button", { name: "Create key" });
    const message = (field: typeof name) =>
      field.evaluate((input: HTMLInputElement) => input.validationMessage);
    await name.fill("   ");
    await box.check();
    await submit.click();
    assert.equal(await message(name), "Use at least one character other than a space.");
    await name.fill("ci");
    await box.uncheck();
    await submit.click();
    assert.equal(await message(box), "Choose at least one scope.");
    assert.equal(fake.requests.filter((r) => r.method === "POST").length, 0, "not sent");
    await box.check();
    assert.equal(await message(box), "", "valid once one is ticked");
    await submit.click();
    await page.waitForFunction(() =>
      document.querySelector("api-keys-manager")!.shadowRoot!.querySelector("[part=secret]")
    );
    const sent = fake.requests.find((r) => r.method === "POST")!.body as Record<string, unknown>;
    assert.deepEqual([sent.name, (sent.scopes as string[]).length], ["ci", 1]);
  });

  /** Calls the element's `refresh()` (a reload of the list, the config only once reset). */
  const refresh = () =>
    page.evaluate(() =>
      // deno-lint-ignore no-explicit-any
      (document.querySelector("api-keys-manager") as any).refresh()
    );

  /** An error state: every admin request fails with `failure`; the list cleared, or kept and marked stale. */
  function failing(failure: AdminFake["failAll"], message: string, stale: boolean): MatrixState {
    return {
      async enter() {
        fake.failAll = failure;
        await refresh();
        await waitForText(page, message, "[role=alert]");
      },
      async check() {
        const text = await shadowText(page);
        assert.ok(!text.includes("API key is missing") && !text.includes("Bad gateway"), text);
        assert.equal(text.includes("kept"), stale, `${failure}: list kept only when stale`);
        if (stale) {
          assert.ok(text.includes("may be out of date"), text);
          assert.equal(
            await inShadow<boolean>(
              "[...r.querySelectorAll('tbody button')].every((b) => b.disabled)",
            ),
            true,
          );
        } else {
          assert.equal(
            await inShadow<boolean>("r.querySelector('[part~=create-button]').hidden"),
            true,
          );
        }
      },
      async leave() {
        fake.failAll = null;
        await refresh();
        await waitForText(page, "kept", "table");
      },
    };
  }

  /** A state of the page, entered and left in place (one page per width and host page). */
  interface MatrixState {
    enter(): Promise<void>;
    check?(): Promise<void>;
    leave?(): Promise<void>;
  }

  /** The per-state matrix: each state, each checked at every width on a light and a dark host page. */
  const STATES: Record<string, MatrixState> = {
    "list with a rotation pair": {
      enter: () => waitForText(page, "Replaced by sk_live_k512", "table"),
      async check() {
        const text = await shadowText(page, "table");
        assert.ok(text.includes("Rotating") && text.includes("Replaces sk_live_k511"), text);
      },
    },
    "actions menu": {
      enter: () =>
        page.locator("api-keys-manager").getByRole("button", { name: /^Actions for kept/ })
          .click(),
      leave: () =>
        page.locator("api-keys-manager").getByRole("button", { name: /^Actions for kept/ })
          .click(),
    },
    "create dialog": {
      enter: () =>
        page.locator("api-keys-manager").getByRole("button", { name: "Create key" }).click(),
      leave: escapeDialog,
    },
    "reveal (copied)": {
      async enter() {
        const manager = page.locator("api-keys-manager");
        await manager.getByRole("button", { name: "Create key" }).click();
        await manager.getByLabel("Name", { exact: true }).fill("t");
        await manager.locator("dialog input[type=checkbox]").first().check();
        await manager.locator("dialog").getByRole("button", { name: "Create key" }).click();
        await waitForText(page, "you will not see this again", "dialog");
        await manager.getByRole("button", { name: "Copy", exact: true }).click();
        await waitForText(page, "Copied", "dialog");
      },
      leave: escapeDialog,
    },
    "confirm revoke": {
      enter: () => act("kept", "Revoke"),
      leave: escapeDialog,
    },
    "rotate dialog": {
      enter: () => act("kept", "Rotate"),
      leave: escapeDialog,
    },
    "empty list": {
      async enter() {
        fake.keys = [];
        await refresh();
        await waitForText(page, "No API keys yet.");
      },
      async leave() {
        fake.keys = matrixKeys();
        await refresh();
        await waitForText(page, "kept", "table");
      },
    },
    "viewer role (read-only)": {
      async enter() {
        fake.config = {
          ...structuredClone(FAKE_CONFIG),
          can: { create: false, rename: false, rotate: false, revoke: false, audit: false },
        };
        // Another base-url for the same routes: a change, so the config is read again.
        await page.evaluate(() =>
          document.querySelector("api-keys-manager")!.setAttribute("base-url", "/admin/")
        );
        await page.waitForFunction(() =>
          (document.querySelector("api-keys-manager")!.shadowRoot!.querySelector(
            "[part~=create-button]",
          ) as HTMLElement).hidden
        );
        await waitForText(page, "kept", "table");
      },
      async check() {
        assert.deepEqual(
          await inShadow<string[]>(
            "[...r.querySelectorAll('tbody button')].filter((b) => b.checkVisibility()).map((b) => b.textContent)",
          ),
          [],
          "no action offered",
        );
      },
      async leave() {
        fake.config = structuredClone(FAKE_CONFIG);
        await page.evaluate(() =>
          document.querySelector("api-keys-manager")!.setAttribute("base-url", "/admin")
        );
        await page.waitForFunction(() =>
          !(document.querySelector("api-keys-manager")!.shadowRoot!.querySelector(
            "[part~=create-button]",
          ) as HTMLElement).hidden
        );
      },
    },
    "copy-failure reveal": {
      async enter() {
        await page.evaluate(() => {
          navigator.clipboard.writeText = () => Promise.reject(new Error("denied"));
        });
        const manager = page.locator("api-keys-manager");
        await manager.getByRole("button", { name: "Create key" }).click();
        await manager.getByLabel("Name", { exact: true }).fill("unsaved");
        await manager.locator("dialog input[type=checkbox]").first().check();
        await manager.locator("dialog").getByRole("button", { name: "Create key" }).click();
        await manager.getByRole("button", { name: "Copy", exact: true }).click();
        await waitForText(page, "Copy failed", "dialog [role=status]");
        await manager.getByRole("button", { name: "Done" }).click();
        await waitForText(page, "You have not copied the key", "dialog");
      },
      async leave() {
        await page.locator("api-keys-manager").getByRole("button", {
          name: "Close without copying",
        }).click();
        await page.waitForFunction(() =>
          !document.querySelector("api-keys-manager")!.shadowRoot!.querySelector("dialog[open]")
        );
      },
    },
    "401 signed out": failing(401, "Your session has ended", false),
    "403 forbidden": failing(403, "You do not have permission", false),
    "network error (stale list)": failing("network", "The server could not be reached", true),
    "502 (stale list)": failing(502, "The server had a problem", true),
  };

  /** The matrix's keys: one used with credits, one expiring soon, a rotation pair. */
  function matrixKeys(): FakeKey[] {
    return [
      key("k501", { name: "kept", credits: 5, lastUsedAt: new Date().toISOString() }),
      key("k503", { name: "soon", expiresAt: new Date(Date.now() + DAY).toISOString() }),
      ...rotationPair("k511", "k512", "deploy"),
    ];
  }

  test(
    "every state at 320–1920 px and at 200 % zoom on light and dark host pages: the host's scheme, axe 0 violations, layout",
    async () => {
      for (const [host, background] of HOSTS) {
        for (const width of WIDTHS) {
          fake.keys = matrixKeys();
          await open(host, width);
          await checkStates(host, `${width} px`, background);
        }
        fake.keys = matrixKeys();
        await atZoom(host, () => checkStates(host, "200 %", background));
      }
    },
    () => {
      fake.failAll = null;
      fake.config = structuredClone(FAKE_CONFIG);
    },
  );

  /** Every state on the page just opened with `matrixKeys()`: the host's scheme, axe 0 violations, layout. */
  async function checkStates(host: string, view: string, background: string): Promise<void> {
    await waitForCharts(page, fake.keys.length);
    for (const [name, state] of Object.entries(STATES)) {
      const where = `${name} on ${host} at ${view}`;
      await state.enter();
      await state.check?.();
      assert.equal(
        await page.evaluate(() =>
          getComputedStyle(document.querySelector("api-keys-manager")!).backgroundColor
        ),
        background,
        `${where}: the host page's scheme`,
      );
      assert.deepEqual(await violations(page), [], where);
      await assertFits(page, where);
      await state.leave?.();
    }
  }

  test("errors: friendly strings set through i18n", async () => {
    fake.keys = [key("k501", { name: "kept" })];
    await open();
    await waitForText(page, "kept", "table");
    await page.evaluate(() => {
      // deno-lint-ignore no-explicit-any
      (document.querySelector("api-keys-manager") as any).i18n = {
        errorNotFound: "Cette clé n'existe plus.",
      };
    });
    fake.keys = [];
    await act("kept", "Rename");
    await page.locator("api-keys-manager").locator("dialog input").fill("new");
    await page.locator("api-keys-manager").getByRole("button", { name: "Save" }).click();
    await waitForText(page, "Cette clé n'existe plus.", "dialog [role=alert]");
  });

  test("status messages clear themselves", async () => {
    fake.keys = [key("k601", { name: "temp" })];
    await open();
    await act("temp", "Rename");
    await page.locator("api-keys-manager").locator("dialog input").fill("temp2");
    await page.locator("api-keys-manager").getByRole("button", { name: "Save" }).click();
    await waitForText(page, "Key renamed", "[part=status]");
    assert.equal(await focused(page), "button:Actions for temp2 (sk_live_k601)");
    await page.waitForFunction(
      () =>
        document.querySelector("api-keys-manager")!.shadowRoot!.querySelector("[part=status]")!
          .textContent === "",
      undefined,
      { timeout: 15_000 },
    );
  });

  test("theme: the theme attribute over the system's scheme; a dark host page under a light system", async () => {
    fake.keys = [
      key("k701", { name: "production", credits: 5, lastUsedAt: new Date().toISOString() }),
      key("k702", {
        name: "old",
        status: "rotating",
        expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
      }),
      key("k703", { name: "soon", expiresAt: new Date(Date.now() + DAY).toISOString() }),
    ];
    const background = () =>
      page.evaluate(() =>
        getComputedStyle(document.querySelector("api-keys-manager")!).backgroundColor
      );
    await open("/");
    await waitForCharts(page, 3);
    for (
      const [theme, scheme, expected] of [
        ["dark", "light", "rgb(13, 17, 23)"],
        ["light", "dark", "rgb(255, 255, 255)"],
        ["auto", "dark", "rgb(13, 17, 23)"],
      ]
    ) {
      await page.emulateMedia({ colorScheme: scheme as "light" | "dark" });
      await page.evaluate(
        (theme) => document.querySelector("api-keys-manager")!.setAttribute("theme", theme),
        theme,
      );
      assert.equal(await background(), expected, `theme=${theme} under a ${scheme} system`);
      assert.deepEqual(await violations(page), [], `theme=${theme}`);
    }
    await page.emulateMedia({ colorScheme: "light" });
    await page.setViewportSize({ width: 1280, height: 800 });
    await open("/dark");
    await page.emulateMedia({ colorScheme: "light" });
    await waitForCharts(page, 3);
    assert.equal(await background(), "rgb(13, 17, 23)", "a dark host page under a light system");
  });

  /** Serves `body` at `path` as a host page of the element (`dir`, response `headers`) on `on`. */
  async function hostPage(
    on: Page,
    path: string,
    { body = "", dir = "ltr", headers = {} }: {
      body?: string;
      dir?: string;
      headers?: Record<string, string>;
    },
  ): Promise<void> {
    await on.route(fake.origin + path, (route) =>
      route.fulfill({
        headers: { "content-type": "text/html; charset=utf-8", ...headers },
        body: `<!doctype html>
<html lang="en" dir="${dir}"><meta charset="utf-8"><title>API keys</title>
<main><h1>Settings</h1>${body}<api-keys-manager base-url="/admin"></api-keys-manager></main>
<script type="module" src="/elements.js"></script>`,
      }));
    await on.setViewportSize({ width: 1280, height: 800 });
    await on.goto(fake.origin + path);
    await on.waitForFunction(() => customElements.get("api-keys-manager") !== undefined);
  }

  test("a strict CSP (no inline style or script, Trusted Types): styled, themed, no violation", async () => {
    fake.keys = [key("k721", { name: "strict" })];
    const strict = await context.newPage();
    const refused: string[] = [];
    strict.on("console", (message) => {
      if (/Content Security Policy|Trusted Type/i.test(message.text())) {
        refused.push(message.text());
      }
    });
    await strict.route(fake.origin + "/theme.css", (route) =>
      route.fulfill({
        contentType: "text/css",
        body: "api-keys-manager{--api-keys-manager-accent:rgb(7, 8, 9)}" +
          "api-keys-manager::part(create-button){text-transform:uppercase}",
      }));
    try {
      await strict.addInitScript(() => {
        // deno-lint-ignore no-explicit-any
        const seen: string[] = (globalThis as any).cspViolations = [];
        document.addEventListener("securitypolicyviolation", (event) => {
          seen.push(`${event.violatedDirective} ${event.blockedURI}`);
        }, true);
      });
      await hostPage(strict, "/strict", {
        body: '<link rel="stylesheet" href="/theme.css">' +
          '<my-keys base-url="/admin"></my-keys>',
        headers: {
          "content-security-policy": "default-src 'self'; script-src 'self'; style-src 'self'; " +
            "connect-src 'self'; require-trusted-types-for 'script'; trusted-types 'none'",
        },
      });
      await strict.evaluate(async () => {
        // deno-lint-ignore no-explicit-any
        const elements: any = await import("/elements.js" as string);
        elements.defineApiKeysManager("my-keys");
      });
      await strict.waitForFunction(() =>
        ["api-keys-manager", "my-keys"].every((tag) =>
          document.querySelector(tag)!.shadowRoot!.querySelector("table")?.textContent
            ?.includes("strict")
        )
      );
      const styled = await strict.evaluate(() => {
        const [a, b] = ["api-keys-manager", "my-keys"].map((tag) => document.querySelector(tag)!);
        const create = getComputedStyle(a.shadowRoot!.querySelector("[part~=create-button]")!);
        const sheets = [a, b].map((element) => element.shadowRoot!.adoptedStyleSheets);
        return {
          display: getComputedStyle(a).display,
          otherDisplay: getComputedStyle(b).display,
          createBackground: create.backgroundColor,
          createCase: create.textTransform,
          styleElements: a.shadowRoot!.querySelectorAll("style").length,
          oneSheet: sheets[0].length === 1 && sheets[1].length === 1 &&
            sheets[0][0] === sheets[1][0],
        };
      });
      assert.deepEqual(styled, {
        display: "block",
        otherDisplay: "block",
        createBackground: "rgb(7, 8, 9)",
        createCase: "uppercase",
        styleElements: 0,
        oneSheet: true,
      });
      // A dialog opened and closed under the policy, then nothing refused.
      await strict.locator("api-keys-manager").getByRole("button", { name: "Create key" }).click();
      await strict.keyboard.press("Escape");
      // deno-lint-ignore no-explicit-any
      assert.deepEqual(await strict.evaluate(() => (globalThis as any).cspViolations), []);
      assert.deepEqual(refused, []);
    } finally {
      await strict.close();
    }
  });

  test("a rotation pair's marker is on the row's start edge, left to right and right to left", async () => {
    fake.keys = rotationPair("k731", "k732", "paired");
    const warning = "rgb(154, 103, 0)";
    for (const dir of ["ltr", "rtl"]) {
      await hostPage(page, `/${dir}`, { dir });
      await waitForText(page, "Replaced by sk_live_k732", "table");
      const cell = page.locator("api-keys-manager").locator("tr.pair > th").first();
      const box = (await cell.boundingBox())!;
      const shot = await cell.screenshot();
      const found = await page.evaluate(async ({ png, warning }) => {
        const image = new Image();
        image.src = `data:image/png;base64,${png}`;
        await image.decode();
        const canvas = document.createElement("canvas");
        canvas.width = image.width;
        canvas.height = image.height;
        const context = canvas.getContext("2d")!;
        context.drawImage(image, 0, 0);
        const at = (x: number) => {
          const [r, g, b] = context.getImageData(x, image.height >> 1, 1, 1).data;
          return `rgb(${r}, ${g}, ${b})`;
        };
        const th = document.querySelector("api-keys-manager")!.shadowRoot!
          .querySelector("tr.pair > th")!;
        const [cell, row] = [th, th.parentElement!].map((e) => e.getBoundingClientRect());
        return {
          left: at(1) === warning,
          right: at(image.width - 2) === warning,
          atRowStart: getComputedStyle(th).direction === "rtl"
            ? cell.right === row.right
            : cell.left === row.left,
        };
      }, { png: shot.toString("base64"), warning });
      assert.deepEqual(
        found,
        { left: dir === "ltr", right: dir === "rtl", atRowStart: true },
        `${dir}: ${JSON.stringify(box)}`,
      );
    }
    await page.unroute(fake.origin + "/ltr");
    await page.unroute(fake.origin + "/rtl");
  });

  test("200 % zoom: a 1280x800 window at 200 % (640x400 CSS px): cards, no horizontal scroll, dialogs fit", async () => {
    fake.keys = [key("k951", { name: LONG }), key("k952", { name: "zoomed" })];
    await atZoom("/", async () => {
      await waitForText(page, "zoomed", "table");
      assert.deepEqual(await page.evaluate(() => [innerWidth, devicePixelRatio]), [640, 2]);
      assert.equal(
        await inShadow<string>("getComputedStyle(r.querySelector('tbody tr')).display"),
        "block",
        "each key a card",
      );
      await assertFits(page, "list at 200 %");
      await page.locator("api-keys-manager").getByRole("button", { name: "Create key" }).click();
      await assertFits(page, "create at 200 %");
      await page.keyboard.press("Escape");
      await act("zoomed", "Rotate");
      await assertFits(page, "rotate at 200 %");
      await page.keyboard.press("Escape");
      await act(LONG, "Revoke");
      await assertFits(page, "revoke of a 200-character name at 200 %");
      assert.deepEqual(await violations(page), []);
    });
  });

  test("activity: the audit log for the tenant and per key, Load more, keyboard, 0 violations; only with can.audit", async () => {
    fake.keys = [key("k901", { name: "audited" }), key("k902", { name: "other" })];
    const start = Date.parse("2026-11-29T08:00:00.000Z");
    fake.audit = Array.from({ length: 30 }, (_, index) => ({
      seq: index + 1,
      at: new Date(start + index * 60_000).toISOString(),
      action: index % 2 === 0 ? "key.created" : "key.renamed",
      actor: "alice@example.com",
      keyId: index < 27 ? "k901" : "k902",
      prefix: index < 27 ? "sk_live_k901" : "sk_live_k902",
      outcome: "success" as const,
    }));
    fake.audit.push({
      seq: 31,
      at: new Date(start + 30 * 60_000).toISOString(),
      action: "key.expiring",
      actor: "system",
      keyId: null,
      prefix: null,
      outcome: "success",
    }, {
      seq: 32,
      at: new Date(start + 31 * 60_000).toISOString(),
      action: "key.created",
      actor: "mallory",
      keyId: "k902",
      prefix: "sk_live_k902",
      outcome: "refused",
    });
    const auditRequests = () =>
      fake.requests.filter((r) => r.path === "/admin/audit").map((r) => r.query.toString());
    const rows = () => inShadow<number>("r.querySelectorAll('dialog tbody tr').length");
    await open();
    await waitForText(page, "audited", "table");
    assert.equal(
      await inShadow<boolean>("r.querySelector('[part~=activity-button]').hidden"),
      true,
      "no Activity without can.audit",
    );
    await act("audited", "Rename");
    await escapeDialog();
    assert.ok(
      !(await inShadow<string[]>(
        "[...r.querySelectorAll('.menu button')].map((b) => b.textContent)",
      ))
        .includes("Activity"),
    );
    fake.config = { ...structuredClone(FAKE_CONFIG), can: { ...FAKE_CONFIG.can, audit: true } };
    try {
      await open();
      await waitForText(page, "audited", "table");
      await tabTo(page, "button:Activity");
      await page.keyboard.press("Enter");
      await waitForText(page, "mallory", "dialog");
      assert.equal(await focused(page), "button:Close");
      assert.equal(await rows(), 25);
      const text = await shadowText(page, "dialog");
      assert.match(text, /^Activity\n/);
      assert.ok(text.includes("Nov 29, 2026, 9:31 AM"), text); // 08:31 UTC in Paris
      assert.ok(text.includes("Created (refused)") && text.includes("System"), text);
      assert.ok(text.includes("Expiry notice sent") && text.includes("All keys"), text);
      assert.deepEqual(await violations(page), []);
      await assertFits(page, "activity at 1280 px");
      // With room on the page, a key's prefix and an actor's address each stay on one line.
      assert.deepEqual(
        await inShadow<string[]>(
          "[...r.querySelectorAll('dialog td code, dialog td .wrap')].filter((e) => e.getClientRects().length > 1).map((e) => e.textContent)",
        ),
        [],
      );
      await tabTo(page, "button:Load more", "Shift+Tab");
      await page.keyboard.press("Enter");
      await page.waitForFunction(() =>
        document.querySelector("api-keys-manager")!.shadowRoot!.querySelectorAll(
          "dialog tbody tr",
        ).length === 32
      );
      assert.equal(await inShadow<boolean>("r.querySelector('dialog .row button').hidden"), true);
      assert.match(await focused(page), /^th:Nov 29, 2026, 9:06 AM/, "the first new record");
      assert.deepEqual(auditRequests(), ["limit=25", "limit=25&cursor=25"]);
      await escapeDialog();
      assert.equal(await focused(page), "button:Activity", "focus back on the button");

      fake.requests = [];
      await act("audited", "Activity");
      await waitForText(page, "alice@example.com", "dialog");
      assert.match(await shadowText(page, "dialog"), /^Activity audited \(sk_live_k901\)/);
      assert.deepEqual(auditRequests(), ["limit=25&keyId=k901"]);
      assert.equal(await rows(), 25);
      await page.setViewportSize({ width: 320, height: 640 });
      assert.deepEqual(await violations(page), []);
      await assertFits(page, "activity at 320 px");
      await page.locator("api-keys-manager").getByRole("button", { name: "Load more" }).click();
      await page.waitForFunction(() =>
        document.querySelector("api-keys-manager")!.shadowRoot!.querySelectorAll(
          "dialog tbody tr",
        ).length === 27
      );
      await escapeDialog();
      assert.equal(await focused(page), "button:Actions for audited (sk_live_k901)");

      await open("/dark");
      await waitForText(page, "audited", "table");
      await page.locator("api-keys-manager").getByRole("button", { name: "Activity" }).click();
      await waitForText(page, "mallory", "dialog");
      assert.deepEqual(await violations(page), [], "dark host page");
      await escapeDialog();

      // The first page lost at a gateway: the error, no "Loading…", and Retry loads it.
      fake.gateway = ["GET /admin/audit"];
      await page.locator("api-keys-manager").getByRole("button", { name: "Activity" }).click();
      await waitForText(page, "The server had a problem.", "dialog");
      assert.ok(
        !(await shadowText(page, "dialog")).includes("Loading"),
        "no Loading… by the error",
      );
      await page.locator("api-keys-manager").locator("dialog").getByRole("button", {
        name: "Retry",
      }).click();
      await waitForText(page, "mallory", "dialog");
      assert.equal(await rows(), 25);
      assert.equal(await shadowText(page, "dialog [role=alert]"), "", "the error gone");
      assert.deepEqual(
        await inShadow<string[]>(
          "[...r.querySelectorAll('dialog .row button')].filter((b) => !b.hidden).map((b) => b.textContent)",
        ),
        ["Load more", "Close"],
      );
      await escapeDialog();

      fake.auditMissing = true; // config.can.audit, but no audit log: a 501
      await page.locator("api-keys-manager").getByRole("button", { name: "Activity" }).click();
      await waitForText(page, "This server does not offer this.", "dialog");
      assert.deepEqual(
        await inShadow<string[]>(
          "[...r.querySelectorAll('dialog .row button')].filter((b) => !b.hidden).map((b) => b.textContent)",
        ),
        ["Close"],
        "no Retry: the server keeps no audit log",
      );
      await escapeDialog();
      // The dialog's close event (and the render after it) comes in a later task than the key press.
      await page.waitForFunction(
        () =>
          (document.querySelector("api-keys-manager")!.shadowRoot!.querySelector(
            "[part~=activity-button]",
          ) as HTMLElement | null)?.hidden === true,
        undefined,
        { timeout: 5_000 },
      ).catch(() => {});
      assert.equal(
        await inShadow<boolean>("r.querySelector('[part~=activity-button]').hidden"),
        true,
        "Activity gone after a 501",
      );
      assert.equal(await focused(page), "button:Create key");
    } finally {
      fake.config = structuredClone(FAKE_CONFIG);
      fake.audit = [];
      fake.auditMissing = false;
      fake.gateway = [];
    }
  });

  test("keyboard only: create -> copy -> done -> rotate -> revoke; focus back on the row each time", async () => {
    fake.keys = [key("k801", { name: "first" })];
    await open();
    await waitForText(page, "first", "table");
    await createByKeyboard(page, "ci deploy");
    const secret = fake.secrets.at(-1)!;
    const created = fake.requests.find((r) => r.method === "POST" && r.path === "/admin/keys")!;
    assert.deepEqual(created.body, {
      name: "ci deploy",
      environment: "live",
      scopes: ["orders:read"],
      expiresIn: "90d",
    });
    assert.equal(created.headers[FAKE_CSRF.header.toLowerCase()], FAKE_CSRF.value);
    await copyAndCloseByKeyboard(page, secret);
    const id = fake.keys.at(-1)!.id;
    assert.equal(await focused(page), `button:Actions for ci deploy (sk_live_${id}x)`);
    await rotateByKeyboard(page, "ci deploy");
    await copyAndCloseByKeyboard(page, fake.secrets.at(-1)!);
    assert.equal(
      await focused(page),
      `button:Actions for ci deploy (sk_live_${id}x)`,
      "the row rotated",
    );
    await page.keyboard.press("Escape");
    await revokeByKeyboard(page, "first", () => {
      assert.equal(fake.keys[0].status, "active", "a wrong name does not revoke");
    });
    assert.equal(fake.keys[0].status, "revoked");
    assert.equal(
      await focused(page),
      `button:Actions for ci deploy (sk_live_${id}x)`,
      "the last row revoked: the row above",
    );
  });

  /** Waits until the list shows `count` rows. */
  const rows = (count: number) =>
    page.waitForFunction(
      (count) =>
        document.querySelector("api-keys-manager")!.shadowRoot!.querySelectorAll("tbody tr")
          .length === count,
      count,
    );

  /** Waits until the element has listed the keys with `name` = `value` and drawn the answer. */
  async function listed(name: string, value: string): Promise<void> {
    const asked = () =>
      fake.requests.some((r) => r.path === "/admin/keys" && r.query.get(name) === value);
    for (let i = 0; i < 250 && !asked(); i++) await new Promise((done) => setTimeout(done, 20));
    assert.ok(asked(), `GET /admin/keys?${name}=${value}`);
    await page.waitForFunction(() =>
      !document.querySelector("api-keys-manager")!.shadowRoot!.querySelector("[part=body] p")
    );
  }

  test("focus stays in the search field and in a filter while the list reloads under them", async () => {
    fake.keys = Array.from({ length: 30 }, (_, i) => key(`k${700 + i}`));
    await open();
    await waitForText(page, "key k729", "table");
    const manager = page.locator("api-keys-manager");
    const search = manager.getByLabel("Search by name or prefix");
    await search.focus();
    await page.keyboard.type("k71");
    await rows(10);
    const active = () => inShadow<string>("r.activeElement?.tagName + ':' + r.activeElement?.type");
    assert.equal(await active(), "INPUT:search", "still in the search field after the reload");
    await page.keyboard.type("5");
    await rows(1);
    assert.equal(await search.inputValue(), "k715", "typing went on in the field");
    await search.fill("");
    await rows(25);
    await manager.getByLabel("Status").first().focus();
    await page.keyboard.press("ArrowDown");
    await listed("status", "active");
    assert.equal(
      await active(),
      "SELECT:select-one",
      "still on the status filter after the reload",
    );
    await page.keyboard.press("ArrowDown");
    await waitForText(page, "No keys match the search and filters.");
    assert.equal(
      fake.requests.findLast((r) => r.path === "/admin/keys")!.query.get("status"),
      "rotating",
      "the second key press reached the same filter",
    );
  });

  test("search: a pasted text longer than the server takes is cut at its limit in code points (150 emoji searched whole); the list stays", async () => {
    fake.keys = [key("k720", { name: LONG }), key("k721", { name: "other" })];
    await open();
    await waitForText(page, "other", "table");
    const search = page.locator("api-keys-manager").getByLabel("Search by name or prefix");
    await search.fill("x".repeat(MAX_API_KEY_NAME_LENGTH + 40));
    const searched = () => fake.requests.some((r) => r.path === "/admin/keys" && r.query.has("q"));
    for (let i = 0; i < 250 && !searched(); i++) await page.waitForTimeout(20);
    await page.waitForFunction(() =>
      document.querySelector("api-keys-manager")!.shadowRoot!.querySelector("[aria-busy]") === null
    );
    assert.equal(await inShadow<boolean>("r.querySelector('[part=error]').hidden"), true);
    const rows = "[...r.querySelectorAll('tr[data-id]')]";
    assert.deepEqual(await inShadow<string[]>(`${rows}.map((row) => row.dataset.id)`), ["k720"]);
    assert.equal(await inShadow<boolean>(`${rows}[0].querySelector('button').disabled`), false);
    const q = fake.requests.findLast((r) => r.path === "/admin/keys")!.query.get("q")!;
    assert.equal(q, "x".repeat(MAX_API_KEY_NAME_LENGTH), "the search cut at the server's bound");
    // q counts code points, as the server does: 150 emoji are searched whole.
    const emoji = "🔑".repeat(150);
    await search.fill(emoji);
    const sent = () => fake.requests.findLast((r) => r.path === "/admin/keys")!.query.get("q");
    for (let i = 0; i < 250 && sent() === q; i++) await page.waitForTimeout(20);
    assert.equal(sent(), emoji);
  });

  test(
    "a reload that fails while the reveal is open leaves the reveal and its secret as they are",
    async () => {
      fake.keys = [key("k760", { name: "first" })];
      await open();
      await waitForText(page, "first", "table");
      const manager = page.locator("api-keys-manager");
      await manager.getByRole("button", { name: "Create key" }).click();
      await manager.getByLabel("Name", { exact: true }).fill("fresh");
      await manager.locator("dialog input[type=checkbox]").first().check();
      await manager.locator("dialog").getByRole("button", { name: "Create key" }).click();
      await waitForText(page, "you will not see this again", "dialog");
      const secret = fake.secrets.at(-1)!;
      for (const failure of [502, 401] as const) {
        fake.failAll = failure;
        await page.evaluate(() =>
          // deno-lint-ignore no-explicit-any
          (document.querySelector("api-keys-manager") as any).refresh()
        );
        await page.waitForFunction(() =>
          !document.querySelector("api-keys-manager")!.shadowRoot!.querySelector<HTMLElement>(
            "[part=error]",
          )!.hidden
        );
        assert.equal(await inShadow<boolean>("r.querySelector('dialog').open"), true, `${failure}`);
        assert.ok((await shadowText(page, "dialog")).includes(secret), `${failure}: secret shown`);
      }
      await manager.getByRole("button", { name: "Copy", exact: true }).click();
      await waitForText(page, "Copied", "dialog");
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), secret);
      await manager.getByRole("button", { name: "Done" }).click();
      await waitForText(page, "Your session has ended", "[part=error]");
      assert.ok(!(await inShadow<string>("r.innerHTML")).includes(secret), "gone once closed");
    },
    () => {
      fake.failAll = null;
    },
  );

  /** Fills the create form (its name, the first scope) and submits it. */
  async function submitCreate(name: string): Promise<void> {
    const manager = page.locator("api-keys-manager");
    await manager.locator("[part~=create-button]").click();
    await manager.locator("dialog[open] input").first().fill(name);
    await manager.locator("dialog[open] input[type=checkbox]").first().check();
    await manager.locator("dialog[open] [type=submit]").click();
  }

  /** Clicks the open dialog's `name` button. */
  function inDialog(name: string): Promise<void> {
    return page.locator("api-keys-manager").locator("dialog[open]").getByRole("button", { name })
      .click();
  }

  /** Closes the reveal open now without copying; then the reveal of `next` is open. */
  const closeUncopied = async (next: string) => {
    await inDialog("Done");
    await inDialog("Close without copying");
    await page.waitForFunction(
      (next) =>
        document.querySelector("api-keys-manager")!.shadowRoot!.querySelector(
          "dialog[open] [part=secret]",
        )?.textContent === next,
      next,
    );
  };

  test(
    "reveal: a slow create cancelled, then another: both secrets shown in turn, none replaced",
    async () => {
      fake.keys = [];
      fake.delays["POST /admin/keys"] = [600, 1500];
      await open();
      await waitForText(page, "No API keys yet.");
      await submitCreate("first");
      await inDialog("Cancel"); // the user gives up waiting
      await submitCreate("second");
      await waitForText(page, "second", "table"); // the second answer is in
      const [first, second] = fake.secrets.slice(-2);
      assert.equal(await revealedSecret(page), first, "the first reveal stays");
      assert.ok((await inShadow<string>("r.innerHTML")).includes(first));
      await closeUncopied(second);
      assert.ok(!(await inShadow<string>("r.innerHTML")).includes(first), "the first one dropped");
      await inDialog("Done");
      await inDialog("Close without copying");
      await page.waitForFunction(() =>
        !document.querySelector("api-keys-manager")!.shadowRoot!.querySelector("dialog[open]")
      );
    },
    () => (fake.delays = {}),
  );

  test("rotate: a slow rotation cancelled, then another: both secrets shown in turn", async () => {
    fake.keys = [key("k760", { name: "alpha" }), key("k761", { name: "beta" })];
    fake.delays["POST /admin/keys/k760/rotate"] = [600];
    fake.delays["POST /admin/keys/k761/rotate"] = [1500];
    await open();
    await waitForText(page, "beta", "table");
    await act("alpha", "Rotate");
    await inDialog("Rotate");
    await inDialog("Cancel");
    await act("beta", "Rotate");
    await inDialog("Rotate");
    await waitForText(page, "Rotating", "tr[data-id=k761]"); // the second answer is in
    const [first, second] = fake.secrets.slice(-2);
    assert.equal(await revealedSecret(page), first, "the first reveal stays");
    await closeUncopied(second);
    await inDialog("Done");
    await inDialog("Close without copying");
  }, () => (fake.delays = {}));

  test(
    "a cancelled action's answer lands in no other dialog: its error in the status line, its rename in the row",
    async () => {
      fake.keys = [key("k780", { name: "alpha" }), key("k781", { name: "beta" })];
      fake.forbidden = ["/admin/keys"];
      fake.delays["POST /admin/keys"] = [500];
      fake.delays["PATCH /admin/keys/k780"] = [500];
      await open();
      await waitForText(page, "beta", "table");
      await submitCreate("refused");
      await inDialog("Cancel");
      await act("beta", "Rotate"); // the user moves on
      await waitForText(page, "You do not have permission", "[part=status]");
      const dialog = () =>
        inShadow<[string, string]>(
          "[r.querySelector('dialog[open] h3')?.textContent, r.querySelector('dialog[open] .alert')?.textContent]",
        );
      assert.deepEqual(
        await dialog(),
        ["Rotate beta (sk_live_k781)", ""],
        "the rotate form as it was",
      );
      assert.equal(await inShadow<boolean>("r.querySelector('[part=error]').hidden"), true);
      await inDialog("Cancel");
      await act("alpha", "Rename");
      await page.locator("api-keys-manager").locator("dialog[open] input").fill("alpha two");
      await inDialog("Save");
      await inDialog("Cancel");
      await act("beta", "Revoke");
      await waitForText(page, "alpha two", "tr[data-id=k780]");
      await page.evaluate(() => new Promise((done) => setTimeout(done, 100)));
      assert.deepEqual(
        await dialog(),
        ["Revoke beta (sk_live_k781)", ""],
        "the revoke form stays open",
      );
      await inDialog("Cancel");
    },
    () => {
      fake.delays = {};
      fake.forbidden = [];
    },
  );

  test(
    "revoke: the field edited while the DELETE runs: one DELETE, one api-key-revoked",
    async () => {
      fake.keys = [key("k784", { name: "alpha" }), key("k785", { name: "beta" })];
      fake.delays["DELETE /admin/keys/k784"] = [800];
      await open();
      await waitForText(page, "beta", "table");
      await page.evaluate(() => {
        const counter = globalThis as unknown as { revokedEvents: number };
        counter.revokedEvents = 0;
        document.addEventListener("api-key-revoked", () => counter.revokedEvents++);
      });
      await act("alpha", "Revoke");
      const field = page.locator("api-keys-manager").locator("dialog[open] input");
      await field.fill("alpha");
      await field.press("Enter"); // the DELETE runs
      await page.waitForFunction(() =>
        document.querySelector("api-keys-manager")!.shadowRoot!.querySelector(
          "dialog[open] [type=submit]:disabled",
        ) !== null
      );
      await field.fill("alphax");
      await field.fill("alpha"); // the name typed again while the DELETE runs
      assert.equal(
        await inShadow<boolean>("r.querySelector('dialog[open] [type=submit]').disabled"),
        true,
        "Revoke stays off while its request runs",
      );
      await field.press("Enter");
      await waitForText(page, "Key revoked", "[part=status]");
      await page.evaluate(() => new Promise((done) => setTimeout(done, 300)));
      assert.equal(fake.requests.filter((r) => r.method === "DELETE").length, 1, "one DELETE");
      assert.equal(
        await page.evaluate(() =>
          (globalThis as unknown as { revokedEvents: number }).revokedEvents
        ),
        1,
        "one api-key-revoked",
      );
    },
    () => (fake.delays = {}),
  );

  test("revoke: a name stored with a line break is typed as the prompt shows it, each line break a space", async () => {
    fake.keys = [key("k786", { name: "prod\nbilling" })];
    await open();
    await act("prod billing", "Revoke");
    assert.match(
      await inShadow<string>("r.querySelector('dialog[open] p').textContent"),
      /“prod billing”/,
    );
    const field = page.locator("api-keys-manager").locator("dialog[open] input");
    await field.fill("prod billing");
    await field.press("Enter");
    await waitForText(page, "Key revoked", "[part=status]");
    assert.deepEqual(
      fake.requests.filter((r) => r.method === "DELETE").map((r) => r.path),
      ["/admin/keys/k786"],
    );
  });

  test(
    "an action's dialog closed while its request runs, opened again on the key: no second request until it ends",
    async () => {
      fake.keys = [key("k787", { name: "alpha" }), key("k788", { name: "beta" })];
      fake.delays["DELETE /admin/keys/k787"] = [1_000];
      fake.forbidden = ["/admin/keys/k787"]; // refused, so the key stays and may be revoked again
      fake.delays["POST /admin/keys/k788/rotate"] = [1_000];
      await open();
      await waitForText(page, "beta", "table");
      const submit = page.locator("api-keys-manager").locator("dialog[open] [type=submit]");
      const field = page.locator("api-keys-manager").locator("dialog[open] input");
      await act("alpha", "Revoke");
      await field.fill("alpha");
      await field.press("Enter"); // the DELETE runs
      await page.keyboard.press("Escape");
      await act("alpha", "Revoke");
      await field.fill("alpha");
      assert.equal(await submit.isDisabled(), true, "Revoke is off while the key's DELETE runs");
      await field.press("Enter");
      await page.waitForFunction(() =>
        document.querySelector("api-keys-manager")!.shadowRoot!.querySelector(
          "dialog[open] [type=submit]:enabled",
        ) !== null
      ); // on again once the first DELETE is answered
      await page.keyboard.press("Escape");
      await act("beta", "Rotate");
      await submit.click(); // the POST runs
      await page.keyboard.press("Escape");
      await act("beta", "Rotate");
      assert.equal(await submit.isDisabled(), true, "Rotate is off while the key's rotation runs");
      await page.keyboard.press("Escape");
      await waitForText(page, "Your new API key");
      assert.equal(fake.requests.filter((r) => r.method === "DELETE").length, 1, "one DELETE");
      assert.equal(fake.requests.filter((r) => r.method === "POST").length, 1, "one rotation");
    },
    () => {
      fake.delays = {};
      fake.forbidden = [];
    },
  );

  test(
    "a cancelled rename's answer redraws its row: focus stays on the row's actions",
    async () => {
      fake.keys = [key("k782", { name: "alpha" }), key("k783", { name: "beta" })];
      fake.delays["PATCH /admin/keys/k782"] = [500];
      await open();
      await waitForText(page, "beta", "table");
      await act("alpha", "Rename");
      await page.locator("api-keys-manager").locator("dialog[open] input").fill("alpha two");
      await inDialog("Save");
      await escapeDialog();
      assert.equal(await focused(page), "button:Actions for alpha (sk_live_k782)");
      await waitForText(page, "alpha two", "tr[data-id=k782]");
      assert.equal(await focused(page), "button:Actions for alpha two (sk_live_k782)");
    },
    () => {
      fake.delays = {};
    },
  );

  test("revoke: an answer naming a successor (rotated elsewhere) adds its row and says it still works", async () => {
    fake.keys = [key("k790", { name: "prod" }), key("k791", { name: "other" })];
    await open();
    await waitForText(page, "other", "table");
    // Elsewhere (another tab, or whoever holds the stolen key): prod rotated, 7 days of grace.
    fake.keys[0].status = "rotating";
    fake.keys[0].expiresAt = new Date(Date.now() + 7 * DAY).toISOString();
    fake.keys[0].replacedByKeyId = "k792";
    fake.keys.unshift(key("k792", { name: "prod", replacesKeyId: "k790" }));
    await act("prod", "Revoke");
    await page.locator("api-keys-manager").locator("dialog[open] input").fill("prod");
    await inDialog("Revoke");
    await rowIds(["k791", "k792", "k790"]); // the successor above the key it replaced
    await waitForText(page, "Its successor sk_live_k792 is still active", "[part=status]");
    const revoked = await shadowText(page, "tr[data-id=k790]");
    assert.match(revoked, /Revoked/);
    assert.doesNotMatch(revoked, /Expires|Stops/, "a revoked key expires no more");
    assert.match(await shadowText(page, "tr[data-id=k792]"), /Active/);
  });

  test("two tabs: a rotate or rename refused as stale reads the key again and updates its row in place", async () => {
    fake.keys = [key("k770", { name: "shared" }), key("k771", { name: "other" })];
    await open();
    await waitForText(page, "shared", "table");
    const manager = page.locator("api-keys-manager");
    const otherRow = await inShadow<boolean>(
      "(r.__other = r.querySelector('tr[data-id=k771]')) !== null",
    );
    assert.ok(otherRow);
    // Another tab rotates the key: this tab's list still shows it active.
    fake.keys[0].status = "rotating";
    fake.keys[0].replacedByKeyId = "k772";
    fake.keys[0].expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    await act("shared", "Rotate");
    fake.requests = [];
    await manager.locator("dialog").getByRole("button", { name: "Rotate" }).click();
    await waitForText(page, "cannot be rotated", "dialog [role=alert]");
    await waitForText(page, "Rotating", "tr[data-id=k770]");
    for (let i = 0; i < 250 && fake.requests.length < 3; i++) {
      await new Promise((done) => setTimeout(done, 20));
    }
    assert.deepEqual(fake.requests.map((r) => `${r.method} ${r.path}`), [
      "POST /admin/keys/k770/rotate",
      "GET /admin/keys/k770",
      "GET /admin/keys/k772", // its successor, gone meanwhile: no row
    ]);
    assert.equal(
      await inShadow<boolean>("r.querySelector('tr[data-id=k771]') === r.__other"),
      true,
      "the other rows stay as they are",
    );
    await escapeDialog();
    assert.equal(await focused(page), "button:Actions for shared (sk_live_k770)");
    const toggle = manager.getByRole("button", { name: /^Actions for shared \(/ });
    if (await toggle.getAttribute("aria-expanded") !== "true") await toggle.click();
    assert.equal(
      await manager.getByRole("button", { name: /^Rotate shared \(/ }).count(),
      0,
      "Rotate no longer offered",
    );
    await toggle.click();
    // Another tab revokes it: a rename is refused with 404 once the key is gone.
    fake.keys.splice(0, 1);
    await act("shared", "Rename");
    await manager.locator("dialog input").fill("renamed");
    await manager.getByRole("button", { name: "Save" }).click();
    await waitForText(page, "This key no longer exists", "dialog [role=alert]");
    await escapeDialog();
    await page.waitForFunction(() =>
      document.querySelector("api-keys-manager")!.shadowRoot!.querySelector(
        "tr[data-id=k770]",
      ) === null
    );
    assert.equal(await focused(page), "button:Actions for other (sk_live_k771)");
  });

  test("two tabs renaming one key: the rename sends the name shown; refused (409), it says so and shows the current name", async () => {
    fake.keys = [key("k775", { name: "shown" }), key("k776", { name: "other" })];
    fake.config = structuredClone(FAKE_CONFIG);
    await open();
    await waitForText(page, "shown", "table");
    const manager = page.locator("api-keys-manager");
    // Another tab renames it: this tab's list still shows "shown".
    fake.keys[0].name = "from tab 1";
    await act("shown", "Rename");
    await manager.locator("dialog input").fill("from tab 2");
    fake.requests = [];
    await manager.getByRole("button", { name: "Save" }).click();
    await waitForText(page, "renamed elsewhere", "dialog [role=alert]");
    await waitForText(page, "from tab 1", "tr[data-id=k775]");
    const [patch] = fake.requests;
    assert.equal(`${patch.method} ${patch.path}`, "PATCH /admin/keys/k775");
    assert.deepEqual(patch.body, { name: "from tab 2", expectedName: "shown" });
    assert.equal(fake.keys[0].name, "from tab 1", "the other tab's name kept");
    // Saved again, deliberately: over the name it shows now.
    fake.requests = [];
    await manager.getByRole("button", { name: "Save" }).click();
    await waitForText(page, "Key renamed", "[part=status]");
    assert.deepEqual(
      fake.requests.find((r) => r.method === "PATCH")!.body,
      { name: "from tab 2", expectedName: "from tab 1" },
    );
    assert.equal(fake.keys[0].name, "from tab 2");
    // A server without conditional renames: no expectedName sent.
    fake.config = {
      ...structuredClone(FAKE_CONFIG),
      capabilities: { rename: true, usage: true },
    };
    await open();
    await waitForText(page, "other", "table");
    await act("other", "Rename");
    await manager.locator("dialog input").fill("other 2");
    fake.requests = [];
    await manager.getByRole("button", { name: "Save" }).click();
    await waitForText(page, "Key renamed", "[part=status]");
    assert.deepEqual(fake.requests.find((r) => r.method === "PATCH")!.body, { name: "other 2" });
    fake.config = structuredClone(FAKE_CONFIG);
  });

  test("a list loaded again while the Rename dialog is open: the rename still goes over the name the dialog opened with", async () => {
    fake.keys = [key("k777", { name: "first-name" }), key("k778", { name: "other" })];
    fake.config = structuredClone(FAKE_CONFIG);
    await open();
    await waitForText(page, "first-name", "table");
    const manager = page.locator("api-keys-manager");
    await act("first-name", "Rename");
    fake.keys[0].name = "second-name"; // another tab
    await refresh(); // the host page reloads the list (on focus, say)
    await waitForText(page, "second-name", "tr[data-id=k777]");
    await manager.locator("dialog input").fill("third-name");
    fake.requests = [];
    await manager.getByRole("button", { name: "Save" }).click();
    await waitForText(page, "renamed elsewhere", "dialog [role=alert]");
    assert.deepEqual(
      fake.requests.find((r) => r.method === "PATCH")!.body,
      { name: "third-name", expectedName: "first-name" },
    );
    assert.equal(fake.keys[0].name, "second-name", "the other tab's name kept");
    await escapeDialog();
  });

  test("a rename answered for a key rotated elsewhere adds its successor's row", async () => {
    fake.keys = [key("k785", { name: "prod" }), key("k786", { name: "other" })];
    await open();
    await rowIds(["k786", "k785"]);
    await act("prod", "Rename");
    rotateElsewhere(0, "k787", "prod");
    await page.locator("api-keys-manager").locator("dialog input").fill("prod renamed");
    await inDialog("Save");
    await waitForText(page, "Key renamed", "[part=status]");
    await rowIds(["k786", "k787", "k785"]); // the successor above the key it replaced
    assert.match(await shadowText(page, "tr[data-id=k785]"), /prod renamed[\s\S]*Rotating/);
  });

  test(
    "an answer landing after the list changed (a search) updates no row it does not show",
    async () => {
      fake.keys = [key("k795", { name: "alpha" }), key("k796", { name: "beta" })];
      fake.delays["PATCH /admin/keys/k795"] = [800];
      await open();
      await rowIds(["k796", "k795"]);
      const manager = page.locator("api-keys-manager");
      await act("alpha", "Rename");
      await manager.locator("dialog input").fill("alpha-2");
      await inDialog("Save");
      await inDialog("Cancel");
      await manager.getByLabel("Search by name or prefix").fill("beta");
      await rowIds(["k796"]);
      for (let i = 0; i < 250 && fake.keys[0].name !== "alpha-2"; i++) {
        await new Promise((done) => setTimeout(done, 20));
      }
      assert.equal(fake.keys[0].name, "alpha-2", "the rename was answered");
      await waitForText(page, "Key renamed", "[part=status]");
      assert.deepEqual(
        await inShadow<string[]>(
          "[...r.querySelectorAll('tr[data-id]')].map((row) => row.dataset.id)",
        ),
        ["k796"],
      );
      await manager.getByLabel("Search by name or prefix").fill("");
    },
    () => (fake.delays = {}),
  );

  /** The rows' key ids, top to bottom, once they are `expected`. */
  async function rowIds(expected: string[]): Promise<void> {
    await page.waitForFunction(
      (expected) =>
        [...document.querySelector("api-keys-manager")!.shadowRoot!.querySelectorAll<HTMLElement>(
          "tr[data-id]",
        )].map((row) => row.dataset.id).join() === expected,
      expected.join(),
    ).catch(async (error) => {
      const ids = await inShadow<string[]>(
        "[...r.querySelectorAll('tr[data-id]')].map((row) => row.dataset.id)",
      );
      throw new Error(`rows ${ids.join()}, expected ${expected.join()}: ${error}`);
    });
  }

  /** Another tab rotates key `index` of the fake: its successor `id`, named `name`. */
  function rotateElsewhere(index: number, id: string, name: string): void {
    const old = fake.keys[index];
    old.status = "rotating";
    old.replacedByKeyId = id;
    old.expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    fake.keys.push(key(id, { name, replacesKeyId: old.id }));
  }

  test(
    "create: in the default view the key goes first in place; under a search or a sort the page loads again, so it shows where the server lists it, or not at all",
    async () => {
      fake.keys = [key("k880", { name: "alpha" }), key("k881", { name: "beta" })];
      await open();
      await rowIds(["k881", "k880"]);
      const manager = page.locator("api-keys-manager");
      const create = async (name: string) => {
        fake.requests = [];
        await manager.getByRole("button", { name: "Create key" }).click();
        await manager.getByLabel("Name", { exact: true }).fill(name);
        await manager.locator("dialog input[type=checkbox]").first().check();
        await manager.locator("dialog").getByRole("button", { name: "Create key" }).click();
        await manager.getByRole("button", { name: "Copy", exact: true }).click();
        await manager.getByRole("button", { name: "Done" }).click();
        return fake.keys.at(-1)!.id;
      };
      const reloads = () =>
        fake.requests.filter((r) => r.method === "GET" && r.path === "/admin/keys").length;
      assert.ok(
        await inShadow<boolean>("(r.__beta = r.querySelector('tr[data-id=k881]')) !== null"),
      );
      const gamma = await create("gamma");
      await rowIds([gamma, "k881", "k880"]);
      assert.equal(
        await inShadow<boolean>("r.querySelector('tr[data-id=k881]') === r.__beta"),
        true,
      );
      assert.equal(reloads(), 0, "in place");
      assert.equal(await focused(page), `button:Actions for gamma (sk_live_${gamma}x)`);
      // A search the new key does not match: the server does not list it.
      await manager.getByLabel("Search by name or prefix").fill("alpha");
      await rowIds(["k880"]);
      await create("delta");
      for (let i = 0; i < 250 && reloads() === 0; i++) {
        await new Promise((done) => setTimeout(done, 20));
      }
      await rowIds(["k880"]);
      assert.equal(reloads(), 1, "the page loaded again");
      // One it matches: listed, focus on its row.
      const alpha2 = await create("alpha two");
      await rowIds([alpha2, "k880"]);
      assert.equal(await focused(page), `button:Actions for alpha two (sk_live_${alpha2}x)`);
      // By name: where the name puts it.
      await manager.getByLabel("Search by name or prefix").fill("");
      await manager.getByLabel("Sort").selectOption("name_asc");
      const delta = fake.keys.find((k) => k.name === "delta")!.id;
      await rowIds(["k880", alpha2, "k881", delta, gamma]);
      const epsilon = await create("epsilon");
      await rowIds(["k880", alpha2, "k881", delta, epsilon, gamma]);
    },
  );

  test(
    "two tabs: a rotate refused as stale adds its successor's row: above the key in the default view, by the page loaded again under a filter; focus kept",
    async () => {
      fake.keys = [key("k890", { name: "shared" }), key("k891", { name: "other" })];
      await open();
      await rowIds(["k891", "k890"]);
      const manager = page.locator("api-keys-manager");
      assert.ok(
        await inShadow<boolean>("(r.__other = r.querySelector('tr[data-id=k891]')) !== null"),
      );
      rotateElsewhere(0, "k892", "shared v2");
      await act("shared", "Rotate");
      fake.requests = [];
      await manager.locator("dialog").getByRole("button", { name: "Rotate" }).click();
      await waitForText(page, "cannot be rotated", "dialog [role=alert]");
      await rowIds(["k891", "k892", "k890"]);
      assert.deepEqual(fake.requests.map((r) => `${r.method} ${r.path}`), [
        "POST /admin/keys/k890/rotate",
        "GET /admin/keys/k890",
        "GET /admin/keys/k892",
      ]);
      assert.equal(
        await inShadow<boolean>("r.querySelector('tr[data-id=k891]') === r.__other"),
        true,
      );
      await waitForText(page, "Replaces sk_live_k890", "tr[data-id=k892]");
      await escapeDialog();
      assert.equal(await focused(page), "button:Actions for shared (sk_live_k890)");
      // Under the status filter "active": the server lists the successor, not the rotating key.
      fake.keys = [key("k893", { name: "solo" }), key("k894", { name: "alone" })];
      await manager.getByLabel("Status").first().selectOption("active");
      await rowIds(["k894", "k893"]);
      rotateElsewhere(0, "k895", "solo v2");
      await act("solo", "Rotate");
      await manager.locator("dialog").getByRole("button", { name: "Rotate" }).click();
      await waitForText(page, "cannot be rotated", "dialog [role=alert]");
      await rowIds(["k895", "k894"]);
      await escapeDialog();
      assert.equal(await focused(page), "button:Actions for alone (sk_live_k894)");
    },
  );

  test(
    "create form: the shared pool's balance as the list last read it, not as the config first said",
    async () => {
      fake.keys = [key("k780", { name: "pooled", credits: 7, creditsSharedBy: "tenant" })];
      fake.tenantCredits = { credits: 7, nextRefillAt: null, refillAmount: null };
      const shared = { amount: 7, refillAmount: null, refillEvery: null, sharedBy: "tenant" };
      fake.config = {
        ...structuredClone(FAKE_CONFIG),
        limits: { policies: [], credits: shared },
      };
      await open();
      await waitForText(page, "Shared credits: 7 left", "[part=pool]");
      // The pool is spent meanwhile; the list reads it again, the config is read once.
      fake.tenantCredits = { credits: 3, nextRefillAt: null, refillAmount: null };
      fake.keys[0].credits = 3;
      shared.amount = 3;
      await page.evaluate(() =>
        // deno-lint-ignore no-explicit-any
        (document.querySelector("api-keys-manager") as any).refresh()
      );
      await waitForText(page, "Shared credits: 3 left", "[part=pool]");
      await page.locator("api-keys-manager").getByRole("button", { name: "Create key" }).click();
      const form = await shadowText(page, "dialog");
      assert.ok(form.includes("3 credits, shared by all your keys"), form);
      await escapeDialog();
    },
    () => {
      fake.tenantCredits = null;
      fake.config = structuredClone(FAKE_CONFIG);
    },
  );

  test(
    "a 403 on one key's action is said in its dialog; the list and the other actions stay",
    async () => {
      fake.keys = [key("k790", { name: "mine" }), key("k791", { name: "theirs" })];
      fake.forbidden = ["/admin/keys/k791/rotate"];
      await open();
      await waitForText(page, "theirs", "table");
      const manager = page.locator("api-keys-manager");
      await act("theirs", "Rotate");
      await manager.locator("dialog").getByRole("button", { name: "Rotate" }).click();
      await waitForText(page, "You do not have permission", "dialog [role=alert]");
      const text = await shadowText(page, "table");
      assert.ok(text.includes("mine") && text.includes("theirs"), text);
      await escapeDialog();
      assert.equal(await focused(page), "button:Actions for theirs (sk_live_k791)");
      assert.equal(
        await inShadow<boolean>("r.querySelector('[part~=create-button]').hidden"),
        false,
        "Create key still offered",
      );
      await act("mine", "Rotate");
      await manager.locator("dialog").getByRole("button", { name: "Rotate" }).click();
      await waitForText(page, "you will not see this again", "dialog");
    },
    () => {
      fake.forbidden = [];
    },
  );

  test(
    "keyboard: focus on Next, Previous, Retry, a row or its usage chart survives the redraw they cause",
    async () => {
      fake.keys = Array.from({ length: 30 }, (_, i) => key(`k${800 + i}`));
      await open();
      await waitForText(page, "key k829", "table");
      const manager = page.locator("api-keys-manager");
      await manager.getByRole("button", { name: "Next" }).focus();
      await page.keyboard.press("Enter");
      await waitForText(page, "key k804", "table");
      assert.equal(await focused(page), "button:Previous", "the last page: Next is off");
      await page.keyboard.press("Enter");
      await waitForText(page, "key k829", "table");
      assert.equal(await focused(page), "button:Next", "the first page: Previous is off");
      // A row's actions button, the table drawn again by a reload.
      await manager.getByRole("button", { name: /^Actions for key k828 \(/ }).focus();
      await page.evaluate(() =>
        // deno-lint-ignore no-explicit-any
        (document.querySelector("api-keys-manager") as any).refresh()
      );
      await waitForCharts(page, 25);
      assert.equal(await focused(page), "button:Actions for key k828 (sk_live_k828)");
      // A row's usage chart (an SVG element), the table drawn again by new strings.
      await manager.locator("tr[data-id=k827] svg[part=usage-chart]").focus();
      assert.match(await focused(page), /^svg:/);
      await page.evaluate(() =>
        // deno-lint-ignore no-explicit-any
        (document.querySelector("api-keys-manager") as any).i18n = { title: "Keys" }
      );
      assert.equal(await focused(page), "button:Actions for key k827 (sk_live_k827)");
      // Retry: the error line goes once the list is back.
      fake.failList = true;
      await page.evaluate(() =>
        // deno-lint-ignore no-explicit-any
        (document.querySelector("api-keys-manager") as any).refresh()
      );
      await waitForText(page, "The server had a problem", "[part=error]");
      fake.failList = false;
      await manager.getByRole("button", { name: "Retry" }).focus();
      await page.keyboard.press("Enter");
      await waitForCharts(page, 25);
      assert.equal(await focused(page), "button:Actions for key k829 (sk_live_k829)");
    },
    () => {
      fake.failList = false;
    },
  );

  test(
    "keyboard: a load failing or denied under the focus moves it to Retry, else the error line, never to the page",
    async () => {
      fake.keys = Array.from({ length: 30 }, (_, i) => key(`k${800 + i}`));
      await open();
      await waitForText(page, "key k829", "table");
      const manager = page.locator("api-keys-manager");
      const reload = () =>
        page.evaluate(() =>
          // deno-lint-ignore no-explicit-any
          (document.querySelector("api-keys-manager") as any).refresh()
        );
      // Next pressed, its page failing: the stale list's buttons, the pager and Create are off.
      fake.failList = true;
      await manager.getByRole("button", { name: "Next" }).focus();
      await page.keyboard.press("Enter");
      await waitForText(page, "The server had a problem", "[part=error]");
      assert.equal(await focused(page), "button:Retry", "a page turn failed");
      fake.failList = false;
      await page.keyboard.press("Enter");
      await waitForText(page, "key k804", "table");
      // A row's actions button, the reload failing.
      fake.failList = true;
      await manager.getByRole("button", { name: /^Actions for key k804 \(/ }).focus();
      await reload();
      await waitForText(page, "The server had a problem", "[part=error]");
      assert.equal(await focused(page), "button:Retry", "a reload failed");
      fake.failList = false;
      await page.keyboard.press("Enter");
      await waitForText(page, "key k804", "table");
      // Signed out: Create key and the rows are gone, Retry stays.
      fake.failAll = 401;
      await manager.getByRole("button", { name: /^Actions for key k804 \(/ }).focus();
      await reload();
      await waitForText(page, "Your session has ended", "[part=error]");
      assert.equal(await focused(page), "button:Retry", "signed out");
      // Forbidden: no Retry either; the error line itself.
      fake.failAll = 403;
      await reload();
      await waitForText(page, "You do not have permission", "[part=error]");
      assert.match(await focused(page), /^div:You do not have permission/, "forbidden");
    },
    () => {
      fake.failList = false;
      fake.failAll = null;
    },
  );

  test("last used: a time ahead of the browser's clock (the server's ahead) reads as now, never in the future", async () => {
    const ahead = (ms: number) => new Date(Date.now() + ms).toISOString();
    fake.keys = [
      key("k940", { name: "seconds ahead", lastUsedAt: ahead(20_000) }),
      key("k941", { name: "minutes ahead", lastUsedAt: ahead(120_000) }),
    ];
    await open();
    await waitForText(page, "minutes ahead", "table");
    assert.deepEqual(
      await inShadow<string[]>(
        "[...r.querySelectorAll('td[data-col=used] time')].map((t) => t.textContent)",
      ),
      ["now", "now"],
    );
  });

  test(
    "signed out, then signed in again with fewer rights: Retry reads GET /config again",
    async () => {
      fake.keys = [key("k930", { name: "kept" })];
      await open();
      await waitForText(page, "kept", "table");
      fake.failAll = 401;
      await page.evaluate(() =>
        // deno-lint-ignore no-explicit-any
        (document.querySelector("api-keys-manager") as any).refresh()
      );
      await waitForText(page, "Your session has ended", "[part=error]");
      fake.failAll = null;
      fake.config = { ...structuredClone(FAKE_CONFIG), can: { ...FAKE_CONFIG.can, create: false } };
      const configs = () =>
        fake.requests.filter((r) => r.method === "GET" && r.path === "/admin/config").length;
      const before = configs();
      await page.locator("api-keys-manager").getByRole("button", { name: "Retry" }).click();
      await waitForText(page, "kept", "table");
      assert.equal(configs(), before + 1, "the configuration read again");
      assert.equal(
        await inShadow<boolean>("r.querySelector('[part~=create-button]').hidden"),
        true,
        "Create key follows the new session's config.can",
      );
    },
    () => {
      fake.failAll = null;
      fake.config = structuredClone(FAKE_CONFIG);
    },
  );

  test(
    "pager: Next or Previous pressed again while a page loads does nothing; Previous goes back one page",
    async () => {
      fake.keys = Array.from({ length: 80 }, (_, i) => key(`k${870 + i}`)); // k949 first
      await open();
      await waitForText(page, "key k949", "table");
      const manager = page.locator("api-keys-manager");
      const next = manager.getByRole("button", { name: "Next" });
      const previous = manager.getByRole("button", { name: "Previous" });
      const busy = () => inShadow<string | null>("r.querySelector('[part=body]').ariaBusy");
      /** The first row once the page pressed for is in. */
      const landed = async () => {
        await page.waitForFunction(() =>
          document.querySelector("api-keys-manager")!.shadowRoot!.querySelector("[part=body]")!
            .ariaBusy === null
        );
        return inShadow<string>("r.querySelector('tbody tr').dataset.id");
      };
      fake.requests = [];
      fake.delays["GET /admin/keys"] = [700, 700, 700, 700, 700];
      await next.click();
      assert.equal(await busy(), "true", "page 2 loads");
      await next.click(); // again, before page 2 is in
      assert.equal(await landed(), "k924", "page 2");
      await previous.click();
      assert.equal(await landed(), "k949", "Previous from page 2: page 1");
      await next.click();
      assert.equal(await landed(), "k924", "page 2");
      await next.click();
      assert.equal(await landed(), "k899", "page 3");
      await previous.click();
      assert.equal(await busy(), "true", "page 2 loads");
      await previous.click(); // again, before page 2 is in
      assert.equal(await landed(), "k924", "Previous from page 3: page 2");
      assert.deepEqual(
        fake.requests.filter((r) => r.path === "/admin/keys").map((r) => r.query.get("cursor")),
        ["25", null, "25", "50", "25"],
        "one load a page turned",
      );
      assert.equal(await focused(page), "button:Previous", "focus stays on the pressed button");
    },
    () => (fake.delays = {}),
  );

  test("loading: the list is aria-busy while it reloads, and not once it is drawn", async () => {
    fake.keys = [key("k850", { name: "slow" })];
    await open();
    await waitForText(page, "slow", "table");
    assert.equal(await inShadow<string | null>("r.querySelector('[part=body]').ariaBusy"), null);
    fake.listDelayMs = 1_000;
    await page.evaluate(() =>
      // deno-lint-ignore no-explicit-any
      void (document.querySelector("api-keys-manager") as any).refresh()
    );
    assert.equal(await inShadow<string | null>("r.querySelector('[part=body]').ariaBusy"), "true");
    await page.waitForFunction(() =>
      document.querySelector("api-keys-manager")!.shadowRoot!.querySelector("[part=body]")!
        .ariaBusy === null
    );
    assert.ok((await shadowText(page, "table")).includes("slow"));
  }, () => {
    fake.listDelayMs = 0;
  });

  test("an <html lang> Intl refuses (en_US): the list draws in the browser's language, loaded and reloaded", async () => {
    const pageErrors: string[] = [];
    const onError = (error: Error) => pageErrors.push(error.message);
    page.on("pageerror", onError);
    await page.route(fake.origin + "/", async (route) => {
      const response = await route.fetch();
      const html = (await response.text()).replace('<html lang="en">', '<html lang="en_US">');
      await route.fulfill({ response, body: html });
    });
    try {
      fake.keys = [key("k855", { name: "underscored" })];
      await open();
      await waitForCharts(page, 1);
      assert.equal(await page.evaluate(() => document.documentElement.lang), "en_US");
      const drawn = await shadowText(page, "table");
      assert.ok(drawn.includes("underscored"));
      // Another refused tag, then the browser's own (en-US): the same words, dates and numbers.
      for (const lang of ["fr_FR", "en-US"]) {
        await page.evaluate((lang) => {
          document.documentElement.lang = lang;
          // deno-lint-ignore no-explicit-any
          return (document.querySelector("api-keys-manager") as any).refresh();
        }, lang);
        await waitForCharts(page, 1);
        assert.equal(await shadowText(page, "table"), drawn, lang);
        assert.equal(
          await inShadow<string | null>("r.querySelector('[part=body]').ariaBusy"),
          null,
        );
      }
      assert.deepEqual(pageErrors, []);
    } finally {
      page.off("pageerror", onError);
      await page.unroute(fake.origin + "/");
    }
  });

  test(
    "429: the error line says when it can try again (role=alert); a load waits out a Retry-After of at most a minute and retries once; an action says when",
    async () => {
      fake.keys = [key("k860", { name: "busy" })];
      await open();
      await waitForText(page, "busy", "table");
      const reload = () =>
        page.evaluate(() =>
          // deno-lint-ignore no-explicit-any
          void (document.querySelector("api-keys-manager") as any).refresh()
        );
      const lists = () => fake.requests.filter((r) => r.path === "/admin/keys").length;
      const errorHidden = () =>
        page.waitForFunction(() =>
          document.querySelector("api-keys-manager")!.shadowRoot!.querySelector<HTMLElement>(
            "[part=error]",
          )!.hidden
        );
      assert.equal(await inShadow<string>("r.querySelector('[part=error]').role"), "alert");
      // Waited out, then the list again by itself.
      fake.rateLimit = { method: "GET", path: "/admin/keys", times: 1, retryAfter: "2" };
      fake.requests = [];
      await reload();
      await waitForText(page, "Too many requests. Trying again in 2 seconds.", "[part=error]");
      await errorHidden();
      assert.equal(lists(), 2, "one load, one retry");
      assert.ok((await shadowText(page, "table")).includes("busy"));
      // Limited again on its retry: said, never retried twice.
      fake.rateLimit = { method: "GET", path: "/admin/keys", times: 2, retryAfter: "1" };
      fake.requests = [];
      await reload();
      await waitForText(page, "Too many requests. Try again in 1 second.", "[part=error]");
      await page.waitForTimeout(1_500);
      assert.equal(lists(), 2, "one load, one retry");
      // Over a minute: said, not waited for; Retry loads.
      fake.rateLimit = { method: "GET", path: "/admin/keys", times: 1, retryAfter: "120" };
      fake.requests = [];
      await reload();
      await waitForText(page, "Too many requests. Try again in 2 minutes.", "[part=error]");
      await page.locator("api-keys-manager").getByRole("button", { name: "Retry" }).click();
      await errorHidden();
      assert.equal(lists(), 2, "the load, then Retry");
      // No Retry-After: the generic string.
      fake.rateLimit = { method: "GET", path: "/admin/keys", times: 1, retryAfter: null };
      await reload();
      await waitForText(page, "Too many requests. Wait a moment and try again.", "[part=error]");
      await page.locator("api-keys-manager").getByRole("button", { name: "Retry" }).click();
      await errorHidden();
      // An action is never sent again by itself: its dialog says when.
      fake.rateLimit = { method: "POST", path: "/admin/keys", times: 1, retryAfter: "30" };
      const manager = page.locator("api-keys-manager");
      await manager.getByRole("button", { name: "Create key" }).click();
      await manager.getByLabel("Name", { exact: true }).fill("later");
      await manager.locator("dialog input[type=checkbox]").first().check();
      await manager.locator("dialog").getByRole("button", { name: "Create key" }).click();
      await waitForText(
        page,
        "Too many requests. Try again in 30 seconds.",
        "dialog [role=alert]",
      );
      assert.equal(fake.requests.filter((r) => r.method === "POST").length, 1);
      await escapeDialog();
    },
    () => {
      fake.rateLimit = null;
    },
  );

  /** Waits (at most 5 s) until `ok()` holds on the fake's side. */
  async function until(ok: () => boolean, what: string): Promise<void> {
    for (let i = 0; i < 100 && !ok(); i++) await new Promise((done) => setTimeout(done, 50));
    assert.ok(ok(), what);
  }

  /** The query of each `GET /admin/keys` recorded. */
  const listQueries = () =>
    fake.requests.filter((r) => r.method === "GET" && r.path === "/admin/keys").map((r) => r.query);

  test(
    "create: a reply lost (a timeout, a gateway's 504 page) loads the list again, says a key may have been made, and the form offers Create another key",
    async () => {
      fake.keys = [key("k900", { name: "kept" })];
      await open();
      await waitForText(page, "kept", "table");
      const name = page.locator("api-keys-manager").getByLabel("Name", { exact: true });
      // Dropped unanswered, then answered by a gateway giving up on its upstream: both made the key.
      for (const [made, lose] of [["lost reply", "lost"], ["gateway reply", "gateway"]] as const) {
        fake[lose] = ["POST /admin/keys"];
        const lists = listQueries().length;
        await submitCreate(made);
        await waitForText(page, "may have been created", "dialog [role=alert]");
        await waitForText(page, made, "table"); // the key the server made, listed
        assert.ok(fake.keys.some((k) => k.name === made), made);
        assert.equal(listQueries().length, lists + 1, `the list loaded again after the ${lose}`);
        assert.equal(await name.inputValue(), made);
        assert.deepEqual(
          await inShadow<string[]>(
            "[...r.querySelectorAll('dialog [type=submit]')].map((b) => b.textContent)",
          ),
          ["Create another key"],
          `sending again says it makes another key (${lose})`,
        );
        await escapeDialog();
      }
      assert.equal(fake.keys.length, 3);
    },
    () => {
      fake.lost = [];
      fake.gateway = [];
    },
  );

  test(
    "rotate: a reply lost (a timeout, a gateway's 504 page) loads the list again and says the key may have been rotated",
    async () => {
      fake.keys = [key("k910", { name: "alpha" }), key("k911", { name: "beta" })];
      await open();
      await waitForText(page, "beta", "table");
      for (const [name, lose] of [["alpha", "lost"], ["beta", "gateway"]] as const) {
        const id = fake.keys.find((k) => k.name === name)!.id;
        fake[lose] = [`POST /admin/keys/${id}/rotate`];
        const lists = listQueries().length;
        await act(name, "Rotate");
        await inDialog("Rotate");
        await waitForText(page, "may have been rotated", "dialog [role=alert]");
        await until(
          () => listQueries().length === lists + 1,
          `the list loaded again after the ${lose}`,
        );
        const successor = fake.keys.find((k) => k.replacesKeyId === id)!;
        assert.ok(successor, `${lose}: the server rotated ${name}`);
        await page.waitForFunction(
          ({ id, successor }) => {
            const rows = document.querySelector("api-keys-manager")!.shadowRoot!
              .querySelectorAll<HTMLElement>("tr[data-id]");
            const status = (key: string) =>
              [...rows].find((row) => row.dataset.id === key)?.dataset.status;
            return status(id) === "rotating" && status(successor) === "active";
          },
          { id, successor: successor.id },
        );
        await escapeDialog();
      }
    },
    () => {
      fake.lost = [];
      fake.gateway = [];
    },
  );

  test(
    "create and rotate: an answer without the secret says so (revoke that key) instead of announcing success",
    async () => {
      fake.keys = [key("k920", { name: "alpha" })];
      fake.omitSecret = true;
      await open();
      await waitForText(page, "alpha", "table");
      await submitCreate("secretless");
      await waitForText(page, "did not send the new key's secret", "dialog [role=alert]");
      await waitForText(page, "secretless", "table"); // the key made, listed
      await escapeDialog();
      await act("alpha", "Rotate");
      await inDialog("Rotate");
      await waitForText(page, "did not send the new key's secret", "dialog [role=alert]");
      await page.waitForTimeout(100); // an announcement would be in by now
      assert.equal(await shadowText(page, "[part=status]"), "", "no success announced");
      assert.equal(await inShadow<number>("r.querySelectorAll('[part=secret]').length"), 0);
      await escapeDialog();
    },
    () => (fake.omitSecret = false),
  );

  test("create: the element taken off the page while its request runs reveals the secret once back", async () => {
    fake.keys = [key("k905", { name: "kept" })];
    await open();
    await waitForText(page, "kept", "table");
    fake.delays["POST /admin/keys"] = [800];
    try {
      await submitCreate("away");
      await page.evaluate(() => {
        const element = document.querySelector("api-keys-manager")!;
        // deno-lint-ignore no-explicit-any
        const global = globalThis as any;
        global.kept = element;
        element.addEventListener("api-key-created", () => (global.created = true));
        element.remove(); // an app's router swaps the view out, and back later
      });
      // deno-lint-ignore no-explicit-any
      await page.waitForFunction(() => (globalThis as any).created === true);
      await page.evaluate(() =>
        // deno-lint-ignore no-explicit-any
        document.querySelector("main")!.append((globalThis as any).kept)
      );
      await page.waitForFunction(
        () =>
          document.querySelector("api-keys-manager")!.shadowRoot!.querySelector(
            "dialog[open][role=alertdialog] [part=secret]",
          ) !== null,
        undefined,
        { timeout: 5_000 },
      );
      assert.equal(await revealedSecret(page), fake.secrets.at(-1));
      assert.ok(!(await shadowText(page)).includes("Something went wrong"));
      await inDialog("Done");
      await inDialog("Close without copying");
    } finally {
      fake.delays = {};
    }
  });

  test(
    "a reload failing while a form is open keeps the form, what was typed and the focus; a 401 closes it",
    async () => {
      fake.keys = Array.from({ length: 30 }, (_, i) => key(`k${1000 + i}`));
      await open();
      await waitForCharts(page, 25);
      const manager = page.locator("api-keys-manager");
      fake.delays["GET /admin/keys"] = [1_000];
      fake.failList = true;
      await manager.getByRole("button", { name: "Next" }).click(); // slow, then fails
      await manager.getByRole("button", { name: "Create key" }).click();
      await page.keyboard.type("half typed");
      await waitForText(page, "The server had a problem", "[part=error]");
      assert.equal(await inShadow<boolean>("r.querySelector('dialog').open"), true);
      assert.equal(await manager.getByLabel("Name", { exact: true }).inputValue(), "half typed");
      assert.equal(await focused(page), "input:");
      fake.failList = false;
      fake.failAll = 401; // a session ended still shuts the page
      await refresh();
      await waitForText(page, "Your session has ended", "[part=error]");
      assert.equal(await inShadow<boolean>("r.querySelector('dialog').open"), false);
    },
    () => {
      fake.failList = false;
      fake.failAll = null;
      fake.delays = {};
    },
  );

  test("base-url changed: the first page, no search nor filter; an open form closes, an open reveal stays", async () => {
    fake.keys = Array.from({ length: 30 }, (_, i) => key(`k${1000 + i}`));
    await open();
    await waitForCharts(page, 25);
    const manager = page.locator("api-keys-manager");
    const setBase = (base: string) =>
      page.evaluate(
        (base) => document.querySelector("api-keys-manager")!.setAttribute("base-url", base),
        base,
      );
    await manager.locator("[part=toolbar] input").fill("key");
    await until(() => listQueries().at(-1)?.get("q") === "key", "searched");
    await waitForCharts(page, 25);
    await manager.getByRole("button", { name: "Next" }).click();
    await waitForText(page, "key k1004", "table");
    await manager.getByRole("button", { name: "Create key" }).click();
    await page.keyboard.type("typed");
    await setBase("/admin/");
    await page.waitForFunction(
      () => !document.querySelector("api-keys-manager")!.shadowRoot!.querySelector("dialog[open]"),
      undefined,
      { timeout: 5_000 },
    );
    await waitForText(page, "key k1029", "table");
    assert.equal(listQueries().at(-1)?.toString(), "limit=25", "no cursor, no search");
    assert.equal(await manager.locator("[part=toolbar] input").inputValue(), "");
    assert.equal(await manager.getByRole("button", { name: "Previous" }).isDisabled(), true);
    // A reveal stays: its secret is shown once.
    await submitCreate("shown");
    await waitForText(page, "you will not see this again", "dialog");
    const loads = listQueries().length;
    await setBase("/admin");
    await until(() => listQueries().length === loads + 1, "loaded from the other base-url");
    await waitForCharts(page, 25);
    assert.equal(await revealedSecret(page), fake.secrets.at(-1));
    await inDialog("Done");
    await inDialog("Close without copying");
  });

  test("taken off the page and back while the reveal is open: the reveal is modal again, and nothing replaces it", async () => {
    const pageErrors: string[] = [];
    const onError = (error: Error) => pageErrors.push(error.message);
    page.on("pageerror", onError);
    try {
      fake.keys = [key("k915", { name: "kept" })];
      await open();
      await waitForText(page, "kept", "table");
      await submitCreate("moved");
      await waitForText(page, "you will not see this again", "dialog");
      await page.evaluate(() => {
        const element = document.querySelector("api-keys-manager")!;
        const parent = element.parentNode!;
        element.remove(); // an app's router swaps the view out, and back
        parent.append(element);
      });
      assert.equal(await inShadow<boolean>("r.querySelector('dialog').matches(':modal')"), true);
      assert.equal(await focused(page), "button:Copy", "focus on Copy again");
      const behind = await inShadow<boolean>(
        "(() => { const b = r.querySelector('[part~=create-button]').getBoundingClientRect(); return r.elementFromPoint(b.x + 2, b.y + 2) === r.querySelector('[part~=create-button]'); })()",
      );
      assert.equal(behind, false, "the page behind the reveal takes no click");
      // Create key reached anyway (a script's click): the reveal stays.
      await inShadow(
        "r.querySelector('[part~=create-button]').dispatchEvent(new MouseEvent('click'))",
      );
      assert.equal(await revealedSecret(page), fake.secrets.at(-1));
      assert.equal(await inShadow<string>("r.querySelector('dialog').role"), "alertdialog");
      await inDialog("Done");
      await inDialog("Close without copying");
      await page.waitForFunction(() =>
        !document.querySelector("api-keys-manager")!.shadowRoot!.querySelector("dialog[open]")
      );
      assert.deepEqual(pageErrors, []);
    } finally {
      page.off("pageerror", onError);
    }
  });

  test("a list load begun before a revoke answers after it: the key does not come back active (the list is loaded again)", async () => {
    fake.keys = [key("k920", { name: "ci deploy" }), key("k921", { name: "nightly" })];
    await open();
    await waitForCharts(page, 2);
    fake.requests = [];
    fake.delays["GET /admin/keys"] = [1_500]; // read now, answered later
    try {
      const loading = refresh();
      await until(() => listQueries().length === 1, "the slow load sent");
      await act("ci deploy", "Revoke");
      await page.locator("api-keys-manager").locator("dialog[open] input").fill("ci deploy");
      await inDialog("Revoke");
      await waitForText(page, "Key revoked", "[part=status]");
      await loading;
      // As the server lists it now: the default view leaves revoked keys out.
      const row = await inShadow<string>(
        "r.querySelector('tr[data-id=k920]')?.dataset.status ?? 'not listed'",
      );
      assert.equal(row, "not listed", "not the older answer's active row");
      assert.ok((await shadowText(page, "table")).includes("nightly"));
      assert.equal(listQueries().length, 2, "the load begun before the revoke, then once more");
    } finally {
      fake.delays = {};
    }
  });

  test("base-url changed while a create or a rotation runs: its key joins no row of the new routes; its reveal shows", async () => {
    const other = `${fake.origin}/org-b/admin/**`;
    await page.route(other, (route) => {
      const path = new URL(route.request().url()).pathname.slice("/org-b/admin".length);
      const body = path === "/config"
        ? { ...FAKE_CONFIG, capabilities: { ...FAKE_CONFIG.capabilities, usage: false } }
        : path === "/keys"
        ? { keys: [key("k945", { name: "org B key" })], nextCursor: null }
        : null;
      return route.fulfill({ status: body ? 200 : 404, json: body });
    });
    const setBase = (base: string) =>
      page.evaluate(
        (base) => document.querySelector("api-keys-manager")!.setAttribute("base-url", base),
        base,
      );
    const names = () => inShadow<string>("r.querySelector('table').innerText");
    try {
      fake.keys = [key("k940", { name: "org A key" })];
      await open();
      await waitForText(page, "org A key", "table");
      fake.delays["POST /admin/keys/k940/rotate"] = [800];
      await act("org A key", "Rotate");
      await inDialog("Rotate");
      await setBase("/org-b/admin"); // the app switches organisation
      await waitForText(page, "you will not see this again", "dialog");
      assert.equal(await revealedSecret(page), fake.secrets.at(-1));
      assert.ok(!(await names()).includes("org A key"), "the rotation's successor is not listed");
      await inDialog("Done");
      await inDialog("Close without copying");
      await setBase("/admin");
      await waitForText(page, "org A key", "table");
      fake.delays["POST /admin/keys"] = [800];
      await submitCreate("org A new key");
      await setBase("/org-b/admin");
      await waitForText(page, "you will not see this again", "dialog");
      assert.equal(await revealedSecret(page), fake.secrets.at(-1));
      assert.ok((await names()).includes("org B key"));
      assert.ok(!(await names()).includes("org A new key"), "the created key is not listed");
      await inDialog("Done");
      await inDialog("Close without copying");
    } finally {
      fake.delays = {};
      await page.unroute(other);
    }
  });

  test("inserted with both observed attributes, the element loads once; the same base-url set again, not at all", async () => {
    fake.keys = [key("k910", { name: "once" })];
    await open();
    await waitForText(page, "once", "table");
    fake.requests = [];
    await page.evaluate(() => {
      document.querySelector("main")!.innerHTML =
        '<api-keys-manager base-url="/admin" credentials="include"></api-keys-manager>';
    });
    await waitForCharts(page, 1);
    const sent = () => fake.requests.map((r) => `${r.method} ${r.path}`).sort();
    assert.deepEqual(sent(), ["GET /admin/config", "GET /admin/keys", "GET /admin/usage"]);
    fake.requests = [];
    await page.evaluate(() =>
      document.querySelector("api-keys-manager")!.setAttribute("base-url", "/admin")
    );
    await page.waitForTimeout(300);
    assert.deepEqual(sent(), [], "nothing changed: no load");
  });

  it("docs/settings-page-*.png (with UPDATE_SCREENSHOT=1)", {
    skip: process.env.UPDATE_SCREENSHOT !== "1",
  }, async () => {
    fake.keys = [
      key("k970", {
        name: "production server",
        scopes: ["orders:write", "invoices:read"],
        lastUsedAt: new Date(Date.now() - 3_600_000).toISOString(),
        credits: 9_500,
        creditsRefillAmount: 10_000,
        creditsNextRefillAt: new Date(Date.now() + 12 * DAY).toISOString(),
      }),
      key("k971", {
        name: "nightly export",
        expiresAt: new Date(Date.now() + 3 * DAY).toISOString(),
      }),
      key("k972", { name: "staging", environment: "test", prefix: "sk_test_k972" }),
    ];
    const element = page.locator("api-keys-manager");
    await open("/", 1280);
    await waitForCharts(page, 3);
    await element.screenshot({ path: "docs/settings-page-desktop.png" });
    await open("/", 375);
    await waitForCharts(page, 3);
    await element.screenshot({ path: "docs/settings-page-phone.png" });
    await page.setViewportSize({ width: 1280, height: 700 });
    await act("nightly export", "Rotate");
    await element.locator("dialog").getByRole("button", { name: "Rotate" }).click();
    await waitForText(page, "keeps working until", "dialog");
    await page.screenshot({ path: "docs/settings-page-reveal.png" });
    await element.getByRole("button", { name: "Copy" }).click();
    await element.getByRole("button", { name: "Done" }).click();
    await element.screenshot({ path: "docs/settings-page-rotation.png" });
  });
});
