/**
 * Exactness across processes and all or nothing, on each real store:
 * 4 processes × 250 concurrent checks at limit 100 in one window accept
 * exactly 100; with two policies where the second denies, the first's
 * remaining count is unchanged in 1,000 of 1,000 trials. Credits: 4 processes ×
 * 2,500 concurrent spends of a balance of 1,000 accept exactly 1,000 and leave
 * 0, never less.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createRateLimiter } from "../../rate_limits/limiter.ts";
import { createMemoryRateLimitStore } from "../../rate_limits/memory_store.ts";
import { freshSubject, openStore, readyStores } from "./_services.ts";

const PROCESSES = 4;
const PER_PROCESS = 250;
const TRIALS = 1_000;
const quiet = { logger: () => {}, timeoutMs: 30_000 };

/** Runs the four firing processes, starting them together once all are ready; returns their answers. */
async function fire(kind: string, subject: string, perProcess = PER_PROCESS, mode = "window") {
  const script = new URL("./fire.ts", import.meta.url).pathname;
  const children = Array.from({ length: PROCESSES }, () =>
    new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", script, kind, subject, String(perProcess), mode],
      stdin: "piped",
      stdout: "piped",
      stderr: "inherit",
    }).spawn());
  const lines = children.map((child) =>
    child.stdout.pipeThrough(new TextDecoderStream()).getReader()
  );
  const readLine = async (reader: ReadableStreamDefaultReader<string>, seen = "") => {
    while (!seen.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) break;
      seen += value;
    }
    return seen;
  };
  assert.deepEqual(
    (await Promise.all(lines.map((r) => readLine(r)))).map((l) => l.trim()),
    Array(PROCESSES).fill("ready"),
  );
  await Promise.all(children.map(async (child) => {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode("go\n"));
    await writer.close();
  }));
  const outputs = await Promise.all(lines.map((reader) => readLine(reader)));
  for (const child of children) assert.equal((await child.status).code, 0);
  return outputs.map((out) =>
    JSON.parse(out.trim()) as { allowed: number; unavailable: number; least: number }
  );
}

/** All-or-nothing trials on `store`; returns the trials where the first policy kept its count. */
async function allOrNothing(limiter: ReturnType<typeof createRateLimiter>): Promise<number> {
  const wide = { name: "wide", limit: 1_000, windowMs: 60_000 };
  const narrow = { name: "narrow", limit: 1, windowMs: 60_000 };
  let kept = 0;
  for (let trial = 0; trial < TRIALS; trial++) {
    const subject = freshSubject("aon");
    await limiter.check(subject, [wide, narrow]);
    const denied = await limiter.check(subject, [wide, narrow]);
    const after = await limiter.check(subject, [wide], { cost: 0 });
    if (
      !denied.allowed && !denied.unavailable && denied.policies[1].allowed === false &&
      denied.policies[0].remaining === 999 && after.policies[0].remaining === 999
    ) kept++;
  }
  return kept;
}

describe("in-memory store", () => {
  it(`accepts exactly 100 of ${PROCESSES * PER_PROCESS} concurrent checks in one process`, async () => {
    const limiter = createRateLimiter({ ...quiet, store: createMemoryRateLimitStore() });
    const policy = [{ name: "exact", limit: 100, windowMs: 60_000 }];
    const results = await Promise.all(
      Array.from({ length: PROCESSES * PER_PROCESS }, () => limiter.check("s", policy)),
    );
    assert.equal(results.filter((r) => r.allowed).length, 100);
  });

  it(`leaves the first policy unchanged when the second denies, ${TRIALS} of ${TRIALS}`, async () => {
    assert.equal(await allOrNothing(createRateLimiter(quiet)), TRIALS);
  });
});

for (const kind of await readyStores("rate-limit exactness")) {
  describe(`${kind} store`, () => {
    it(`accepts exactly 100 of ${PROCESSES} processes × ${PER_PROCESS} concurrent checks`, async () => {
      const answers = await fire(kind, freshSubject("exact"));
      console.log(`${kind}: allowed per process ${answers.map((a) => a.allowed).join(", ")}`);
      assert.deepEqual(answers.map((a) => a.unavailable), [0, 0, 0, 0]);
      assert.equal(answers.reduce((sum, a) => sum + a.allowed, 0), 100);
    });

    it(`spends a balance of 1,000 exactly once: ${PROCESSES} processes × 2,500 concurrent spends`, async () => {
      const subject = freshSubject("credits");
      const answers = await fire(kind, subject, 2_500, "credits");
      console.log(`${kind}: credits spent per process ${answers.map((a) => a.allowed).join(", ")}`);
      assert.deepEqual(answers.map((a) => a.unavailable), [0, 0, 0, 0]);
      assert.equal(answers.reduce((sum, a) => sum + a.allowed, 0), 1_000);
      assert.ok(answers.every((a) => a.least === 0), JSON.stringify(answers));
      const { store, close } = await openStore(kind);
      try {
        const [left] = await store.check([
          { kind: "credit", subject, name: "credits", cost: 0, initial: 1_000 },
        ]);
        assert.deepEqual(left, { allowed: true, remaining: 0, resetMs: -1 });
      } finally {
        await close();
      }
    });

    it(`leaves the first policy unchanged when the second denies, ${TRIALS} of ${TRIALS}`, async () => {
      const { store, close } = await openStore(kind);
      try {
        assert.equal(await allOrNothing(createRateLimiter({ ...quiet, store })), TRIALS);
      } finally {
        await close();
      }
    });
  });
}
