/**
 * The CLI `deno task import-keys --jsonl FILE`: without DATABASE_URL an
 * in-memory dry run (with it, PostgreSQL: tests/postgres/legacy_test.ts).
 * Deno only: it runs the script in a child Deno process.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { exportFile, runImport } from "./import_keys_cli.ts";

const PEPPER = "cli-test-pepper-0123456789abcdefghij";
const onDeno = typeof (globalThis as { Deno?: unknown }).Deno !== "undefined";

describe("scripts/import_keys.ts without DATABASE_URL (dry run)", {
  skip: onDeno ? false : "runs the CLI under Deno",
}, () => {
  it("validates every line and reports what an import would do, with line numbers", async () => {
    const { keys, path } = exportFile(2, PEPPER, ["", "{not json", '{"prefix":"short"}']);
    const duplicate = Deno.readTextFileSync(path).split("\n")[0].replace(
      /"hash":"[0-9a-f]+"/,
      `"hash":"${"0".repeat(64)}"`,
    );
    Deno.writeTextFileSync(path, duplicate + "\n", { append: true });
    const run = await runImport(
      ["--jsonl", path, "--legacy-key-layout", "nestarc-v0"],
      { API_KEY_PEPPERS: JSON.stringify({ 1: PEPPER }), DATABASE_URL: "" },
    );
    assert.equal(run.code, 1, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout.trim()), {
      dryRun: true,
      imported: 2,
      skipped: 0,
      conflicts: 1,
      errors: 2,
    });
    assert.match(run.stderr, /^line 4: error: Invalid record: must be an object$/m);
    assert.match(run.stderr, /^line 5 \(short\): error: Invalid prefix/m);
    assert.match(run.stderr, new RegExp(`^line 6 \\(${keys[0].prefix}\\): conflict: `, "m"));
    assert.ok(!run.stderr.includes("0".repeat(64)), "no hash in the output");
    Deno.removeSync(path);
  });

  it("exits 0 when every line is imported, 2 on bad usage", async () => {
    const { path } = exportFile(3, PEPPER);
    const env = { API_KEY_PEPPERS: JSON.stringify({ 1: PEPPER }), DATABASE_URL: "" };
    const ok = await runImport(["--jsonl", path, "--legacy-key-layout", "nestarc-v0"], env);
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(JSON.parse(ok.stdout).imported, 3);
    assert.equal((await runImport([], env)).code, 2);
    assert.equal((await runImport(["--jsonl", path], { DATABASE_URL: "" })).code, 2);
    const badLayout = await runImport(["--jsonl", path, "--legacy-key-layout", "v9"], env);
    assert.equal(badLayout.code, 2);
    assert.match(badLayout.stderr, /unknown layout/);
    Deno.removeSync(path);
  });
});
