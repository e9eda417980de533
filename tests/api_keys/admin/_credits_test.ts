/** The credit fields of the admin routes' answers (api_keys/admin/_credits.ts). */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { creditsView, spendsCredits, tenantCreditsView } from "../../../api_keys/admin/_credits.ts";

const at = new Date("2030-01-02T00:00:00.000Z");

describe("admin credit views", () => {
  it("a key's own balance wins; a pool-only key shows the pool with creditsSharedBy tenant", () => {
    const own = { remaining: 4, nextRefillAt: null };
    const pool = { remaining: 9, nextRefillAt: at, refill: { amount: 10, everyMs: 1_000 } };
    assert.deepEqual(creditsView({}), {});
    assert.deepEqual(creditsView({ credits: own, tenantCredits: pool }), {
      credits: 4,
      creditsNextRefillAt: null,
      creditsRefillAmount: null,
    });
    assert.deepEqual(creditsView({ tenantCredits: pool }), {
      credits: 9,
      creditsNextRefillAt: "2030-01-02T00:00:00.000Z",
      creditsRefillAmount: 10,
      creditsSharedBy: "tenant",
    });
  });

  it("tenantCredits of the list: null without a pool; spendsCredits counts the pool", () => {
    assert.equal(tenantCreditsView(null), null);
    assert.deepEqual(tenantCreditsView({ remaining: 0, nextRefillAt: at }), {
      credits: 0,
      nextRefillAt: "2030-01-02T00:00:00.000Z",
      refillAmount: null,
    });
    assert.equal(spendsCredits({}), false);
    assert.equal(spendsCredits({ tenantCredits: { remaining: 0, nextRefillAt: null } }), true);
  });
});
