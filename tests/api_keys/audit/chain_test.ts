/** The audit chain: canonical JSON, hashes, verification and checkpoints. */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  auditHash,
  canonicalJson,
  checkpointValid,
  GENESIS_HASH,
  signCheckpoint,
  storedAuditRecord,
  verifiedAuditRecords,
  verifyAuditChain,
  verifyAuditExport,
} from "../../../api_keys/audit/chain.ts";
import type {
  AuditCheckpoint,
  AuditVerification,
  StoredAuditRecord,
} from "../../../api_keys/audit/types.ts";

const SECRET = "an-audit-key-of-at-least-thirty-two-bytes";

/** A valid chain of `n` records of tenant t1. */
async function chain(n: number): Promise<StoredAuditRecord[]> {
  const records: StoredAuditRecord[] = [];
  let prev = GENESIS_HASH;
  for (let seq = 1; seq <= n; seq++) {
    const at = new Date(Date.UTC(2026, 0, 1, 0, 0, seq));
    const body = canonicalJson({ v: 1, action: "key.created", keyId: `k${seq}` });
    const hash = await auditHash(prev, "t1", seq, at, body);
    records.push({ tenantId: "t1", seq, at, body, prevHash: prev, hash });
    prev = hash;
  }
  return records;
}

/** `records` as `exportAuditLog` writes them: a checkpoint line every `every` records and at the end. */
async function exportOf(
  records: StoredAuditRecord[],
  secret = SECRET,
  every = 2,
  tenantId = "t1",
): Promise<string[]> {
  const sign = async (r: StoredAuditRecord) =>
    JSON.stringify({
      type: "checkpoint",
      ...await signCheckpoint(secret, tenantId, r.seq, r.hash, new Date(0)),
    }) + "\n";
  const lines: string[] = [];
  let due: StoredAuditRecord | undefined;
  for (const r of records) {
    if (due !== undefined) lines.push(await sign(due));
    due = r.seq % every === 0 ? r : undefined;
    const { tenantId, seq, prevHash, hash } = r;
    const at = r.at.toISOString();
    lines.push(
      JSON.stringify({ type: "record", ...JSON.parse(r.body), tenantId, seq, at, prevHash, hash }) +
        "\n",
    );
  }
  if (records.length > 0) lines.push(await sign(records.at(-1)!));
  return lines;
}

/** `[problem, seq]` of a failed answer, `["ok", checked]` of a verified one. */
const outcome = (answer: AuditVerification) =>
  answer.ok ? ["ok", answer.checked] : [answer.problem, answer.seq];

const headOf = (records: StoredAuditRecord[]) => {
  const last = records.at(-1)!;
  return { seq: last.seq, hash: last.hash };
};

describe("api_keys/audit/chain.ts", () => {
  it("encodes canonical JSON with sorted keys, no whitespace and dates as ISO", () => {
    assert.equal(
      canonicalJson({ b: 1, a: [true, null, "x"], c: undefined, d: new Date(0) }),
      '{"a":[true,null,"x"],"b":1,"d":"1970-01-01T00:00:00.000Z"}',
    );
    assert.equal(canonicalJson({ z: { y: 1, x: 2 } }), '{"z":{"x":2,"y":1}}');
    assert.throws(() => canonicalJson(Number.NaN), TypeError);
    assert.throws(() => canonicalJson(() => {}), TypeError);
  });

  it("hashes prevHash, tenant, seq, time and body joined by newlines (SHA-256 hex)", async () => {
    const at = new Date(0);
    const hash = await auditHash(GENESIS_HASH, "t1", 1, at, "{}");
    const text = `${GENESIS_HASH}\nt1\n1\n1970-01-01T00:00:00.000Z\n{}`;
    const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
    const expected = Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0"))
      .join("");
    assert.equal(hash, expected);
    assert.notEqual(await auditHash(GENESIS_HASH, "t2", 1, at, "{}"), hash, "tenant covered");
    assert.notEqual(await auditHash(GENESIS_HASH, "t1", 2, at, "{}"), hash, "seq covered");
  });

  it("verifies a whole chain, from an async stream too", async () => {
    const records = await chain(5);
    assert.deepEqual(await verifyAuditChain(records, { tenantId: "t1", head: headOf(records) }), {
      ok: true,
      checked: 5,
      head: headOf(records),
    });
    async function* stream() {
      yield* records;
    }
    assert.equal((await verifyAuditChain(stream(), { tenantId: "t1" })).ok, true);
    assert.deepEqual(await verifyAuditChain([], { tenantId: "t1" }), {
      ok: true,
      checked: 0,
      head: null,
    });
  });

  it("walks a chain yielding each record once it verified, then answers as verifyAuditChain", async () => {
    const walked = async (records: StoredAuditRecord[]) => {
      const walk = verifiedAuditRecords(records, { tenantId: "t1", head: headOf(records) });
      const seqs: number[] = [];
      for (let step = await walk.next();; step = await walk.next()) {
        if (step.done) return { seqs, answer: step.value };
        seqs.push(step.value.seq);
      }
    };
    const records = await chain(4);
    assert.deepEqual(await walked(records), {
      seqs: [1, 2, 3, 4],
      answer: { ok: true, checked: 4, head: headOf(records) },
    });
    records[2] = { ...records[2], body: records[2].body.replace("k3", "k9") };
    const broken = await walked(records);
    assert.deepEqual(broken.seqs, [1, 2]);
    assert.deepEqual(
      broken.answer,
      await verifyAuditChain(records, {
        tenantId: "t1",
        head: headOf(records),
      }),
    );
    assert.equal(!broken.answer.ok && broken.answer.seq, 3);
  });

  it("names an edited record", async () => {
    const records = await chain(5);
    records[2] = { ...records[2], body: records[2].body.replace("k3", "k9") };
    const answer = await verifyAuditChain(records, { tenantId: "t1" });
    assert.equal(answer.ok, false);
    assert.equal(!answer.ok && answer.problem, "edited");
    assert.equal(!answer.ok && answer.seq, 3);
  });

  it("names a record whose time no writer makes (an invalid Date) or whose hash is any text edited", async () => {
    for (
      const odd of [{ at: new Date(Number.NaN) }, { hash: "" }, { hash: "A".repeat(64) }, {
        prevHash: " ",
      }]
    ) {
      const records = await chain(3);
      records[1] = { ...records[1], ...odd };
      const answer = await verifyAuditChain(records, { tenantId: "t1" });
      assert.equal(
        !answer.ok && `${answer.problem} ${answer.seq}`,
        "edited 2",
        JSON.stringify(odd),
      );
    }
  });

  it("names a record edited with its hash recomputed (the next one no longer links)", async () => {
    const records = await chain(5);
    const body = records[1].body.replace("k2", "k9");
    const hash = await auditHash(records[1].prevHash, "t1", 2, records[1].at, body);
    records[1] = { ...records[1], body, hash };
    const answer = await verifyAuditChain(records, { tenantId: "t1" });
    assert.deepEqual(!answer.ok && [answer.problem, answer.seq], ["edited", 2]);
  });

  it("names the head's record edited with its hash recomputed, or a re-chained tail, against the head", async () => {
    const records = await chain(3);
    const head = headOf(records);
    const last = records[2];
    const body = last.body.replace("k3", "k9");
    const edited = { ...last, body, hash: await auditHash(last.prevHash, "t1", 3, last.at, body) };
    const answer = await verifyAuditChain([records[0], records[1], edited], {
      tenantId: "t1",
      head,
    });
    assert.deepEqual(!answer.ok && [answer.problem, answer.seq], ["edited", 3]);
    // Record 2 edited and 2..3 re-chained: every link holds, only the head row's hash differs.
    const body2 = records[1].body.replace("k2", "k9");
    const hash2 = await auditHash(records[0].hash, "t1", 2, records[1].at, body2);
    const hash3 = await auditHash(hash2, "t1", 3, last.at, last.body);
    const rechained = await verifyAuditChain([
      records[0],
      { ...records[1], body: body2, hash: hash2 },
      { ...last, prevHash: hash2, hash: hash3 },
    ], { tenantId: "t1", head });
    assert.deepEqual(!rechained.ok && [rechained.problem, rechained.seq], ["edited", 3]);
    assert.equal((await verifyAuditChain(records, { tenantId: "t1", head })).ok, true);
  });

  it("names the first deleted record", async () => {
    const records = await chain(5);
    records.splice(1, 2);
    const answer = await verifyAuditChain(records, { tenantId: "t1" });
    assert.deepEqual(!answer.ok && [answer.problem, answer.seq], ["deleted", 2]);
  });

  it("names a record inserted past the head, or of another tenant", async () => {
    const records = await chain(4);
    const head = headOf(records.slice(0, 3));
    const answer = await verifyAuditChain(records, { tenantId: "t1", head });
    assert.deepEqual(!answer.ok && [answer.problem, answer.seq], ["inserted", 4]);
    records[1] = { ...records[1], tenantId: "t2" };
    const other = await verifyAuditChain(records, { tenantId: "t1" });
    assert.deepEqual(!other.ok && [other.problem, other.seq], ["inserted", 2]);
  });

  it("names a swapped pair as reordered", async () => {
    const records = await chain(5);
    const [a, b] = [records[2], records[3]];
    records[2] = { ...b, seq: 3 };
    records[3] = { ...a, seq: 4 };
    const answer = await verifyAuditChain(records, { tenantId: "t1" });
    assert.deepEqual(!answer.ok && [answer.problem, answer.seq], ["reordered", 3]);
  });

  it("names a record inserted or deleted in the middle, the records after it renumbered, at its own place (not a genuine record as edited)", async () => {
    const records = await chain(5);
    // A forged record at 3, hashed and linked to record 2; the genuine 3 to 5 moved to 4 to 6.
    const at = new Date(Date.UTC(2026, 0, 1, 0, 0, 3));
    const body = canonicalJson({ v: 1, action: "key.revoked", keyId: "k1" });
    const forged = {
      tenantId: "t1",
      seq: 3,
      at,
      body,
      prevHash: records[1].hash,
      hash: await auditHash(records[1].hash, "t1", 3, at, body),
    };
    const inserted = [
      ...records.slice(0, 2),
      forged,
      ...records.slice(2).map((r) => ({ ...r, seq: r.seq + 1 })),
    ];
    const one = await verifyAuditChain(inserted, { tenantId: "t1" });
    assert.deepEqual(!one.ok && [one.problem, one.seq, one.checked], ["inserted", 3, 2]);
    // Record 3 deleted; 4 and 5 moved to 3 and 4.
    const deleted = [
      ...records.slice(0, 2),
      ...records.slice(3).map((r) => ({ ...r, seq: r.seq - 1 })),
    ];
    const two = await verifyAuditChain(deleted, { tenantId: "t1" });
    assert.deepEqual(!two.ok && [two.problem, two.seq, two.checked], ["deleted", 3, 2]);
    // Two forged records at 3 and 4 (chained), the genuine 3 to 5 moved to 5 to 7.
    const second = {
      tenantId: "t1",
      seq: 4,
      at,
      body,
      prevHash: forged.hash,
      hash: await auditHash(forged.hash, "t1", 4, at, body),
    };
    const twoInserted = [
      ...records.slice(0, 2),
      forged,
      second,
      ...records.slice(2).map((r) => ({ ...r, seq: r.seq + 2 })),
    ];
    const three = await verifyAuditChain(twoInserted, { tenantId: "t1" });
    assert.deepEqual(!three.ok && [three.problem, three.seq, three.checked], ["inserted", 3, 2]);
    // Records 3 and 4 deleted; 5 moved to 3.
    const twoDeleted = [...records.slice(0, 2), { ...records[4], seq: 3 }];
    const four = await verifyAuditChain(twoDeleted, { tenantId: "t1" });
    assert.deepEqual(!four.ok && [four.problem, four.seq, four.checked], ["deleted", 3, 2]);
  });

  it("names a truncated tail against the head and against a checkpoint", async () => {
    const records = await chain(5);
    const head = headOf(records);
    const byHead = await verifyAuditChain(records.slice(0, 3), { tenantId: "t1", head });
    assert.deepEqual(!byHead.ok && [byHead.problem, byHead.seq], ["truncated", 4]);
    const checkpoint = { seq: 4, hash: records[3].hash };
    const byCheckpoint = await verifyAuditChain(records.slice(0, 3), {
      tenantId: "t1",
      checkpoint,
    });
    assert.deepEqual(!byCheckpoint.ok && [byCheckpoint.problem, byCheckpoint.seq], [
      "truncated",
      4,
    ]);
    assert.equal((await verifyAuditChain(records, { tenantId: "t1", checkpoint })).ok, true);
    const rewritten = await verifyAuditChain(records, {
      tenantId: "t1",
      checkpoint: { seq: 4, hash: GENESIS_HASH },
    });
    assert.deepEqual(!rewritten.ok && [rewritten.problem, rewritten.seq], ["edited", 4]);
  });

  it("says whether a checkpoint was checked or lies before the anchor (pruned past it, not checked)", async () => {
    const records = await chain(8);
    const kept = records.slice(5);
    const anchor = { seq: 6, prevHash: records[5].prevHash };
    const verify = (seq: number) =>
      verifyAuditChain(kept, {
        tenantId: "t1",
        anchor,
        checkpoint: { seq, hash: records[seq - 1].hash },
      });
    assert.equal(
      (await verify(7) as { checkpoint?: string }).checkpoint,
      "checked",
    );
    assert.equal(
      (await verify(5) as { checkpoint?: string }).checkpoint,
      "checked",
    );
    const before = await verify(3);
    assert.deepEqual(before, {
      ok: true,
      checked: 3,
      head: headOf(records),
      checkpoint: "before_prune",
    });
    const none = await verifyAuditChain(kept, { tenantId: "t1", anchor });
    assert.equal(none.ok && "checkpoint" in none, false);
  });

  it("refuses a tenant id that is not well-formed UTF-16 in a checkpoint (its UTF-8 is another tenant's)", async () => {
    const checkpoint = await signCheckpoint(SECRET, "acme\uFFFD", 3, "a".repeat(64), new Date(0));
    assert.equal(await checkpointValid(SECRET, checkpoint), true);
    assert.equal(await checkpointValid(SECRET, { ...checkpoint, tenantId: "acme\uD800" }), false);
    await assert.rejects(
      signCheckpoint(SECRET, "acme\uD800", 3, "a".repeat(64), new Date(0)),
      (error: Error) => error instanceof TypeError && /well-formed/.test(error.message),
    );
    // A pair stays well-formed.
    const pair = await signCheckpoint(SECRET, "acme\uD83D\uDE00", 3, "a".repeat(64), new Date(0));
    assert.equal(await checkpointValid(SECRET, pair), true);
  });

  it("verifies from an anchor after pruning, and names a record missing after it", async () => {
    const records = await chain(6);
    const kept = records.slice(3);
    const anchor = { seq: 4, prevHash: records[3].prevHash };
    assert.equal((await verifyAuditChain(kept, { tenantId: "t1", anchor })).ok, true);
    const answer = await verifyAuditChain(kept.slice(1), { tenantId: "t1", anchor });
    assert.deepEqual(!answer.ok && [answer.problem, answer.seq], ["deleted", 4]);
    const wrongAnchor = await verifyAuditChain(kept, {
      tenantId: "t1",
      anchor: { seq: 4, prevHash: GENESIS_HASH },
    });
    assert.deepEqual(!wrongAnchor.ok && [wrongAnchor.problem, wrongAnchor.seq], ["edited", 4]);
  });

  it("signs checkpoints with HMAC-SHA-256; another key, seq or hash does not verify", async () => {
    const checkpoint = await signCheckpoint(SECRET, "t1", 7, "a".repeat(64), new Date(0));
    assert.match(checkpoint.mac, /^[0-9a-f]{64}$/);
    assert.equal(checkpoint.at, "1970-01-01T00:00:00.000Z");
    assert.equal(await checkpointValid(SECRET, checkpoint), true);
    assert.equal(await checkpointValid(`${SECRET}!`, checkpoint), false);
    assert.equal(await checkpointValid(SECRET, { ...checkpoint, seq: 8 }), false);
    assert.equal(await checkpointValid(SECRET, { ...checkpoint, hash: "b".repeat(64) }), false);
    assert.equal(await checkpointValid(SECRET, { ...checkpoint, mac: "zz" }), false);
    await assert.rejects(signCheckpoint("short", "t1", 1, GENESIS_HASH, new Date()), TypeError);
  });

  it("a checkpoint's MAC covers its at: another moment, or one too long to be a moment, does not verify", async () => {
    const checkpoint = await signCheckpoint(SECRET, "t1", 7, "a".repeat(64), new Date(0));
    for (
      const at of [
        "2020-01-01T00:00:00.000Z",
        "1970-01-01T00:00:00.001Z",
        "1970-01-01",
        0,
        "x".repeat(31),
      ]
    ) {
      assert.equal(
        await checkpointValid(SECRET, { ...checkpoint, at } as AuditCheckpoint),
        false,
        String(at),
      );
    }
  });

  it("canonicalJson refuses nesting past 64 levels with a TypeError naming the limit (never a RangeError)", () => {
    const nested = (depth: number, wrap: (inner: unknown) => unknown): unknown => {
      let value: unknown = 1;
      for (let i = 0; i < depth; i++) value = wrap(value);
      return value;
    };
    assert.equal(canonicalJson(nested(64, (v) => [v])), `${"[".repeat(64)}1${"]".repeat(64)}`);
    assert.equal(canonicalJson(nested(64, (v) => ({ a: v }))).length, 64 * 6 + 1);
    for (const depth of [65, 100_000]) {
      for (const wrap of [(v: unknown) => [v], (v: unknown) => ({ a: v })]) {
        assert.throws(() => canonicalJson(nested(depth, wrap)), {
          name: "TypeError",
          message: /64/,
        });
      }
    }
    // A line nested that deep is refused the same way.
    const deep = "[".repeat(10_000) + "]".repeat(10_000);
    const line = `{"type":"record","tenantId":"t1","seq":1,"at":"2026-01-01T00:00:00.000Z",` +
      `"prevHash":"${GENESIS_HASH}","hash":"${GENESIS_HASH}","changes":${deep}}`;
    assert.throws(() => storedAuditRecord(line), { name: "TypeError", message: /64/ });
  });

  it("storedAuditRecord takes at only as the line holds it hashed (ISO 8601 UTC with ms)", async () => {
    const [record] = await chain(1);
    const line = (at: string) =>
      JSON.stringify({
        type: "record",
        ...JSON.parse(record.body),
        tenantId: "t1",
        seq: 1,
        at,
        prevHash: record.prevHash,
        hash: record.hash,
      });
    const iso = record.at.toISOString();
    assert.deepEqual(storedAuditRecord(line(iso)), record);
    const oneHourLater = new Date(record.at.getTime() + 3_600_000).toISOString();
    for (
      const at of [
        oneHourLater.replace("Z", "+01:00"), // the same instant, another text
        iso.replace("T", " "),
        iso.replace(".000Z", "Z"),
        record.at.toUTCString(),
        "not a date",
      ]
    ) {
      assert.throws(() => storedAuditRecord(line(at)), TypeError, at);
    }
  });

  it("storedAuditRecord refuses a line naming a member twice (JSON.parse would keep the last)", async () => {
    const [record] = await chain(1);
    const line = JSON.stringify({
      type: "record",
      ...JSON.parse(record.body),
      actor: 'bob says "actor":"x"',
      changes: { name: { before: "a", after: "b" } },
      tenantId: "t1",
      seq: 1,
      at: record.at.toISOString(),
      prevHash: record.prevHash,
      hash: record.hash,
    });
    assert.notEqual(storedAuditRecord(line), null, "a member name inside a string is text");
    for (
      const forged of [
        line.replace('{"type":"record",', '{"type":"record","actor":"mallory",'),
        line.replace('{"before":"a"', '{"before":"z","before":"a"'),
        line.replace('"seq":1', '"seq":1 ,\n "seq" : 1'),
        line.replace('{"type":"record",', '{"type":"record","__proto__":{},"__proto__":{},'),
      ]
    ) {
      assert.throws(
        () => storedAuditRecord(forged),
        { name: "TypeError", message: /twice/ },
        forged,
      );
    }
    const checkpoint = await signCheckpoint(SECRET, "t1", 1, record.hash, new Date(0));
    const checkpointLine = JSON.stringify({ type: "checkpoint", ...checkpoint });
    assert.equal(storedAuditRecord(checkpointLine), null);
    assert.throws(
      () => storedAuditRecord(checkpointLine.replace('"seq":1', '"seq":2,"seq":1')),
      TypeError,
    );
  });

  it("verifyAuditExport verifies an export file: its records, and its checkpoint lines with the key", async () => {
    const records = await chain(6);
    const lines = await exportOf(records);
    const expected = { tenantId: "t1", checkpointKey: SECRET };
    assert.deepEqual(await verifyAuditExport(lines, expected), {
      ok: true,
      checked: 6,
      head: headOf(records),
    });
    // Parsed lines, and an async stream, too.
    const stream = async function* () {
      for (const line of lines) yield JSON.parse(line);
    };
    assert.deepEqual(outcome(await verifyAuditExport(stream(), expected)), ["ok", 6]);
    assert.deepEqual(outcome(await verifyAuditExport([], expected)), ["ok", 0]);
    // An export from a later record (exportAuditLog's fromSeq, or after a prune): said so.
    const fromThree = lines.slice(lines.findIndex((l) => JSON.parse(l).seq === 3));
    assert.deepEqual(outcome(await verifyAuditExport(fromThree, { ...expected, fromSeq: 3 })), [
      "ok",
      4,
    ]);
    assert.deepEqual(outcome(await verifyAuditExport(fromThree, expected)), ["deleted", 1]);
    assert.deepEqual(outcome(await verifyAuditExport(lines, { ...expected, fromSeq: 3 })), [
      "inserted",
      1,
    ]);
    await assert.rejects(verifyAuditExport(lines, { ...expected, fromSeq: 0 }), TypeError);
    await assert.rejects(verifyAuditExport([], { ...expected, checkpointKey: "short" }), TypeError);
  });

  it("verifyAuditExport finds an export edited and re-hashed, cut, or of another deployment or tenant", async () => {
    const records = await chain(6);
    const lines = await exportOf(records);
    const expected = { tenantId: "t1", checkpointKey: SECRET };
    const kind = (line: string) => `${JSON.parse(line).type}:${JSON.parse(line).seq}`;
    const without = (...dropped: string[]) => lines.filter((l) => !dropped.includes(kind(l)));
    // Record 3 edited, records 3 to 6 hashed again, the checkpoint lines kept.
    const rehashed = [...records.slice(0, 2)];
    for (const r of records.slice(2)) {
      const body = r.seq === 3 ? r.body.replace('"k3"', '"k9"') : r.body;
      const prevHash = rehashed.at(-1)!.hash;
      rehashed.push({
        ...r,
        body,
        prevHash,
        hash: await auditHash(prevHash, "t1", r.seq, r.at, body),
      });
    }
    const edited = (await exportOf(rehashed)).map((line, i) =>
      JSON.parse(line).type === "checkpoint" ? lines[i] : line
    );
    const otherDeployment = await exportOf(records, `${SECRET}-elsewhere`);
    const otherTenant = await exportOf(records, SECRET, 2, "t2");
    const cases: [string, string[], [string, number]][] = [
      ["record 3 edited, the tail hashed again", edited, ["edited", 4]],
      ["the last record and its checkpoint cut", without("record:6", "checkpoint:6"), [
        "truncated",
        6,
      ]],
      ["the last checkpoint line cut", without("checkpoint:6"), ["truncated", 7]],
      ["the first record cut", without("record:1"), ["deleted", 1]],
      ["the last record dropped, its checkpoint kept", without("record:6"), ["deleted", 6]],
      ["a record in the middle dropped", without("record:3"), ["deleted", 3]],
      ["the checkpoint lines dropped", lines.filter((l) => kind(l).startsWith("record")), [
        "truncated",
        7,
      ]],
      ["another deployment's export (another key)", otherDeployment, ["checkpoint_invalid", 2]],
      ["a checkpoint line of another tenant", [
        ...lines.slice(0, -1),
        otherTenant.at(-1)!,
      ], ["checkpoint_invalid", 6]],
      ["a checkpoint line repeated", [...lines, lines.at(-1)!], ["checkpoint_invalid", 6]],
      ["a checkpoint line first", [lines[2], ...lines], ["deleted", 2]],
    ];
    for (const [name, tampered, answer] of cases) {
      assert.deepEqual(outcome(await verifyAuditExport(tampered, expected)), answer, name);
    }
  });
});
