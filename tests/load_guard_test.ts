/** tests/load_guard.ts fails a `deno test` file that throws while it loads, in every suite. */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

const onDeno = "Deno" in globalThis;
const ROOT = new URL("../", import.meta.url);
const FIXTURE = "tests/fixtures/throws_at_load.ts";
const GUARD = "--preload tests/load_guard.ts";

/** `deno test` on the fixture, with `flags`: exit code and output. */
async function denoTest(flags: string[]): Promise<{ code: number; output: string }> {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["test", "-A", "--no-check", ...flags, FIXTURE],
    cwd: ROOT,
    env: { NO_COLOR: "1" },
  }).output();
  const output = new TextDecoder().decode(stdout) + new TextDecoder().decode(stderr);
  return { code, output };
}

describe("the load guard", { skip: !onDeno && "it guards `deno test`" }, () => {
  it("fails a file that throws at load after registering a node:test test", async () => {
    const { code, output } = await denoTest(GUARD.split(" "));
    assert.notEqual(code, 0, output);
    assert.match(output, /Error: thrown at load/);
    assert.doesNotMatch(output, /registered before the throw \.\.\. ok/);
  });

  it("is needed: without it Deno passes that file (drop the guard once this fails)", async () => {
    const { code, output } = await denoTest([]);
    assert.equal(code, 0, output);
    assert.match(output, /1 passed/);
  });

  it("is preloaded by every deno.json task that runs deno test", () => {
    const { tasks } = JSON.parse(readFileSync(new URL("deno.json", ROOT), "utf8")) as {
      tasks: Record<string, string>;
    };
    const runs = Object.entries(tasks).filter(([, command]) => /\bdeno test\b/.test(command));
    assert.ok(runs.length >= 6, runs.map(([name]) => name).join(", "));
    for (const [name, command] of runs) assert.ok(command.includes(`deno test -A ${GUARD} `), name);
  });
});
