/** The bridge on the lowest `@opentelemetry/api` of its peer range (1.3.0), in a process of its own. */
import { describe, it } from "node:test";
import assert from "node:assert/strict";

const FLOOR = "1.3.0";

// Deno only: the lower API is swapped in by an import map (on Node, the consumer apps install one).
describe("the bridge on @opentelemetry/api " + FLOOR, { skip: !("Deno" in globalThis) }, () => {
  it("records through the lowest supported API", async () => {
    const map = await Deno.makeTempFile({ suffix: ".json" });
    try {
      await Deno.writeTextFile(
        map,
        JSON.stringify({ imports: { "@opentelemetry/api": `npm:@opentelemetry/api@${FLOOR}` } }),
      );
      const app = new URL("./floor_app.ts", import.meta.url).pathname;
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", `--import-map=${map}`, app],
        stdout: "piped",
        stderr: "piped",
      }).output();
      const stdout = new TextDecoder().decode(out.stdout);
      assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
      const { api, recorded } = JSON.parse(stdout.trim().split("\n").at(-1)!);
      assert.match(api, new RegExp(`api@${FLOOR.replaceAll(".", "\\.")}`));
      assert.deepEqual(recorded, {
        "rate_limit.checks": 1,
        "rate_limit.check.duration": 1,
        "rate_limit.store.duration": 1,
      });
    } finally {
      await Deno.remove(map);
    }
  });
});
