/**
 * `deno task demo --smoke` as a subprocess, on both HTTP platforms: it must
 * exit 0 and print the tour, with every failure code it promises and the
 * page's `<api-keys-manager>` driven in Chromium.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { assertCreditSteps, assertPageSteps, runDemo, TOUR_CODES } from "./_demo.ts";

/** Codes the tour must show (one line each at least). */
const CODES = [...TOUR_CODES, "BAD_REQUEST"];

for (const adapter of ["express", "fastify"] as const) {
  describe(`demo --smoke (${adapter})`, () => {
    it("exits 0 and prints every step with its status and code", async () => {
      const { code, stdout, stderr } = await runDemo(["--smoke", "--adapter", adapter]);
      assert.equal(code, 0, `smoke failed:\n${stdout}\n${stderr}`);
      assert.match(stdout, /smoke tour: \d+ passed, 0 failed/);
      assert.doesNotMatch(stdout, /^FAIL/m);
      const passed = Number(/smoke tour: (\d+) passed/.exec(stdout)?.[1]);
      assert.ok(passed >= 49, `only ${passed} steps ran`);
      for (const expected of CODES) {
        assert.match(
          stdout,
          new RegExp(`^ok +\\d{3} ${expected} `, "m"),
          `no step with ${expected}`,
        );
      }
      assert.match(stdout, /^ok +401 api_key_revoked +the revoked key/m);
      assert.match(stdout, /^ok +200 .*deprecated route/m);
      assert.match(stdout, /^ok +404 PROJECT_NOT_FOUND +unknown project: RFC 9457/m);
      assert.match(stdout, /^ok +200 .*OpenAPI: deprecated route, global errors/m);
      assert.match(stdout, /^ok +200 .*field selection: \?fields=id,name trims data/m);
      assert.match(stdout, /^ok +200 .*version option: meta\.apiVersion on a success/m);
      assert.match(stdout, /^ok +409 PROJECT_ALREADY_ARCHIVED +error catalog as problem details/m);
      assert.match(stdout, new RegExp(`adapter ${adapter}`));
      // The log: the seeded key's expiry notice.
      assert.match(
        stdout,
        /^\[keys\] expiry notice: key \w{12} \(tenant demo, live\) expires within 7 days, at /m,
      );
      assert.match(
        stdout,
        /^ok +403 api_key_escalation_refused +grant a scope the admin key lacks/m,
      );
      assertCreditSteps(stdout);
      assertPageSteps(stdout);
    });
  });
}
