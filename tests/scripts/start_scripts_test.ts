/** The service scripts need only Node and npm, and fail loudly when they cannot print their URL. */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";

const noScripts = !existsSync(new URL("../../scripts/start_redis.sh", import.meta.url)) &&
  "scripts/ is not in this test tree";
const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");
const commands = (script: string) =>
  script.split("\n").filter((line) => !line.trimStart().startsWith("#"));

describe("scripts/start_postgres.sh and scripts/start_redis.sh", { skip: noScripts }, () => {
  it("run Deno through node scripts/deno.mjs, never a deno from PATH", () => {
    for (const path of ["scripts/start_postgres.sh", "scripts/start_redis.sh"]) {
      const bare = commands(read(path)).filter((line) => /(^|[\s;(|&])deno\s/.test(line));
      assert.deepEqual(bare, [], path);
    }
    assert.match(read("scripts/start_postgres.sh"), /node scripts\/deno\.mjs run/);
  });

  it("a start that cannot print its URL exits non-zero with the reason", () => {
    // A port redis-server refuses: nothing answers, so no REDIS_URL may be printed.
    const run = spawnSync("bash", ["scripts/start_redis.sh"], {
      cwd: new URL("../../", import.meta.url),
      env: { ...process.env, REDIS_PORT: "not-a-port" },
      encoding: "utf8",
    });
    assert.notEqual(run.status, 0);
    assert.doesNotMatch(run.stdout, /REDIS_URL=/);
    assert.match(run.stderr, /start_redis: FAILED .*no REDIS_URL printed/);
  });
});
