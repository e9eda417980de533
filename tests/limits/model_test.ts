/** Each real store against the reference sliding log, on the server's real clock. */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { commands, countersOf, ReferenceStore } from "../rate_limits/_model.ts";
import { checkOnce, freshSubject, openStore, readyStores } from "./_services.ts";

// Windows scaled ×1,000 (400 s and more): nothing expires during a run, so the
// reference at one instant predicts `allowed` and `remaining` exactly.
const SCALE = 1_000;

for (const kind of await readyStores("rate-limit model")) {
  describe(`${kind} store against the reference`, () => {
    it("agrees on allowed and remaining (cost, cost 0, all or nothing); resetMs stays in its window", async () => {
      const { store, close } = await openStore(kind);
      try {
        await fc.assert(
          fc.asyncProperty(commands, async (script) => {
            const reference = new ReferenceStore();
            const run = freshSubject("model");
            for (const command of script) {
              const counters = countersOf(
                { ...command, subject: `${run}:${command.subject}` },
                SCALE,
              );
              const expected = reference.check(counters, 0);
              const actual = await checkOnce(store, counters);
              assert.deepEqual(
                actual.map((r) => [r.allowed, r.remaining]),
                expected.map((r) => [r.allowed, r.remaining]),
              );
              actual.forEach((r, i) => {
                assert.ok(r.resetMs >= 0 && r.resetMs <= counters[i].windowMs, String(r.resetMs));
              });
            }
          }),
          { numRuns: 25 },
        );
      } finally {
        await close();
      }
    });

    it("frees units when they leave the window (real time)", async () => {
      const { store, close } = await openStore(kind);
      try {
        const counter = {
          kind: "window" as const,
          subject: freshSubject("expiry"),
          name: "short",
          limit: 2,
          windowMs: 300,
          cost: 1,
        };
        assert.equal((await checkOnce(store, [counter]))[0].allowed, true);
        assert.equal((await checkOnce(store, [counter]))[0].allowed, true);
        const denied = (await checkOnce(store, [counter]))[0];
        assert.equal(denied.allowed, false);
        assert.ok(denied.resetMs > 0 && denied.resetMs <= 300, String(denied.resetMs));
        await new Promise((resolve) => setTimeout(resolve, 320));
        assert.deepEqual((await checkOnce(store, [counter]))[0].remaining, 1);
      } finally {
        await close();
      }
    });
  });
}
