/**
 * The tour's page steps, in headless Chromium (`chromium.ts`): the demo
 * page's `<api-keys-manager>` creates a key, the page's request console uses
 * it, the list shows it used (a last-used date, usage bars), and the element
 * revokes it. Skipped with a line where Chromium is missing (the browser
 * suite, `tests/browser/`, needs it under CI).
 *
 * @module
 */
import type { Page } from "playwright-core";
import { chromiumMissing, launchChromium } from "./chromium.ts";
import type { StepResult } from "./http_step.ts";

/** The name of the key the steps create. */
export const PAGE_KEY_NAME = "smoke page key";

/** In the page: whether the element's row of `name` shows a last use and bars for 1 request. */
function usedRow(name: string): boolean {
  const root = document.querySelector("api-keys-manager")!.shadowRoot!;
  const row = [...root.querySelectorAll("[role=row]")].find((tr) =>
    (tr as HTMLElement).innerText.includes(name)
  );
  return row !== undefined && !(row as HTMLElement).innerText.includes("Never used") &&
    row.querySelector("svg[aria-label='1 request in the last 24 hours']") !== null;
}

/**
 * Runs the steps against the demo at `url`, handing each result to
 * `record`; resolves to the created key (to check it is refused), or
 * `undefined` when skipped or a step failed (the later ones are left out).
 */
export async function runPageSteps(
  url: string,
  record: (result: StepResult) => void,
  log: (line: string) => void,
): Promise<string | undefined> {
  const skip = chromiumMissing();
  if (skip) {
    log(`skip page steps: ${skip}`);
    return undefined;
  }
  /** One step: `run` returns a problem, or undefined when fine; a throw is a problem too. */
  const ui = async (title: string, run: () => Promise<string | undefined>) => {
    const spec = { title, method: "CHROMIUM", path: "/", status: 200 };
    let failure: string | undefined;
    try {
      failure = await run();
    } catch (error) {
      failure = (error as Error).message.split("\n")[0];
    }
    record(failure === undefined ? { spec } : { spec, failure });
    return failure === undefined;
  };
  const browser = await launchChromium();
  try {
    const page: Page = await browser.newPage();
    const manager = page.locator("api-keys-manager");
    const ok = await ui("the page's <api-keys-manager> lists the demo tenant's keys", async () => {
      await page.goto(`${url}/`);
      await manager.getByRole("table").getByText("demo admin", { exact: true }).first().waitFor();
      return undefined;
    });
    let secret = "";
    const created = ok &&
      await ui("create a key through the element: its secret once", async () => {
        await manager.getByRole("button", { name: "Create key" }).click();
        const dialog = manager.locator("dialog");
        await dialog.getByLabel("Name").fill(PAGE_KEY_NAME);
        await dialog.getByRole("checkbox", { name: /^projects:read/ }).check();
        await dialog.getByRole("button", { name: "Create key" }).click();
        secret = await manager.locator("[part=secret]").innerText();
        // Not copied: Done asks once more before the secret is gone.
        await dialog.getByRole("button", { name: "Done" }).click();
        await dialog.getByRole("button", { name: "Close without copying" }).click();
        await manager.getByRole("table").getByText(PAGE_KEY_NAME).first().waitFor();
        const kept = await manager.evaluate(
          (element, secret) => element.shadowRoot!.innerHTML.includes(secret),
          secret,
        );
        return secret.startsWith("ak_live_")
          ? (kept ? "the secret stayed in the element" : undefined)
          : "no secret shown";
      });
    const used = created && await ui("use it in the page's request console", async () => {
      await page.fill("#api-key", secret);
      await page.selectOption("#route", { label: "GET /api/projects/prj_001" });
      await page.click("#send");
      await page.locator("#status", { hasText: "200 OK" }).waitFor();
      return undefined;
    });
    const listed = used &&
      await ui(
        "listed as used: last used, and its last 24 hours as bars",
        () =>
          page.waitForFunction(usedRow, PAGE_KEY_NAME, { timeout: 15_000 }).then(() => undefined),
      );
    const revoked = listed &&
      await ui("revoke it through the element, typing its name", async () => {
        await manager.getByRole("button", { name: new RegExp(`^Actions for ${PAGE_KEY_NAME} \\(`) })
          .click();
        await manager.getByRole("button", { name: new RegExp(`^Revoke ${PAGE_KEY_NAME} \\(`) })
          .click();
        const dialog = manager.locator("dialog");
        await dialog.getByLabel("Name").fill(PAGE_KEY_NAME);
        await dialog.getByRole("button", { name: "Revoke" }).click();
        await manager.getByRole("status").getByText("Revoked").waitFor();
        return undefined;
      });
    return revoked ? secret : undefined;
  } finally {
    await browser.close();
  }
}
