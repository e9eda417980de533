import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { API_KEYS_MANAGER_STRINGS, COUNTED_STRINGS } from "../../../client/elements/strings.ts";

describe("client/elements/strings.ts", () => {
  it("is frozen, every string non-empty; plural forms frozen, one and other, the same placeholders in each", () => {
    assert.ok(Object.isFrozen(API_KEYS_MANAGER_STRINGS));
    const placeholders = (text: string) => text.match(/\{\w+\}/g)?.sort() ?? [];
    for (const [name, value] of Object.entries(API_KEYS_MANAGER_STRINGS)) {
      if (typeof value === "string") {
        assert.ok(value.trim().length > 0, name);
        continue;
      }
      assert.ok(Object.isFrozen(value), name);
      assert.deepEqual(Object.keys(value), ["one", "other"], name);
      assert.deepEqual(placeholders(value.one!), placeholders(value.other), name);
      assert.ok(value.one!.trim().length > 0 && value.other.trim().length > 0, name);
    }
  });

  it("every string with a number in it is counted (takes plural forms), its English default forms or one for every number (creditsLeft: 1 left)", () => {
    const counted = Object.entries(API_KEYS_MANAGER_STRINGS).filter(([, value]) =>
      /\{(count|limit|amount)\}/.test(typeof value === "string" ? value : value.other)
    ).map(([name, value]) => [name, typeof value]);
    assert.deepEqual([...COUNTED_STRINGS].sort(), counted.map(([name]) => name).sort());
    assert.deepEqual(Object.fromEntries(counted), {
      policy: "object",
      creditsStart: "object",
      creditsStartShared: "object",
      creditsRefillEvery: "string",
      usageLabel: "object",
      usageTotal: "object",
      usageHour: "object",
      creditsLeft: "string",
      creditsRefill: "string",
      pool: "string",
      nameTooLong: "object",
    });
  });

  it("the reveal says the secret is shown once; the templates have their placeholders", () => {
    assert.match(API_KEYS_MANAGER_STRINGS.revealWarning, /will not see this again/);
    assert.match(API_KEYS_MANAGER_STRINGS.revokePrompt, /\{name\}/);
    assert.match((API_KEYS_MANAGER_STRINGS.usageLabel as { other: string }).other, /\{count\}/);
  });
});
