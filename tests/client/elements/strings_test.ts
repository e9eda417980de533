import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { API_KEYS_MANAGER_STRINGS } from "../../../client/elements/strings.ts";

describe("client/elements/strings.ts", () => {
  it("is frozen, every string non-empty", () => {
    assert.ok(Object.isFrozen(API_KEYS_MANAGER_STRINGS));
    for (const [name, value] of Object.entries(API_KEYS_MANAGER_STRINGS)) {
      assert.ok(value.trim().length > 0, name);
    }
  });

  it("the reveal says the secret is shown once; the templates have their placeholders", () => {
    assert.match(API_KEYS_MANAGER_STRINGS.revealWarning, /will not see this again/);
    assert.match(API_KEYS_MANAGER_STRINGS.revokePrompt, /\{name\}/);
    assert.match(API_KEYS_MANAGER_STRINGS.usageLabel, /\{count\}/);
  });
});
