import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  durationProblem,
  instantProblem,
  keyIdProblem,
  MAX_ACTOR_LENGTH,
  MAX_API_KEY_INSTANT_MS,
  MAX_KEY_ID_LENGTH,
  requireObjectOf,
  requirePrintable,
  requireTenantId,
  thresholdsProblem,
} from "../../api_keys/_input.ts";

describe("input validation", () => {
  it("requirePrintable refuses C0, DEL and C1 control characters, naming the field; any other text is kept", () => {
    for (const code of [0x00, 0x09, 0x0a, 0x0d, 0x1f, 0x7f, 0x85, 0x9f]) {
      assert.throws(() => requirePrintable(`a${String.fromCharCode(code)}b`, "name"), {
        code: "api_key_invalid_input",
        field: "name",
      });
    }
    const text = "Clé « prod » \u00a0 🔑";
    assert.equal(requirePrintable(text, "name"), text);
  });

  it("requirePrintable refuses a lone surrogate (an emoji cut in half), which PostgreSQL's jsonb refuses", () => {
    for (const text of ["deploy 🚀".slice(0, 8), "a\udc00b", "\ud800"]) {
      assert.throws(() => requirePrintable(text, "name"), {
        code: "api_key_invalid_input",
        field: "name",
      });
    }
  });

  it("requirePrintable refuses line and paragraph separators, bidi controls and invisible marks (a name shown reversed)", () => {
    const refused = [0x2028, 0x2029, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067];
    for (const code of [...refused, 0x2068, 0x2069, 0x200b, 0x200e, 0x200f, 0xfeff]) {
      assert.throws(() => requirePrintable(`ci${String.fromCharCode(code)}gnp.exe`, "name"), {
        code: "api_key_invalid_input",
        field: "name",
      }, code.toString(16));
    }
  });

  it("requirePrintable keeps ZWJ and ZWNJ: an emoji sequence and a Persian name", () => {
    for (
      const text of ["deploy 👩\u200d💻", "👨\u200d👩\u200d👧", "می\u200cخواهم", "\u200c\u200d"]
    ) {
      assert.equal(requirePrintable(text, "name"), text);
    }
  });

  it("requireTenantId (a method's lookup): a non-empty string the storage can hold, else tenantId is refused", () => {
    for (const bad of ["", " ", "t\0", "t\ud800", 1, null, undefined]) {
      assert.throws(() => requireTenantId(bad), {
        code: "api_key_invalid_input",
        field: "tenantId",
      }, JSON.stringify(bad));
    }
    // Ids a create refuses now may be stored already: their keys stay listed and revocable.
    for (const tenantId of ["t1", " t1 ", "t\n1", "t\u202e1"]) {
      assert.equal(requireTenantId(tenantId), tenantId);
    }
  });

  it("keyIdProblem (an imported id, an idFactory's): 1 to 200 characters, not only spaces, printable and storable", () => {
    assert.equal(MAX_KEY_ID_LENGTH, 200);
    for (
      const id of [
        "k",
        "...",
        ".a",
        "a..",
        "legacy key:1+é",
        "x".repeat(200),
        "\u4e00".repeat(200),
        "🔑".repeat(100),
      ]
    ) {
      assert.equal(keyIdProblem(id), undefined, id.slice(0, 12));
    }
    const cases: [unknown, RegExp][] = [
      ["", /1 to 200 characters/],
      ["  ", /1 to 200 characters/],
      ["x".repeat(201), /1 to 200 characters/],
      [42, /1 to 200 characters/],
      [undefined, /1 to 200 characters/],
      ["a\0b", /control characters/],
      ["line\nbreak", /control characters/],
      ["ci\u202egnp", /bidi controls/],
      ["old-\ud800", /lone surrogate/],
      // A URL resolves them as dot segments: the settings page's /keys/<id> would be another route.
      [".", /must not be "\." or "\.\."/],
      ["..", /must not be "\." or "\.\."/],
    ];
    for (const [value, problem] of cases) {
      assert.match(keyIdProblem(value) ?? "", problem, JSON.stringify(value));
    }
  });

  it("MAX_ACTOR_LENGTH bounds an actor's name (createdBy, actorOf): 200", () => {
    assert.equal(MAX_ACTOR_LENGTH, 200);
  });

  it("bounds every instant and duration by 9999-12-31T23:59:59.999Z", () => {
    assert.equal(new Date(MAX_API_KEY_INSTANT_MS).toISOString(), "9999-12-31T23:59:59.999Z");
    assert.equal(instantProblem(MAX_API_KEY_INSTANT_MS), undefined);
    assert.match(instantProblem(MAX_API_KEY_INSTANT_MS + 1)!, /9999-12-31/);
    // The earliest a database timestamp holds everywhere: 0001-01-01T00:00:00.000Z.
    const earliest = Date.parse("0001-01-01T00:00:00.000Z");
    assert.equal(instantProblem(earliest), undefined);
    assert.match(instantProblem(earliest - 1)!, /0001-01-01/);
    assert.match(instantProblem(-8.64e15)!, /0001-01-01/);
    assert.equal(durationProblem(0, 0), undefined);
    for (const bad of [-1, NaN, Infinity, "5", null]) {
      assert.match(durationProblem(bad, 0)!, /non-negative whole number/, String(bad));
    }
    assert.match(durationProblem(1, MAX_API_KEY_INSTANT_MS)!, /9999-12-31/);
  });
});

describe("requireObjectOf", () => {
  const refusal = (names: string[]) => {
    try {
      requireObjectOf(Object.fromEntries(names.map((name) => [name, 1])), ["a"], "record");
    } catch (error) {
      return (error as Error).message;
    }
    assert.fail("not refused");
  };

  it("names an identifier of at most 32 characters; any other name only by its length", () => {
    const hash = "ab".repeat(32);
    const legacyKey = `nk_live_${"A".repeat(12)}_${"b".repeat(32)}`;
    assert.equal(
      refusal(["revoked_at", "__proto__", `x_${"y".repeat(31)}`, hash, legacyKey, "a b", "é"]),
      "Invalid record: unknown fields: revoked_at, __proto__, (a name of 33 characters), " +
        "(a name of 64 characters), (a name of 53 characters), (a name of 3 characters), " +
        "(a name of 1 characters) (known: a)",
    );
  });

  it("never names a key-shaped identifier: 32 letters or digits in a row (a secret, a hash)", () => {
    for (const name of ["s3cr3tS3cr3tS3cr3tS3cr3tS3cr3t00", "0123456789abcdef0123456789abcdef"]) {
      assert.equal(
        refusal([name]),
        "Invalid record: unknown fields: (a name of 32 characters) (known: a)",
      );
    }
    assert.equal(
      refusal(["last_used_at_in_milliseconds_utc"]),
      "Invalid record: unknown fields: last_used_at_in_milliseconds_utc (known: a)",
    );
  });
});

describe("thresholdsProblem (notifyExpiring, the Nest module's expiryNotices)", () => {
  it("accepts up to 32 whole positive durations of at most about 100 years", () => {
    const DAY = 86_400_000;
    assert.equal(thresholdsProblem([100 * 365 * DAY]), undefined);
    assert.equal(thresholdsProblem(Array.from({ length: 32 }, (_, i) => (i + 1) * DAY)), undefined);
    assert.match(thresholdsProblem([100 * 365 * DAY + 1])!, /at most/);
    assert.match(thresholdsProblem([])!, /non-empty array of at most 32/);
    assert.match(thresholdsProblem(Array(33).fill(DAY))!, /at most 32/);
    assert.match(thresholdsProblem([0])!, /positive whole/);
    assert.match(thresholdsProblem([1.5])!, /positive whole/);
  });
});
