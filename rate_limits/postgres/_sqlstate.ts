/**
 * Which PostgreSQL errors are the store's fault, never an outage: the one reader of a
 * statement's SQLSTATE for the PostgreSQL store (rate_limits/store.ts, "How a store fails").
 *
 * @module
 */
import { errorMessageOf } from "../_remote.ts";

/**
 * The state the check functions raise on a window row they cannot read: a unit NULL or
 * negative, or a head out of range (migration `0031_rate_limit_unreadable_rows`).
 */
export const UNREADABLE_STATE = "RL001";

/**
 * The SQLSTATE classes of a misconfiguration, a missing migration or a bug: feature not
 * supported, cardinality violation, data exception (a value out of range), integrity
 * constraint, invalid statement name (a prepared statement a transaction-mode pooler lost),
 * invalid authorization (a wrong password, a role or `pg_hba.conf` entry missing), SQL
 * routine exception, invalid catalog name (a database missing), syntax error or access rule
 * violation (a privilege, an undefined function or table), PL/pgSQL error (`RAISE`,
 * `INTO STRICT`) and internal error. Any other (connection, resources, lock not available,
 * cancelled, serialization or deadlock, a read-only transaction, operator intervention) is
 * the store being unavailable.
 */
const FAULT_CLASSES = new Set(["0A", "21", "22", "23", "26", "28", "2F", "3D", "42", "P0", "XX"]);

/**
 * `error` (a statement's rejection) as the store rejects with it: a `TypeError` naming its
 * SQLSTATE and message (`error` its cause) when that state is a fault (`FAULT_CLASSES`,
 * `UNREADABLE_STATE`), so the check fails closed; `error` as it is otherwise.
 *
 * @example
 * ```ts
 * import { storeError } from "./_sqlstate.ts";
 * const denied = Object.assign(new Error("permission denied for table credit_balances"), {
 *   code: "42501",
 * });
 * storeError(denied) instanceof TypeError; // true
 * ```
 */
export function storeError(error: unknown): unknown {
  const code = sqlstateOf(error);
  if (code === undefined) return error;
  if (!FAULT_CLASSES.has(code.slice(0, 2)) && code !== UNREADABLE_STATE) return error;
  return new TypeError(
    `the PostgreSQL rate-limit store's statement failed with SQLSTATE ${code} ` +
      `(${errorMessageOf(error)}): a misconfiguration, a missing migration or a row it ` +
      'cannot read, never an outage (docs/rate-limits.md, "Bugs are not outages")',
    { cause: error },
  );
}

/** The SQLSTATE of `error` (a `pg` `DatabaseError`'s `code`), or `undefined`. Never throws. */
function sqlstateOf(error: unknown): string | undefined {
  try {
    const code = (error as { code?: unknown } | null | undefined)?.code;
    return typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
  } catch {
    return undefined; // a revoked Proxy, a throwing getter: no state to read
  }
}
