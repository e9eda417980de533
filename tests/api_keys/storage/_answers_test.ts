/**
 * The checks of what a storage answers: the one check of every record read
 * (the readers of the other answers are tested through `StorageAccess`).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readApiKeyRecord, readExpiresAt } from "../../../api_keys/storage/_answers.ts";
import type { ApiKeyRecord } from "../../../api_keys/types.ts";
import { storedRecord } from "./stored_record.ts";

const RECORD: ApiKeyRecord = storedRecord();

describe("readApiKeyRecord", () => {
  it("reads a record, reads an invalid expiresAt as the epoch, refuses anything else naming the field", () => {
    assert.equal(readApiKeyRecord(RECORD), RECORD);
    const unreadable = readApiKeyRecord({ ...RECORD, expiresAt: new Date(NaN) });
    assert.equal(unreadable.expiresAt?.getTime(), 0);
    const cases: [unknown, RegExp][] = [
      [null, /not an object/],
      ["k1", /not an object/],
      [{ ...RECORD, environment: "prod" }, /environment must be "live" or "test"$/],
      [{ ...RECORD, scopes: "x" }, /scopes must be an array of strings$/],
      [{ ...RECORD, createdAt: new Date(NaN) }, /createdAt must be a valid Date$/],
      [{ ...RECORD, createdAt: undefined }, /createdAt must be a valid Date$/],
      [{ ...RECORD, hash: 1 }, /hash must be a string$/],
    ];
    for (const [bad, message] of cases) {
      assert.throws(() => readApiKeyRecord(bad), (error: Error) => {
        assert.ok(error instanceof TypeError);
        assert.match(error.message, /^malformed record: /);
        assert.match(error.message, message);
        return true;
      });
    }
  });

  it("reads an expiresAt outside 0001-01-01..9999-12-31 as expired (the epoch), as an invalid one", () => {
    const last = new Date("9999-12-31T23:59:59.999Z");
    assert.equal(readApiKeyRecord({ ...RECORD, expiresAt: last }).expiresAt, last);
    for (const expiresAt of [new Date(Date.UTC(10000, 0, 1)), new Date(Date.UTC(-1, 0, 1))]) {
      assert.equal(readApiKeyRecord({ ...RECORD, expiresAt }).expiresAt?.getTime(), 0);
      assert.equal(readExpiresAt(expiresAt)?.getTime(), 0);
    }
  });

  it("reads credits: absent is no credits, valid ones pass, malformed ones are refused naming the field", () => {
    const updatedAt = new Date("2030-01-01T00:00:00.000Z");
    const good = {
      remaining: 5,
      refill: { amount: 9, everyMs: 1_000 },
      updatedAt,
      balanceKeyId: "k0",
    };
    assert.equal(readApiKeyRecord({ ...RECORD, credits: good }).credits, good);
    assert.equal(readApiKeyRecord(RECORD).credits, undefined);
    for (
      const credits of [
        null,
        { remaining: -1, updatedAt },
        { remaining: 1.5, updatedAt },
        { remaining: 1e16, updatedAt },
        { remaining: 1 },
        { remaining: 1, updatedAt: "2030-01-01T00:00:00.000Z" },
        { remaining: 1, updatedAt: new Date(NaN) },
        { remaining: 1, updatedAt, refill: { amount: 1, interval: "weekly" } },
        { remaining: 1, updatedAt, balanceKeyId: "" },
      ]
    ) {
      assert.throws(
        () => readApiKeyRecord({ ...RECORD, credits }),
        /^TypeError: malformed record: credits must be absent or credits/,
      );
    }
  });

  it("reads each absent nullable field as null (a record of an older version), in a copy", () => {
    const { rotatedAt: _, replacedByKeyId: __, lastUsedAt: ___, ...older } = RECORD;
    const read = readApiKeyRecord(older);
    assert.notEqual(read, older);
    assert.deepEqual(read, RECORD);
    assert.equal("rotatedAt" in older, false);
  });
});
