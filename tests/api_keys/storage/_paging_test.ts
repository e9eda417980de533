import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  comparePositions,
  matchesPage,
  pageOf,
  positionOf,
  statusOf,
} from "../../../api_keys/storage/_paging.ts";
import type { ListApiKeyPageOptions } from "../../../api_keys/storage/types.ts";
import type { ApiKeyRecord } from "../../../api_keys/types.ts";
import { storedRecord } from "./stored_record.ts";

const NOW = Date.parse("2030-01-10T00:00:00.000Z");

/** A stored record of tenant `t`, named and prefixed after its id, created a second before `NOW`. */
function record(id: string, overrides: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
  return storedRecord({
    id,
    tenantId: "t",
    name: id,
    prefix: `p_${id}`,
    createdAt: new Date(NOW - 1000),
    ...overrides,
  });
}

const OPTIONS: ListApiKeyPageOptions = {
  limit: 10,
  after: null,
  q: null,
  status: "unrevoked",
  environment: null,
  sort: "created_desc",
  now: new Date(NOW),
};

describe("api_keys/storage/_paging.ts", () => {
  it("statusOf: revoked over expired over rotating over active; expiry at now is expired", () => {
    const past = new Date(NOW - 1);
    assert.equal(statusOf(record("a"), NOW), "active");
    assert.equal(statusOf(record("a", { rotatedAt: past }), NOW), "rotating");
    assert.equal(statusOf(record("a", { replacedByKeyId: "b" }), NOW), "rotating");
    assert.equal(
      statusOf(record("a", { expiresAt: new Date(NOW), rotatedAt: past }), NOW),
      "expired",
    );
    assert.equal(
      statusOf(record("a", { expiresAt: past, revokedAt: past }), NOW),
      "revoked",
    );
  });

  it("statusOf: a key rotated without grace (expiresAt at or before rotatedAt) is expired whatever now, as verify refuses it (acceptedUntilMs)", () => {
    // The rotating instance's clock 5 s ahead of this one: the rotation is later than NOW.
    const rotatedAt = new Date(NOW + 5_000);
    const ended = record("a", { rotatedAt, expiresAt: rotatedAt, replacedByKeyId: "b" });
    assert.equal(statusOf(ended, NOW), "expired");
    assert.equal(matchesPage(ended, "t", { ...OPTIONS, status: "rotating" }), false);
    assert.equal(matchesPage(ended, "t", { ...OPTIONS, status: "expired" }), true);
    const lowered = { ...ended, expiresAt: new Date(NOW + 4_000) };
    assert.equal(statusOf(lowered, NOW), "expired");
    const graced = { ...ended, expiresAt: new Date(NOW + 5_001) };
    assert.equal(statusOf(graced, NOW), "rotating");
    assert.equal(statusOf({ ...ended, revokedAt: new Date(NOW) }, NOW), "revoked");
  });

  it("matchesPage: tenant, status, environment, q (name substring any case, or prefix start)", () => {
    const key = record("k", { name: "Deploy Bot", prefix: "sk_live_AbC" });
    assert.equal(matchesPage(key, "t", OPTIONS), true);
    assert.equal(matchesPage(key, "other", { ...OPTIONS, status: "all" }), false);
    assert.equal(matchesPage(key, "t", { ...OPTIONS, environment: "test" }), false);
    assert.equal(matchesPage(key, "t", { ...OPTIONS, status: "revoked" }), false);
    const revoked = { ...key, revokedAt: new Date(NOW - 5) };
    assert.equal(matchesPage(revoked, "t", OPTIONS), false);
    assert.equal(matchesPage(revoked, "t", { ...OPTIONS, status: "all" }), true);
    assert.equal(matchesPage(revoked, "t", { ...OPTIONS, status: "revoked" }), true);
    for (const q of ["bot", "DEPLOY", "y b", "sk_live_A", "sk_live_AbC"]) {
      assert.equal(matchesPage(key, "t", { ...OPTIONS, q }), true, q);
    }
    for (const q of ["sk_live_abc", "AbC", "bots"]) {
      assert.equal(matchesPage(key, "t", { ...OPTIONS, q }), false, q);
    }
  });

  it("comparePositions: each order, then id; never-used keys last", () => {
    const a = { id: "a", value: new Date(1) };
    const b = { id: "b", value: new Date(2) };
    const tie = { id: "c", value: new Date(2) };
    const never = { id: "0", value: null };
    assert.ok(comparePositions("created_desc")(b, a) < 0);
    assert.ok(comparePositions("created_asc")(a, b) < 0);
    assert.ok(comparePositions("created_desc")(b, tie) < 0);
    assert.ok(comparePositions("last_used_desc")(a, never) < 0);
    assert.ok(comparePositions("last_used_desc")(never, { id: "1", value: null }) < 0);
    const name = comparePositions("name_asc");
    assert.ok(name({ id: "z", value: "alpha" }, { id: "a", value: "beta" }) < 0);
    assert.equal(positionOf(record("x", { name: "n" }), "name_asc").value, "n");
  });

  it("pageOf: filtered, ordered, after the cursor, at most limit; predecessors of the page's keys in the tenant", () => {
    const at = (ms: number) => new Date(NOW - 10_000 + ms);
    const records = [
      record("k1", { createdAt: at(1), replacedByKeyId: "k2", rotatedAt: at(2) }),
      record("k2", { createdAt: at(2) }),
      record("k3", { createdAt: at(3), revokedAt: at(4) }),
      record("k4", { createdAt: at(4) }),
      record("x1", { tenantId: "other", createdAt: at(5), replacedByKeyId: "k4" }),
    ];
    const first = pageOf(records, "t", { ...OPTIONS, limit: 2 });
    assert.deepEqual(first.records.map((r) => r.id), ["k4", "k2"]);
    assert.deepEqual(first.predecessors, { k2: "k1" });
    const after = positionOf(first.records[1], "created_desc");
    const second = pageOf(records, "t", { ...OPTIONS, limit: 2, after });
    assert.deepEqual(second.records.map((r) => r.id), ["k1"]);
    assert.deepEqual(second.predecessors, {});
  });
});
