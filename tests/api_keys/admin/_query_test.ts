import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  decodeCursor,
  encodeCursor,
  listQuery,
  MAX_PAGE_SIZE,
  queryLimit,
  usageKeys,
  usageWindow,
} from "../../../api_keys/admin/_query.ts";
import { ApiKeyValidationError } from "../../../api_keys/errors.ts";
import { keyIdsProblem } from "../../../api_keys/storage/_access.ts";

const query = (params: Record<string, string>) => (name: string) => params[name] ?? null;

/** Asserts `run` throws the 400 `api_key_invalid_input` naming `field`. */
function refuses(run: () => unknown, field: string, label: string): void {
  assert.throws(run, (error: unknown) => {
    assert.ok(error instanceof ApiKeyValidationError, label);
    assert.equal(error.code, "api_key_invalid_input", label);
    assert.equal(error.field, field, label);
    return true;
  }, label);
}

describe("api_keys/admin/_query.ts", () => {
  it("listQuery: defaults are 25 newest first, every key but the revoked, both environments", () => {
    assert.deepEqual(listQuery(query({})), {
      limit: 25,
      options: {
        limit: 26,
        after: null,
        q: null,
        status: "unrevoked",
        environment: null,
        sort: "created_desc",
      },
    });
    // Empty values read as absent (`?cursor=&q=`).
    assert.deepEqual(
      listQuery(query({ cursor: "", q: "", status: "", limit: "" })),
      listQuery(query({})),
    );
  });

  it("listQuery: each parameter read as given", () => {
    const read = listQuery(
      query({ limit: "100", q: "ci", status: "revoked", environment: "test", sort: "name_asc" }),
    );
    assert.deepEqual(read, {
      limit: 100,
      options: {
        limit: 101,
        after: null,
        q: "ci",
        status: "revoked",
        environment: "test",
        sort: "name_asc",
      },
    });
    for (const status of ["active", "rotating", "expired", "all"]) {
      assert.equal(listQuery(query({ status })).options.status, status);
    }
    for (const sort of ["created_asc", "last_used_desc"]) {
      assert.equal(listQuery(query({ sort })).options.sort, sort);
    }
  });

  it("queryLimit: up to three digits from 1 to 100, absent or empty undefined (GET /keys and GET /audit)", () => {
    assert.equal(queryLimit(query({})), undefined);
    assert.equal(queryLimit(query({ limit: "" })), undefined);
    assert.equal(queryLimit(query({ limit: "7" })), 7);
    assert.equal(queryLimit(query({ limit: "100" })), 100);
    for (const limit of ["0", "101", "-1", "1e1", "0x19", " 7 ", "7.0"]) {
      refuses(() => queryLimit(query({ limit })), "limit", `limit ${limit}`);
    }
  });

  it("listQuery: out-of-range and unknown values are 400 naming the parameter", () => {
    for (const limit of ["0", "101", "1000", "-1", "1e2", "2.5", " 5", "0x10", "abc"]) {
      refuses(() => listQuery(query({ limit })), "limit", `limit ${limit}`);
    }
    for (const status of ["unrevoked", "ACTIVE", "deleted"]) {
      refuses(() => listQuery(query({ status })), "status", status);
    }
    refuses(() => listQuery(query({ environment: "prod" })), "environment", "environment");
    refuses(() => listQuery(query({ sort: "name_desc" })), "sort", "sort");
    refuses(() => listQuery(query({ q: "x".repeat(201) })), "q", "q too long");
    assert.equal(listQuery(query({ q: "x".repeat(200) })).options.q?.length, 200);
    // 200 code points, as the OpenAPI document's maxLength counts them: 400 UTF-16 units of emoji.
    assert.equal(listQuery(query({ q: "\u{1F511}".repeat(200) })).options.q?.length, 400);
    refuses(() => listQuery(query({ q: "\u{1F511}".repeat(201) })), "q", "q of 201 emoji");
    assert.equal(MAX_PAGE_SIZE, 100);
  });

  it("cursors: round trip per sort; another sort's, tampered or oversized ones are 400", () => {
    const at = new Date("2030-01-02T03:04:05.678Z");
    const cases = [
      ["created_desc", { id: "k1", value: at }],
      ["created_asc", { id: "k2", value: at }],
      ["name_asc", { id: "k3", value: "naïve ✓ name" }],
      ["last_used_desc", { id: "k4", value: at }],
      ["last_used_desc", { id: "k5", value: null }],
      // At the bounds: 200-character ids and names, 3 UTF-8 bytes each or a 6-byte JSON escape.
      ["name_asc", { id: "\u4e00".repeat(200), value: "\u4e00".repeat(200) }],
      ["name_asc", { id: "\u0001".repeat(200), value: "\u0001".repeat(200) }],
      // A name of 200 code points: 200 emoji, 400 UTF-16 units.
      ["name_asc", { id: "\u0001".repeat(200), value: "\u{1F511}".repeat(200) }],
      ["last_used_desc", { id: "\u4e00".repeat(200), value: at }],
    ] as const;
    for (const [sort, position] of cases) {
      const cursor = encodeCursor(sort, position);
      assert.match(cursor, /^[A-Za-z0-9_-]+$/);
      assert.deepEqual(decodeCursor(cursor, sort), position);
      assert.deepEqual(listQuery(query({ cursor, sort })).options.after, position);
    }
    const byName = encodeCursor("name_asc", { id: "k", value: "n" });
    refuses(() => decodeCursor(byName, "created_desc"), "cursor", "another sort");
    const bad = [
      "not base64!",
      "x".repeat(1025),
      btoa("[]"),
      btoa('["created_desc","k","not a date"]'),
      btoa('["created_desc","","2030-01-01T00:00:00Z"]'),
      btoa('["created_desc","k",null]'),
      // Parsed, but out of the instants the service reads (a 503 from PostgreSQL, 22009).
      btoa('["created_desc","k","-010000-01-01T00:00:00.000Z"]'),
      btoa('["created_desc","k","0000-12-31T23:59:59.999Z"]'),
      btoa('["created_desc","k","+010000-01-01T00:00:00.000Z"]'),
      btoa('["name_asc","k",5]'),
      btoa("{"),
    ];
    const lastUsed = encodeCursor("last_used_desc", { id: "k", value: new Date(8.64e15) });
    refuses(() => decodeCursor(lastUsed, "last_used_desc"), "cursor", "last_used_desc, year 10000");
    for (const cursor of bad) {
      refuses(() => decodeCursor(cursor.replaceAll("=", ""), "created_desc"), "cursor", cursor);
    }
  });

  it("usageKeys: 1 to 100 distinct ids, comma-separated", () => {
    assert.deepEqual(usageKeys(query({ keys: "a,b,c" })), ["a", "b", "c"]);
    const hundred = Array.from({ length: 100 }, (_, i) => `k${i}`);
    assert.equal(usageKeys(query({ keys: hundred.join(",") })).length, 100);
    for (
      const keys of [undefined, "", "a,,b", "a,a", [...hundred, "k100"].join(","), "x".repeat(201)]
    ) {
      refuses(
        () => usageKeys(query(keys === undefined ? {} : { keys })),
        "keys",
        String(keys).slice(0, 20),
      );
    }
    // The count and distinctness are the storage's one rule, its problem in the 400.
    for (const keys of [["a", "a"], [...hundred, "k100"]]) {
      assert.throws(
        () => usageKeys(query({ keys: keys.join(",") })),
        { message: `Invalid keys: ${keyIdsProblem(keys)}` },
      );
    }
  });

  it("usageWindow: the last 24 hours by hour by default; the service's rule: at most 31 days and 1 hour by hour, 366 days by day, from before to", () => {
    const now = new Date("2030-01-10T00:00:00.000Z");
    assert.deepEqual(usageWindow(query({}), now), {
      granularity: "hour",
      from: new Date("2030-01-09T00:00:00.000Z"),
      to: now,
      covered: { from: new Date("2030-01-09T00:00:00.000Z"), to: now },
    });
    // The answer states the buckets' bounds: whole UTC hours (or days) around the asked window.
    assert.deepEqual(
      usageWindow(query({ from: "2030-01-09T10:30:00Z", to: "2030-01-09T11:15:00Z" }), now).covered,
      { from: new Date("2030-01-09T10:00:00Z"), to: new Date("2030-01-09T12:00:00Z") },
    );
    const day = usageWindow(
      query({ granularity: "day", from: "2030-01-01T00:00:00Z", to: "2030-01-08T00:00:00Z" }),
      now,
    );
    assert.equal(day.granularity, "day");
    const year = { granularity: "day", from: "2029-01-10T00:00:00Z" };
    assert.equal(usageWindow(query(year), now).from.toISOString(), "2029-01-10T00:00:00.000Z");
    refuses(() => usageWindow(query({ granularity: "minute" }), now), "granularity", "minute");
    refuses(() => usageWindow(query({ from: "2029-12-01T00:00:00Z" }), now), "to", "too long");
    refuses(
      () => usageWindow(query({ granularity: "day", from: "2029-01-08T00:00:00Z" }), now),
      "to",
      "over 366 days",
    );
    refuses(() => usageWindow(query({ from: now.toISOString() }), now), "to", "empty window");
    refuses(() => usageWindow(query({ from: "1969-12-31T00:00:00Z" }), now), "from", "1969");
    refuses(() => usageWindow(query({ to: "yesterday" }), now), "to", "not an instant");
  });
});
