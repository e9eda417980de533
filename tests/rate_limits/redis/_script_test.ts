import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import {
  CHANGE_SCRIPT,
  CHECK_SCRIPT,
  CREDIT_LUA,
  READ_SCRIPT,
  TIME_SCRIPT,
} from "../../../rate_limits/redis/_script.ts";

// Behaviour is proven on real Redis (tests/limits/stores_test.ts, redis_script_test.ts); here, the rules the scripts keep.
describe("the Redis scripts", () => {
  it("read only the server's clock and touch only the keys they are given", () => {
    for (const script of [CHECK_SCRIPT, CHANGE_SCRIPT, READ_SCRIPT]) {
      assert.match(script, /redis\.call\('TIME'\)/);
      const calls = [...script.matchAll(/redis\.call\('(\w+)', ([\w.[\]]+)/g)].map((m) => m[2]);
      assert.ok(calls.length > 1);
      assert.ok(calls.every((target) => ["c[KEY]", "key"].includes(target)), calls.join());
    }
    assert.match(TIME_SCRIPT, /redis\.call\('TIME'\)/);
  });

  // The docs are the repository's, not the npm test tree's: Deno only.
  it(
    "run the commands docs/compatibility.md names (an ACL listing commands needs them all), and no other",
    {
      skip: !("Deno" in globalThis),
    },
    () => {
      const page = readFileSync(new URL("../../../docs/compatibility.md", import.meta.url), "utf8");
      const named = page.match(/The Redis\s+store's scripts run ([^(]*)\(/)?.[1];
      assert.ok(named !== undefined, "the page names the scripts' commands");
      const listed = [...named.matchAll(/`(\w+)/g)].map((m) => m[1]).sort();
      const run = new Set<string>();
      for (const script of [CHECK_SCRIPT, CHANGE_SCRIPT, READ_SCRIPT, TIME_SCRIPT]) {
        for (const [, command] of script.matchAll(/redis\.call\('(\w+)'/g)) run.add(command);
      }
      assert.deepEqual(listed, [...run].sort());
    },
  );

  it("name each input in a commented local, never by index arithmetic", () => {
    for (const script of [CHECK_SCRIPT, CHANGE_SCRIPT, READ_SCRIPT]) {
      assert.doesNotMatch(script, /(ARGV|KEYS)\[[^\]]*[-+*][^\]]*\]/);
      for (const line of script.split("\n").filter((l) => /= (tonumber\()?(arg|key)\(\)/.test(l))) {
        assert.match(line, /-- \S/, line);
      }
    }
  });

  /** The check script's window part (after its clock and readers) and its batch loop (after the credit helpers). */
  const windows = CHECK_SCRIPT.slice(CHECK_SCRIPT.indexOf("local B = "));
  const [single, batch] = windows.split(
    CREDIT_LUA.slice(CREDIT_LUA.indexOf("-- The credit helpers")),
  );

  it("a check reads and writes each window counter once: one GET (none when its batch read it), and when it consumes one SETRANGE of its newest slot (a SET when its newest sub-bucket moved), after every check is decided", () => {
    assert.ok(single !== undefined && batch !== undefined, "the credit helpers stand between them");
    for (const part of [single, batch]) {
      const calls = [...part.matchAll(/redis\.call\('(\w+)', (c\[KEY\]|key)/g)].map((m) => m[1]);
      assert.deepEqual(calls, ["GET", "SET", "SETRANGE"]);
      // The two writes are the branches of one if: the whole value with PX when the expiry moves,
      // else the newest slot's 8 bytes (the expiry kept).
      assert.match(
        part,
        /if c\[MOVED\] then[^]*'SET', c\[KEY\], pack\(LAYOUT, head, unpack\(c, 1, SLOTS\)\), 'PX', ttl\)[^]*else[^]*redis\.call\('SETRANGE', c\[KEY\], 8 \* \(s \+ 1\), pack\('<d', c\[s \+ 1\]\)\)\s+end/,
      );
      // A counter is packed, not text: read by one struct.unpack, written by one struct.pack.
      assert.doesNotMatch(part, /match\(|format\(/);
      assert.equal(part.match(/unpack_counter\(LAYOUT, held\)/g)?.length, 1);
      assert.equal(part.match(/pack\(LAYOUT, /g)?.length, 1);
    }
    // A batch's writes (counters, then balances) follow the loop over the checks.
    const decided = batch.indexOf("-- Every check decided: the writes.");
    assert.ok(decided > batch.lastIndexOf("n_out = n_out + 3"));
    assert.ok(batch.indexOf("'SET'") > decided && batch.indexOf("flush()") > decided);
    assert.equal(CREDIT_LUA.match(/'HSET'/g)?.length, 1);
    assert.ok(CREDIT_LUA.indexOf("'HSET'") > CREDIT_LUA.indexOf("local function flush()"));
    // The batch's copy is looked up before the GET.
    assert.ok(batch.indexOf("counters[key]") < batch.indexOf("redis.call('GET', key)"));
    assert.doesNotMatch(CHECK_SCRIPT, /LRANGE|RPUSH|LTRIM/);
  });

  it("one check of one window counter takes the batch's steps, written once, before any table of the batch or credit helper is built", () => {
    // Its steps are the batch loop's, line for line (the same fragments, indented where they stand).
    const steps = (part: string) =>
      part.split("\n").map((line) => line.replace(/\s+-- .*$/, "").trim()).filter((line) =>
        line !== "" && !line.startsWith("--") && !/= (tonumber\()?(arg|key)\(\)/.test(line)
      );
    const lines = steps(batch);
    let from = 0;
    const path = single.slice(single.indexOf("local c\n"), single.indexOf("return { 1,"));
    for (const line of steps(path)) {
      if (
        ["local c", "local fit = c[TOTAL] + cost <= limit", "if consumed then", "end"].includes(
          line,
        )
      ) continue;
      const found = lines.indexOf(line, from);
      assert.ok(found >= 0, `the batch loop takes the step ${line}`);
      from = found + 1;
    }
    // It answers as the batch does: 1, allowed, remaining, reset, then the time (0 and the time when late).
    assert.match(single, /if now >= deadline then return \{ 0, now \} end/);
    assert.match(single, /return \{ 1, allowed, limit - total, reset, now \}\s+end\s*$/);
    const code = steps(single.slice(single.indexOf("if #KEYS == 1"))).join("\n");
    assert.doesNotMatch(code, /\b(out|writes|counters|windows|credits)\b|credit_helpers\(/);
    // Taken only for one check of one window counter in its four words (a batch of one key has 7 or more).
    assert.match(single, /if #KEYS == 1 and #ARGV == 4 then/);
    assert.match(batch, /^\s*local checks = tonumber\(arg\(\)\)/m);
  });

  it("builds the credit helpers only for a batch with a credit counter, once", () => {
    const builds = CHECK_SCRIPT.split("\n").filter((line) => line.includes("credit_helpers()"));
    assert.deepEqual(builds, [
      "local function credit_helpers()",
      "  if due and n_credits > 0 and balance == nil then balance, save, _, flush = credit_helpers() end",
    ]);
    // Nothing of the credit helpers is a closure of the script's own body.
    const prelude = CREDIT_LUA.slice(0, CREDIT_LUA.indexOf("local function credit_helpers()"));
    assert.doesNotMatch(prelude, /function (days|civil|boundary|period|balance|save|flush)\(/);
  });

  it("the read script writes nothing", () => {
    const body = READ_SCRIPT.slice(READ_SCRIPT.indexOf("local out = {}"));
    assert.doesNotMatch(body, /save\(|HSET|SET'|DEL|EXPIRE/);
  });
});
