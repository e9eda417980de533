/**
 * The CLI `deno task import-keys --jsonl FILE`: without DATABASE_URL an
 * in-memory dry run (with it, PostgreSQL: tests/postgres/legacy_test.ts).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { nestarcHash, nestarcKey } from "../api_keys/nestarc.ts";

const SCRIPT = new URL("../../scripts/import_keys.ts", import.meta.url).pathname;
const PEPPER = "cli-test-pepper-0123456789abcdefghij";

/** Runs the CLI with `args` and `env`; its exit code, stdout and stderr. */
export async function runImport(args: string[], env: Record<string, string>) {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", SCRIPT, ...args],
    env: { ...env, NO_COLOR: "1" },
    clearEnv: false,
  }).output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: output.code, stdout: decode(output.stdout), stderr: decode(output.stderr) };
}

/** A JSONL export of `count` nestarc keys hashed with `pepper`, plus the lines given. */
export function exportFile(count: number, pepper: string, extra: string[] = []) {
  const keys = Array.from({ length: count }, () => nestarcKey("ak"));
  const lines = keys.map((key, i) =>
    JSON.stringify({
      id: `cli-${i}-${key.prefix}`,
      tenantId: "t-cli",
      name: `cli ${i}`,
      environment: "live",
      prefix: key.prefix,
      hash: nestarcHash(key.secret, pepper),
      hashScheme: "sha256-pepper",
      pepperVersion: 1,
      scopes: ["orders:read"],
      createdAt: "2029-01-01T00:00:00.000Z",
    })
  );
  const path = Deno.makeTempFileSync({ suffix: ".jsonl" });
  Deno.writeTextFileSync(path, [...lines, ...extra].join("\n") + "\n");
  return { keys, path };
}

describe("scripts/import_keys.ts without DATABASE_URL (dry run)", () => {
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
