import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as dialogs from "../../../client/elements/_dialogs.ts";
import { Format } from "../../../client/elements/_format.ts";
import { MAX_API_KEY_NAME_LENGTH } from "../../../client/elements/_limits.ts";
import { configOf, keysOf, type KeyView } from "../../../client/elements/_model.ts";
import {
  API_KEYS_MANAGER_STRINGS,
  type ApiKeysManagerStrings,
} from "../../../client/elements/strings.ts";

const source = readFileSync(
  new URL("../../../client/elements/_dialogs.ts", import.meta.url),
  "utf8",
);

/** A stand-in for the DOM the dialogs build: attributes, listeners, the value and its validity. */
class FakeElement {
  attributes = new Map<string, string>();
  listeners = new Map<string, ((event: Event) => void)[]>();
  value = "";
  validationMessage = "";
  setAttribute(name: string, value: string) {
    this.attributes.set(name, value);
    if (name === "value") this.value = value;
  }
  addEventListener(name: string, listener: (event: Event) => void) {
    this.listeners.set(name, [...this.listeners.get(name) ?? [], listener]);
  }
  append() {}
  setCustomValidity(message: string) {
    this.validationMessage = message;
  }
  /** Types `text` as a browser does: cut at `maxlength` UTF-16 units, then `input`. */
  type(text: string) {
    const max = this.attributes.get("maxlength");
    this.value = max === undefined ? text : text.slice(0, Number(max));
    for (const listener of this.listeners.get("input") ?? []) listener(new Event("input"));
  }
}

describe("client/elements/_dialogs.ts", () => {
  it("exports the four dialogs' fields", () => {
    assert.deepEqual(Object.keys(dialogs).sort(), [
      "createFields",
      "renameFields",
      "revokeFields",
      "rotateFields",
    ]);
  });

  it("defaults come from the server's config, never hard-coded presets", () => {
    assert.match(source, /config\.defaultExpiry/);
    assert.match(source, /config\.defaultGrace/);
    assert.doesNotMatch(source, /"never"\)|"24h"\)/);
    assert.doesNotMatch(source, /innerHTML|insertAdjacentHTML/, "text goes in as text");
  });

  it("the create and rename name fields take what the server takes: up to 200 code points (150 emoji: 300 UTF-16 units), one more refused before submit", () => {
    const global = globalThis as { document?: unknown };
    global.document = { createElement: () => new FakeElement() };
    try {
      const s = API_KEYS_MANAGER_STRINGS;
      const f = new Format("en");
      const rename: (key: KeyView, s: ApiKeysManagerStrings, f: Format) => dialogs.DialogFields =
        dialogs.renameFields;
      const [key] = keysOf([{ id: "k1", name: "old", prefix: "ak_1" }]);
      for (
        const [form, { focus }] of [
          ["create", dialogs.createFields(configOf({}), s, f)],
          ["rename", rename(key, s, f)],
        ] as const
      ) {
        const name = focus as unknown as FakeElement;
        for (const text of ["🔑".repeat(150), "🔑".repeat(MAX_API_KEY_NAME_LENGTH), "n"]) {
          name.type(text);
          assert.equal(name.value, text, `${form}: ${text.length} UTF-16 units typed whole`);
          assert.equal(name.validationMessage, "", `${form}: ${text.length} UTF-16 units valid`);
        }
        name.type("n".repeat(MAX_API_KEY_NAME_LENGTH + 1));
        assert.equal(name.validationMessage, "Use at most 200 characters.", form);
        name.type("🔑".repeat(MAX_API_KEY_NAME_LENGTH - 1) + "nn"); // 400 UTF-16 units, 201 code points
        assert.equal(name.value.length, 2 * MAX_API_KEY_NAME_LENGTH, form);
        assert.equal(name.validationMessage, "Use at most 200 characters.", form);
        name.type("renamed");
        assert.equal(name.validationMessage, "", `${form}: valid again`);
      }
      const [long] = keysOf([{ id: "k2", name: "n".repeat(201), prefix: "ak_2" }]);
      const opened = rename(long, s, f).focus as unknown as FakeElement;
      assert.equal(opened.validationMessage, "Use at most 200 characters.", "checked as opened");
    } finally {
      delete global.document;
    }
  });

  it("the revoke confirmation turns on for the name as the prompt shows it: runs of spaces (shown as one), line breaks and edge spaces read as shown; another name, or a space a page does not collapse, never", () => {
    const global = globalThis as { document?: unknown };
    global.document = { createElement: () => new FakeElement() };
    try {
      const cases: [string, string, boolean][] = [
        ["ab  cd", "ab cd", true],
        ["ab  cd", "ab  cd", true],
        [" padded ", "padded", true],
        ["two\nlines", "two lines", true],
        ["Cafe\u0301", "Caf\u00e9", true],
        ["ab  cd", "abcd", false],
        ["ab cd", "ab cd!", false],
        ["prod", "PROD", false],
        // Spaces a page does not collapse, or shows as a mark, or draws as nothing: as stored.
        ["prod\u1680api", "prod api", false],
        ["a\u00a0\u00a0\u00a0b", "a b", false],
        ["ab\ufeffcd", "ab cd", false],
      ];
      for (const [stored, typed, turnsOn] of cases) {
        const [key] = keysOf([{ id: "k1", name: stored, prefix: "ak_1" }]);
        const { focus, confirmed } = dialogs.revokeFields(key, API_KEYS_MANAGER_STRINGS);
        (focus as unknown as FakeElement).type(typed);
        assert.equal(
          confirmed(),
          turnsOn,
          `${JSON.stringify(stored)} typed ${JSON.stringify(typed)}`,
        );
      }
    } finally {
      delete global.document;
    }
  });
});
