/**
 * The CLI `deno task import-keys --jsonl FILE`: without DATABASE_URL an
 * in-memory dry run (with it, PostgreSQL: tests/postgres/legacy_test.ts).
 * Deno only: it runs the script in a child Deno process.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { exportFile, runImport, SCRIPT } from "./import_keys_cli.ts";

const PEPPER = "cli-test-pepper-0123456789abcdefghij";
/** `stderr` without the warnings of Deno itself (deno.json has deprecated compiler options). */
const ownLines = (stderr: string) =>
  stderr.split("\n").filter((line) => !line.startsWith("Warning")).join("\n").trim();
const onDeno = typeof (globalThis as { Deno?: unknown }).Deno !== "undefined";

/**
 * The CLI's dry run of `path` (the `nestarc-v0` layout, pepper version 1), which finds a bad
 * record: it exits 1 (its stderr shown if not).
 */
async function failingDryRun(path: string) {
  const run = await runImport(
    ["--jsonl", path, "--legacy-key-layout", "nestarc-v0"],
    { API_KEY_PEPPERS: JSON.stringify({ 1: PEPPER }), DATABASE_URL: "" },
  );
  assert.equal(run.code, 1, run.stderr);
  return run;
}

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
    const run = await failingDryRun(path);
    assert.deepEqual(JSON.parse(run.stdout.trim()), {
      dryRun: true,
      imported: 2,
      skipped: 0,
      revoked: 0,
      conflicts: 1,
      errors: 2,
    });
    assert.match(run.stderr, /^line 4: error: Invalid record: must be an object$/m);
    assert.match(run.stderr, /^line 5: error: Invalid prefix/m); // not a prefix: not printed
    assert.doesNotMatch(run.stderr, /with this tool/, "a layout is given: the record is wrong");
    assert.match(run.stderr, new RegExp(`^line 6 \\(${keys[0].prefix}\\): conflict: `, "m"));
    assert.ok(!run.stderr.includes("0".repeat(64)), "no hash in the output");
    Deno.removeSync(path);
  });

  it("a re-run's changed lines: a revocation applied and counted, other changes conflicts naming the fields", async () => {
    const { keys, path } = exportFile(1, PEPPER);
    const [line] = Deno.readTextFileSync(path).split("\n");
    const record = JSON.parse(line);
    const wholeKey = { ...record, id: "other", prefix: keys[0].raw };
    Deno.writeTextFileSync(
      path,
      [
        line,
        JSON.stringify({ ...record, tenantId: "globex", scopes: ["orders:write"] }),
        JSON.stringify({ ...record, revokedAt: "2029-11-30T00:00:00.000Z" }),
        JSON.stringify(wholeKey),
      ].join("\n") + "\n",
    );
    const run = await failingDryRun(path);
    assert.deepEqual(JSON.parse(run.stdout.trim()), {
      dryRun: true,
      imported: 1,
      skipped: 0,
      revoked: 1,
      conflicts: 1,
      errors: 1,
    });
    assert.match(
      run.stderr,
      new RegExp(
        `^line 2 \\(${keys[0].prefix}\\): conflict: the same key differs in tenantId, scopes$`,
        "m",
      ),
    );
    assert.match(run.stderr, /^line 4: error: Invalid prefix/m);
    assert.ok(!run.stderr.includes(keys[0].secret), "a key's secret is never printed");
    Deno.removeSync(path);
  });

  it("a line with unknown fields is an error naming them (never imported as a live key)", async () => {
    const { keys, path } = exportFile(2, PEPPER);
    const [first, second] = Deno.readTextFileSync(path).split("\n").map((line) =>
      line === "" ? line : JSON.parse(line)
    );
    Deno.writeTextFileSync(
      path,
      [
        JSON.stringify({ ...first, revoked_at: "2024-05-01T00:00:00Z" }),
        JSON.stringify({ ...second, revoked: true, expires: "2024-02-01T00:00:00Z" }),
      ].join("\n") + "\n",
    );
    const run = await failingDryRun(path);
    assert.equal(JSON.parse(run.stdout).imported, 0);
    assert.equal(JSON.parse(run.stdout).errors, 2);
    assert.match(
      run.stderr,
      new RegExp(
        `^line 1 \\(${
          keys[0].prefix
        }\\): error: Invalid record: unknown fields: revoked_at \\(known: id, .*\\)$`,
        "m",
      ),
    );
    assert.match(
      run.stderr,
      new RegExp(
        `^line 2 \\(${
          keys[1].prefix
        }\\): error: .*unknown fields: revoked, expires \\(known: id, .*\\)$`,
        "m",
      ),
    );
    assert.ok(!run.stderr.includes("2024-"), "no value in the output");
    Deno.removeSync(path);
  });

  it("@nestarc/api-keys scopes with capitals and '/' import one to one; ':' or a space in a resource is that line's error", async () => {
    const { keys, path } = exportFile(4, PEPPER);
    const records = Deno.readTextFileSync(path).split("\n").filter((line) => line !== "").map((
      line,
    ) => JSON.parse(line));
    const scopes = [
      ["Orders:read", "billing/invoices:write"],
      ["v2.Reports-x_1:read", `${"R".repeat(100)}:write`],
      ["billing invoices:read"],
      ["a:b:read"],
    ];
    Deno.writeTextFileSync(
      path,
      records.map((record, i) => JSON.stringify({ ...record, scopes: scopes[i] })).join("\n") +
        "\n",
    );
    const run = await failingDryRun(path);
    assert.deepEqual(JSON.parse(run.stdout.trim()), {
      dryRun: true,
      imported: 2,
      skipped: 0,
      revoked: 0,
      conflicts: 0,
      errors: 2,
    });
    for (const [line, key] of [[3, keys[2]], [4, keys[3]]] as const) {
      assert.match(
        run.stderr,
        new RegExp(
          `^line ${line} \\(${key.prefix}\\): error: Invalid scopes: scopes\\[0\\]\\.resource ` +
            "must be 1-128 characters of \\[A-Za-z0-9._/-\\]$",
          "m",
        ),
      );
    }
    assert.doesNotMatch(run.stderr, /^line [12]/m, run.stderr);
    Deno.removeSync(path);
  });

  it("a line over 1 MiB is an error, counted in bytes (2 MB of é), and the next line still imports", async () => {
    const { keys, path } = exportFile(2, PEPPER);
    const [first, second] = Deno.readTextFileSync(path).split("\n");
    // 1,000,000 "é": under 1 MiB in UTF-16 units, 2 MB in UTF-8.
    const long = JSON.stringify({ ...JSON.parse(first), x: "é".repeat(1_000_000) });
    Deno.writeTextFileSync(path, `${long}\n${second}\n`);
    const run = await failingDryRun(path);
    assert.equal(JSON.parse(run.stdout).imported, 1);
    assert.equal(ownLines(run.stderr), "line 1: error: longer than 1 MiB (of UTF-8): not read");
    assert.ok(!run.stderr.includes(keys[0].prefix));
    Deno.removeSync(path);
  });

  it("a line that is not valid UTF-8 is that line's error (never read with U+FFFD), the next one imported", async () => {
    const { keys, path } = exportFile(3, PEPPER);
    const lines = Deno.readTextFileSync(path).split("\n");
    const encoder = new TextEncoder();
    // Tenant ids that differ only in an invalid byte: decoded leniently, both would be "acme\uFFFD".
    const [first, second] = [0xff, 0xfe].map((byte, i) => {
      const [head, tail] = lines[i].split('"t-cli"');
      return [...encoder.encode(`${head}"acme`), byte, ...encoder.encode(`"${tail}`)];
    });
    const bytes = [...first, 0x0a, ...second, 0x0a, ...encoder.encode(lines[2] + "\n")];
    Deno.writeFileSync(path, new Uint8Array(bytes));
    const run = await failingDryRun(path);
    assert.deepEqual(JSON.parse(run.stdout.trim()), {
      dryRun: true,
      imported: 1,
      skipped: 0,
      revoked: 0,
      conflicts: 0,
      errors: 2,
    });
    assert.equal(
      ownLines(run.stderr),
      "line 1: error: not valid UTF-8\nline 2: error: not valid UTF-8",
    );
    assert.ok(!run.stderr.includes(keys[0].prefix));
    Deno.removeSync(path);
  });

  it("200,000 bad lines: each printed with its number, the summary counting them all", async () => {
    const path = Deno.makeTempFileSync({ suffix: ".jsonl" });
    Deno.writeTextFileSync(path, '{"x":1}\n'.repeat(200_000));
    const run = await runImport(["--jsonl", path, "--pepper-version", "1"], { DATABASE_URL: "" });
    assert.equal(run.code, 1);
    assert.equal(JSON.parse(run.stdout).errors, 200_000);
    const printed = ownLines(run.stderr).split("\n");
    assert.equal(printed.length, 200_000);
    assert.match(printed[199_999], /^line 200000: error: Invalid record: unknown fields: x /);
    Deno.removeSync(path);
  });

  it("prints each bad line as it is read, before the input ends", async () => {
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "--quiet", "-A", SCRIPT, "--jsonl", "/dev/stdin", "--pepper-version", "1"],
      env: { DATABASE_URL: "", NO_COLOR: "1" },
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const input = child.stdin.getWriter();
    const errors = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
    let stderr = "";
    /** Reads stderr until it holds `text`; false if the CLI ended (or 60 s passed) first. */
    const printed = async (text: string) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const deadline = new Promise<false>((resolve) => timer = setTimeout(resolve, 60_000, false));
      const read = (async () => {
        while (!stderr.includes(text)) {
          const { value, done } = await errors.read();
          if (done) return false;
          stderr += value;
        }
        return true;
      })();
      try {
        return await Promise.race([read, deadline]);
      } finally {
        clearTimeout(timer);
      }
    };
    let shown = 0;
    try {
      for (const line of [1, 2]) {
        await input.write(new TextEncoder().encode('{"x":1}\n'));
        if (!await printed(`line ${line}: error: `)) break;
        shown = line;
      }
    } finally {
      await input.close();
      await errors.cancel();
    }
    const [{ code }, stdout] = await Promise.all([child.status, new Response(child.stdout).text()]);
    assert.equal(shown, 2, `line ${shown + 1} not printed while the input was open: ${stderr}`);
    assert.equal(code, 1);
    assert.equal(JSON.parse(stdout).errors, 2);
  });

  it("a pepper map the wrong way round never prints the pepper", async () => {
    const { path } = exportFile(1, PEPPER);
    const args = ["--jsonl", path, "--legacy-key-layout", "nestarc-v0"];
    for (const peppers of [{ [PEPPER]: 1 }, { [PEPPER]: "1" }]) {
      const run = await runImport(args, {
        API_KEY_PEPPERS: JSON.stringify(peppers),
        DATABASE_URL: "",
      });
      assert.equal(run.code, 2, run.stderr);
      assert.match(run.stderr, /^import-keys: API_KEY_PEPPERS .*not a version/m);
      assert.ok(!run.stderr.includes(PEPPER), run.stderr);
    }
    const shown = await runImport(args, {
      API_KEY_PEPPERS: JSON.stringify({ 0: PEPPER }),
      DATABASE_URL: "",
    });
    assert.match(
      shown.stderr,
      /^import-keys: API_KEY_PEPPERS version "0" is not a positive integer/m,
    );
    Deno.removeSync(path);
  });

  it("takes the old peppers at any length (it never hashes) and never advises a new one", async () => {
    const old = "old-pepper-16byt";
    const { path } = exportFile(2, old);
    const args = ["--jsonl", path, "--legacy-key-layout", "nestarc-v0"];
    const run = await runImport(args, {
      API_KEY_PEPPERS: JSON.stringify({ 1: old }),
      DATABASE_URL: "",
    });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(JSON.parse(run.stdout).imported, 2);
    for (const peppers of [{ 1: "" }, { 1: 5 }, {}, [old]]) {
      const bad = await runImport(args, {
        API_KEY_PEPPERS: JSON.stringify(peppers),
        DATABASE_URL: "",
      });
      assert.equal(bad.code, 2, JSON.stringify(peppers));
      assert.match(bad.stderr, /^import-keys: API_KEY_PEPPERS /m, JSON.stringify(peppers));
      assert.doesNotMatch(bad.stderr, /openssl|at least 32/, JSON.stringify(peppers));
    }
    Deno.removeSync(path);
  });

  it("needs no pepper material: --pepper-version names the versions (API_KEY_PEPPERS then unread)", async () => {
    const { keys, path } = exportFile(2, PEPPER);
    const [line] = Deno.readTextFileSync(path).split("\n");
    const record = JSON.parse(line);
    Deno.writeTextFileSync(
      path,
      [
        JSON.stringify({ ...record, revokedAt: "2029-11-30T00:00:00.000Z" }),
        JSON.stringify({ ...record, id: "v3", prefix: keys[1].prefix, pepperVersion: 3 }),
      ].join("\n") + "\n",
      { append: true },
    );
    const args = ["--jsonl", path, "--legacy-key-layout", "nestarc-v0"];
    const env = { API_KEY_PEPPERS: "not the peppers", DATABASE_URL: "" };
    const run = await runImport([...args, "--pepper-version", "1", "--pepper-version", "2"], env);
    assert.equal(run.code, 1, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout.trim()), {
      dryRun: true,
      imported: 2,
      skipped: 0,
      revoked: 1,
      conflicts: 0,
      errors: 1,
    });
    assert.match(
      run.stderr,
      new RegExp(
        `^line 4 \\(${keys[1].prefix}\\): error: .*pepper version 3 is not configured; ` +
          "with this tool: --pepper-version N$",
        "m",
      ),
    );
    const noLayout = await runImport(["--jsonl", path, "--pepper-version", "1"], env);
    assert.equal(noLayout.code, 1, noLayout.stderr);
    assert.match(
      noLayout.stderr,
      /^line 1 .*error: Invalid \w+: .*; with this tool: --legacy-key-layout NAME$/m,
    );
    for (const version of ["0", "x", "1.5"]) {
      const bad = await runImport([...args, "--pepper-version", version], env);
      assert.equal(bad.code, 2, version);
      assert.match(bad.stderr, /^import-keys: --pepper-version /m, version);
    }
    Deno.removeSync(path);
  });

  it("a missing --jsonl file is bad usage (exit 2, one line, no stack)", async () => {
    const missing = Deno.makeTempDirSync() + "/missing.jsonl";
    const run = await runImport(["--jsonl", missing, "--legacy-key-layout", "nestarc-v0"], {
      API_KEY_PEPPERS: JSON.stringify({ 1: PEPPER }),
      DATABASE_URL: "",
    });
    assert.equal(run.code, 2, run.stderr);
    assert.equal(ownLines(run.stderr), `import-keys: cannot read --jsonl ${missing}: no such file`);
  });

  it("a directory or a file that fails to read as --jsonl is bad usage (exit 2, one line, no stack)", async () => {
    const directory = Deno.makeTempDirSync();
    const args = ["--pepper-version", "1"];
    const run = await runImport(["--jsonl", directory, ...args], { DATABASE_URL: "" });
    assert.equal(run.code, 2, run.stderr);
    assert.equal(
      ownLines(run.stderr),
      `import-keys: cannot read --jsonl ${directory}: a directory`,
    );
    Deno.removeSync(directory);
    // Linux: a regular file whose first read fails (EIO: nothing is mapped at address 0).
    if (Deno.build.os !== "linux") return;
    const failing = await runImport(["--jsonl", "/proc/self/mem", ...args], { DATABASE_URL: "" });
    assert.equal(failing.code, 2, failing.stderr);
    assert.equal(
      ownLines(failing.stderr),
      "import-keys: cannot read --jsonl /proc/self/mem: Error EIO",
    );
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
    // A namespace changes no prefix nor layout name, so the tool has no flag for it.
    const namespaced = await runImport(["--jsonl", path, "--namespace", "acme"], env);
    assert.equal(namespaced.code, 2);
    assert.match(namespaced.stderr, /Unknown option '--namespace'/);
    Deno.removeSync(path);
  });
});

describe("scripts/import_keys.ts with DATABASE_URL and no generated Prisma client", {
  skip: onDeno ? false : "runs the CLI under Deno",
}, () => {
  it("is bad usage (exit 2) naming the command that generates it, before connecting", async () => {
    // A copy of the script beside the sources, without generated/ (a fresh clone).
    const root = new URL("../../", import.meta.url).pathname;
    const clone = Deno.makeTempDirSync();
    Deno.mkdirSync(`${clone}/scripts`);
    Deno.copyFileSync(`${root}scripts/import_keys.ts`, `${clone}/scripts/import_keys.ts`);
    for (const dir of ["api_keys", "client", "rate_limits", "safe_response", "telemetry"]) {
      Deno.symlinkSync(`${root}${dir}`, `${clone}/${dir}`);
    }
    const { path } = exportFile(1, PEPPER);
    const output = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--quiet",
        "-A",
        "--config",
        `${root}deno.json`,
        `${clone}/scripts/import_keys.ts`,
        "--jsonl",
        path,
        "--legacy-key-layout",
        "nestarc-v0",
      ],
      env: {
        API_KEY_PEPPERS: JSON.stringify({ 1: PEPPER }),
        DATABASE_URL: "postgresql://nobody:nothing@127.0.0.1:9/none",
        NO_COLOR: "1",
      },
    }).output();
    const stderr = ownLines(new TextDecoder().decode(output.stderr));
    assert.equal(output.code, 2, stderr);
    assert.equal(
      stderr,
      "import-keys: the Prisma client is not generated (generated/prisma/client.ts): run " +
        "`deno run -A npm:prisma@7.10.1 generate --schema prisma/schema.prisma` in the repository first",
    );
    Deno.removeSync(clone, { recursive: true });
    Deno.removeSync(path);
  });
});

describe("scripts/import_keys.ts with DATABASE_URL of a database it cannot reach", {
  skip: onDeno ? false : "runs the CLI under Deno",
}, () => {
  it("is a fatal error (exit 2): one line naming the error's kind, never the URL or password", async () => {
    // The client the tool loads (the unit run may come before scripts/start_postgres.sh made it).
    const { ensureGenerated } = await import("../postgres/prisma_client.ts");
    await ensureGenerated();
    const { path } = exportFile(1, PEPPER);
    const run = await runImport(["--jsonl", path, "--legacy-key-layout", "nestarc-v0"], {
      API_KEY_PEPPERS: JSON.stringify({ 1: PEPPER }),
      DATABASE_URL: "postgresql://u:secretpw@127.0.0.1:1/db",
    });
    Deno.removeSync(path);
    const stderr = ownLines(run.stderr);
    assert.equal(run.code, 2, stderr);
    assert.equal(run.stdout, "");
    assert.equal(
      stderr,
      "import-keys: cannot query the database of DATABASE_URL " +
        "(PrismaClientKnownRequestError P2010 DatabaseNotReachable): nothing was imported",
    );
    assert.doesNotMatch(stderr, /secretpw|127\.0\.0\.1/);
  });
});
