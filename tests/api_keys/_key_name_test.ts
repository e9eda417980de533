import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { fitsCodePoints, requireKeyName } from "../../api_keys/_key_name.ts";
import { ApiKeyValidationError } from "../../api_keys/errors.ts";

describe("key names", () => {
  it("requireKeyName (create, rotate, import, the admin routes' names): 1 to 200 code points, not only spaces, printable", () => {
    const invalid = (field: string) => (error: unknown) =>
      error instanceof ApiKeyValidationError && error.field === field;
    assert.equal(fitsCodePoints("🔑".repeat(3), 3), true);
    assert.equal(fitsCodePoints("🔑".repeat(3) + "x", 3), false);
    assert.equal(requireKeyName("ci", "name"), "ci");
    for (
      const bad of [
        "",
        "  ",
        "x".repeat(201),
        1,
        null,
        "prod\nbilling",
        "a\tb",
        "a\u0000",
        "\u007f",
      ]
    ) {
      assert.throws(() => requireKeyName(bad, "name"), invalid("name"));
    }
    assert.equal(requireKeyName("Clé « prod » 🔑", "name"), "Clé « prod » 🔑");
    // 200 code points, as the OpenAPI document's maxLength counts them.
    assert.equal(requireKeyName("🔑".repeat(200), "name"), "🔑".repeat(200));
    assert.throws(() => requireKeyName("🔑".repeat(201), "name"), invalid("name"));
  });
});
