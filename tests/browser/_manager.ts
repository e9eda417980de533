/**
 * Steps shared by the browser tests of `<api-keys-manager>` (against the fake
 * of the admin routes and against both demos): axe-core's WCAG 2.2 AA
 * violations, reading the shadow root, keyboard-only moves, and the keyboard
 * create → copy → revoke flow with its focus, announcement and secrecy checks.
 *
 * @module
 */
import assert from "node:assert/strict";
import axe from "axe-core";
import type { Page } from "playwright-core";

/** The widths every state is checked at (CSS px), phone to wide desktop. */
export const WIDTHS: readonly number[] = [320, 375, 768, 1280, 1920];

/** The axe-core tags checked: WCAG 2.0 to 2.2, A and AA. */
export const WCAG: readonly string[] = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"];

/** axe-core's WCAG 2.2 AA violations on the page (shadow DOM included), as `id: targets`. */
export async function violations(page: Page): Promise<string[]> {
  if (!await page.evaluate(() => "axe" in globalThis)) {
    await page.addScriptTag({ content: axe.source });
  }
  return page.evaluate(async (tags) => {
    // deno-lint-ignore no-explicit-any
    const result = await (globalThis as any).axe.run(document, {
      runOnly: { type: "tag", values: tags },
      resultTypes: ["violations"], // the passes' details are not read: skip collecting them
    });
    // deno-lint-ignore no-explicit-any
    return result.violations.map((v: any) =>
      // deno-lint-ignore no-explicit-any
      `${v.id}: ${v.nodes.map((n: any) => JSON.stringify(n.target)).join(" ")}`
    );
  }, [...WCAG]);
}

/** Text of the element's shadow root's `selector` (default its section, e.g. its open dialog). */
export function shadowText(page: Page, selector = "section"): Promise<string> {
  return page.evaluate((selector) => {
    const root = document.querySelector("api-keys-manager")!.shadowRoot!;
    return (root.querySelector(selector) as HTMLElement | null)?.innerText ?? "";
  }, selector);
}

/** Waits until the shadow root's `selector` text includes `text`. */
export async function waitForText(page: Page, text: string, selector = "section"): Promise<void> {
  await page.waitForFunction(({ text, selector }) => {
    const root = document.querySelector("api-keys-manager")?.shadowRoot;
    return ((root?.querySelector(selector) as HTMLElement | null)?.innerText ?? "").includes(text);
  }, { text, selector });
}

/** The focused element inside the shadow root: tag, role-ish label and text. */
export function focused(page: Page): Promise<string> {
  return page.evaluate(() => {
    const active = document.querySelector("api-keys-manager")!.shadowRoot!.activeElement;
    if (!active) return "";
    return `${active.tagName.toLowerCase()}:${
      active.getAttribute("aria-label") ?? (active as HTMLElement).innerText ?? ""
    }`.trim();
  });
}

/** Presses `key` (Tab) until the focused element is `target` (at most 80 times). */
export async function tabTo(page: Page, target: string | RegExp, key = "Tab"): Promise<void> {
  for (let i = 0; i < 80; i++) {
    const now = await focused(page);
    if (typeof target === "string" ? now === target : target.test(now)) return;
    await page.keyboard.press(key);
  }
  assert.fail(`never reached ${target}, last ${await focused(page)}`);
}

/** Waits until the element's shadow root holds `count` usage charts. */
export async function waitForCharts(page: Page, count: number): Promise<void> {
  await page.waitForFunction(
    (count) =>
      document.querySelector("api-keys-manager")!.shadowRoot!.querySelectorAll("svg").length ===
        count,
    count,
  );
}

/**
 * By keyboard: opens the create form (focus on the name; 0 violations), types
 * `name`, ticks the first scope, submits, and waits for the reveal dialog.
 */
export async function createByKeyboard(page: Page, name: string): Promise<void> {
  await page.waitForFunction(() =>
    !(document.querySelector("api-keys-manager")!.shadowRoot!.querySelector(
      "[part~=create-button]",
    ) as HTMLButtonElement).disabled
  );
  await tabTo(page, "button:Create key");
  await page.keyboard.press("Enter");
  assert.equal(await focused(page), "input:", "the create form focuses the name");
  assert.deepEqual(await violations(page), [], "create");
  await page.keyboard.type(name);
  await page.keyboard.press("Tab"); // environment
  await page.keyboard.press("Tab"); // the first scope
  await page.keyboard.press("Space");
  await tabTo(page, "button:Create key");
  await page.keyboard.press("Enter");
  await page.waitForFunction(() =>
    document.querySelector("api-keys-manager")!.shadowRoot!.querySelector(
      "dialog[open][role=alertdialog] [part=secret]",
    ) !== null
  );
}

/** The secret the open reveal dialog shows. */
export function revealedSecret(page: Page): Promise<string> {
  return page.evaluate(() =>
    document.querySelector("api-keys-manager")!.shadowRoot!.querySelector("[part=secret]")!
      .textContent ?? ""
  );
}

/**
 * By keyboard, in the open reveal of `secret`: the warning, focus on Copy,
 * 0 violations; Copy puts the secret on the clipboard and announces "Copied";
 * Done closes the reveal, and then no trace of the secret stays in the
 * document, the element's own properties, or web storage.
 */
export async function copyAndCloseByKeyboard(page: Page, secret: string): Promise<void> {
  const dialog = await shadowText(page, "dialog");
  assert.ok(dialog.includes(secret));
  assert.ok(dialog.includes("you will not see this again"));
  assert.equal(await focused(page), "button:Copy", "focus on the least destructive control");
  assert.deepEqual(await violations(page), [], "reveal");
  await page.keyboard.press("Enter");
  await waitForText(page, "Copied", "dialog [part=copy-status]");
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), secret);
  await page.keyboard.press("Tab");
  assert.equal(await focused(page), "button:Done");
  await page.keyboard.press("Enter");
  await page.waitForFunction(() =>
    document.querySelector("api-keys-manager")!.shadowRoot!.querySelector("dialog[open]") === null
  );
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
}

/** `text` as a regular expression matching itself. */
const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * By keyboard: opens the row's actions for `name`, then its revoke
 * confirmation (an alertdialog quoting the name, focus on Cancel, 0
 * violations), types all of `name` but its last character and submits
 * (`afterWrongName` checks nothing was revoked), then completes it and waits
 * for the "Key revoked" announcement.
 */
export async function revokeByKeyboard(
  page: Page,
  name: string,
  afterWrongName: () => void | Promise<void>,
): Promise<void> {
  await tabTo(page, new RegExp(`^button:Actions for ${literal(name)} \\(`));
  await page.keyboard.press("Enter");
  await tabTo(page, new RegExp(`^button:Revoke ${literal(name)} \\(`));
  await page.keyboard.press("Enter");
  assert.ok((await shadowText(page, "dialog")).includes(`“${name}”`), "the prompt quotes the name");
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
  await page.keyboard.type(name.slice(0, -1));
  await page.keyboard.press("Enter");
  await afterWrongName();
  await page.keyboard.type(name.slice(-1));
  await page.keyboard.press("Enter");
  await waitForText(page, "Key revoked", "[part=status]");
}

/**
 * By keyboard, focus on the row's Actions button for `name`: opens its menu,
 * then its rotate dialog (focus on the grace field), submits, and waits for
 * the reveal saying until when the old key keeps working.
 */
export async function rotateByKeyboard(page: Page, name: string): Promise<void> {
  await page.keyboard.press("Enter");
  await tabTo(page, new RegExp(`^button:Rotate ${literal(name)} \\(`));
  await page.keyboard.press("Enter");
  assert.match(await focused(page), /^select:/, "the rotate dialog focuses the grace field");
  assert.deepEqual(await violations(page), [], "rotate");
  await tabTo(page, "button:Rotate");
  await page.keyboard.press("Enter");
  await waitForText(page, "keeps working until", "dialog");
}

/**
 * The layout holds (`what` names the state): no horizontal page scroll, the
 * open dialog (if any) inside the viewport, and no visible text outside its
 * box (each text's nearest block box, unless that box clips it on purpose, as
 * a truncated name does; visually hidden labels aside).
 */
export async function assertFits(page: Page, what: string): Promise<void> {
  const layout = await page.evaluate(() => {
    const root = document.querySelector("api-keys-manager")!.shadowRoot!;
    const box = root.querySelector("dialog[open]")?.getBoundingClientRect();
    const escaped: string[] = [];
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
      if (node.textContent!.trim() === "") continue;
      const range = document.createRange();
      range.selectNodeContents(node);
      const text = range.getBoundingClientRect();
      if (text.width === 0 || text.height === 0) continue; // not rendered
      let hidden = false; // visually hidden (a label for screen readers)
      for (let up: Element | null = node.parentElement; up !== null; up = up.parentElement) {
        const box = up.getBoundingClientRect();
        hidden ||= getComputedStyle(up).clipPath !== "none" || box.width <= 1 || box.height <= 1;
      }
      if (hidden) continue;
      let block = node.parentElement!;
      while (
        ["inline", "contents"].includes(getComputedStyle(block).display) &&
        block.parentElement !== null
      ) block = block.parentElement;
      // A form label's short word (a scope's name) is never broken across lines: its box would be
      // too narrow to read.
      const word = node.textContent!.trim();
      if (
        node.parentElement!.closest("label") !== null && word.length <= 24 && !/\s/.test(word) &&
        range.getClientRects().length > 1
      ) {
        escaped.push(`"${word}" broken across ${range.getClientRects().length} lines`);
      }
      const style = getComputedStyle(block);
      if (style.overflowX !== "visible" || style.overflowY !== "visible") continue;
      const own = block.getBoundingClientRect();
      if (
        text.left < own.left - 1 || text.right > own.right + 1 || text.top < own.top - 1 ||
        text.bottom > own.bottom + 1
      ) escaped.push(`"${node.textContent!.trim().slice(0, 40)}" outside its ${block.tagName}`);
    }
    return {
      scroll: document.scrollingElement!.scrollWidth,
      width: innerWidth,
      height: innerHeight,
      dialog: box ? [box.left, box.right, box.top, box.bottom] : null,
      escaped,
    };
  });
  assert.ok(layout.scroll <= layout.width, `${what}: page ${layout.scroll} > ${layout.width}`);
  if (layout.dialog) {
    const [left, right, top, bottom] = layout.dialog;
    assert.ok(
      left >= 0 && right <= layout.width && top >= 0 && bottom <= layout.height,
      `${what}: dialog ${layout.dialog} outside ${layout.width}x${layout.height}`,
    );
  }
  assert.deepEqual(layout.escaped, [], `${what}: text outside its box`);
}
