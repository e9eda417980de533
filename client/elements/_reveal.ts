/**
 * The one-time reveal of a new secret: copy feedback inside the dialog
 * (visible and announced); when the clipboard refuses, the secret is selected
 * with instructions; closing before a successful copy asks first.
 *
 * @module
 */
import { type Child, h } from "./_dom.ts";
import type { ApiKeysManagerStrings } from "./strings.ts";

/** What the element does with the reveal. */
export interface Reveal {
  /** The dialog's content. */
  content: Child[];
  /** Focused first: Copy. */
  focus: HTMLElement;
  /** Asks before closing unless copied (focus on the confirmation); `true` when the dialog may close now. */
  mayClose: () => boolean;
  /** Drops the secret (on close). */
  drop: () => void;
}

/** The reveal of `secret`; `note` (such as when the old key stops) under the warning; `close` closes. */
export function reveal(
  secret: string,
  note: string | null,
  s: ApiKeysManagerStrings,
  close: () => void,
): Reveal {
  let kept: string | null = secret;
  let copied = false;
  const code = h("code", { class: "secret", part: "secret", tabindex: "-1" }, secret);
  const message = h("p", { role: "status", class: "msg", part: "copy-status" });
  const anyway = h(
    "button",
    { type: "button", class: "x", part: "button", onclick: close },
    s.closeAnyway,
  );
  const confirm = h(
    "div",
    { class: "confirm", role: "alert", hidden: true },
    h("p", {}, s.confirmClose),
    anyway,
  );
  const select = () => {
    const range = document.createRange();
    range.selectNodeContents(code);
    const selection = getSelection();
    selection?.removeAllRanges();
    selection?.addRange(range);
  };
  const copy = h("button", {
    type: "button",
    class: "p",
    part: "button copy-button",
    onclick: async () => {
      try {
        await navigator.clipboard.writeText(kept ?? "");
        copied = true;
        confirm.hidden = true;
        message.className = "msg ok";
        message.textContent = s.copied;
      } catch {
        message.className = "msg alert";
        message.textContent = s.copyFailed;
        code.focus();
        select();
      }
    },
  }, s.copy);
  const mayClose = () => {
    if (copied) return true;
    confirm.hidden = false;
    anyway.autofocus = true; // also when the dialog opens again
    anyway.focus();
    return false;
  };
  return {
    content: [
      h("p", { id: "dd" }, h("strong", {}, s.revealWarning), note && h("span", {}, ` ${note}`)),
      code,
      message,
      confirm,
      h(
        "div",
        { class: "row" },
        copy,
        h("button", {
          type: "button",
          part: "button done-button",
          onclick: () => mayClose() && close(),
        }, s.done),
      ),
    ],
    focus: copy,
    mayClose,
    drop: () => {
      kept = null;
      getSelection()?.removeAllRanges();
    },
  };
}
