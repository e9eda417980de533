import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Format } from "../../../client/elements/_format.ts";
import { poolText } from "../../../client/elements/_toolbar.ts";
import { API_KEYS_MANAGER_STRINGS as s } from "../../../client/elements/strings.ts";

describe("client/elements/_toolbar.ts", () => {
  const f = new Format("en-US");
  const now = Date.parse("2026-01-01T00:00:00Z");

  it("poolText: credits left, and the next refill when there is one", () => {
    assert.equal(
      poolText({ credits: 42_000, nextRefillAt: null, refillAmount: null }, s, f, now),
      "Shared credits: 42,000 left",
    );
    assert.equal(
      poolText(
        { credits: 5, nextRefillAt: new Date(now + 2 * 86_400_000), refillAmount: 1_000 },
        s,
        f,
        now,
      ),
      "Shared credits: 5 left · +1,000 in 2 days",
    );
  });
});
