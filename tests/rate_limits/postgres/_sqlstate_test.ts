import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { storeError, UNREADABLE_STATE } from "../../../rate_limits/postgres/_sqlstate.ts";

/** An error as `pg` rejects with it: its SQLSTATE as `code`. */
const failed = (code: unknown, message = "failed") => Object.assign(new Error(message), { code });

// Through every store call on real PostgreSQL: tests/limits/stores_test.ts; every call of the
// store through it: tests/rate_limits/postgres/mod_test.ts.
describe("storeError", () => {
  it("a fault's SQLSTATE (misconfiguration, missing migration, unreadable row, bug) is a TypeError naming it, the error its cause", () => {
    for (
      const code of [
        "0A000", // feature not supported
        "21000", // cardinality violation
        "22003", // numeric value out of range
        "22P02", // invalid text representation
        "23502", // not null violation
        "26000", // prepared statement missing (a transaction-mode pooler, preparedStatements on)
        "28000", // invalid authorization (no pg_hba.conf entry, a role missing)
        "28P01", // wrong password
        "2F005", // function finished without RETURN
        "3D000", // database missing
        "42501", // insufficient privilege
        "42883", // undefined function
        "42P01", // undefined table
        "P0001", // RAISE EXCEPTION
        "P0002", // INTO STRICT: no row
        "XX000", // internal error
        "XX001", // data corrupted
        UNREADABLE_STATE,
      ]
    ) {
      const cause = failed(code, `message of ${code}`);
      const error = storeError(cause);
      assert.ok(error instanceof TypeError, code);
      assert.equal(error.cause, cause);
      assert.match(error.message, new RegExp(`SQLSTATE ${code} \\(message of ${code}\\)`));
    }
  });

  it("an outage's SQLSTATE, a socket's code or none is the error as it is", () => {
    for (
      const code of [
        "08006", // connection failure
        "08P01", // protocol violation
        "53300", // too many connections
        "55P03", // lock not available (lock_timeout)
        "57014", // query cancelled (statement_timeout)
        "57P01", // admin shutdown
        "40001", // serialization failure
        "40P01", // deadlock
        "25006", // read-only transaction (a standby)
        "RL002", // another state of the store's class
        "EPIPE",
        "ECONNREFUSED",
        "42501 ",
        42501,
        undefined,
      ]
    ) {
      const error = failed(code);
      assert.equal(storeError(error), error, String(code));
    }
    for (const value of [null, undefined, "down", 42]) assert.equal(storeError(value), value);
  });

  it("never throws: a value whose code cannot be read is as it is", () => {
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    assert.equal(storeError(proxy), proxy);
    const throwing = {
      get code(): string {
        throw new Error("getter");
      },
    };
    assert.equal(storeError(throwing), throwing);
  });
});
