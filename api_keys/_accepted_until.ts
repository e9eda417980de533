/**
 * When a key stops being accepted: the one home of that rule, for the verify
 * path (its storage path and its cache), `notifyExpiring` and a key's listed
 * status (`statusOf`; the Prisma storage's page filters mirror it in SQL).
 *
 * @module
 */
import type { ApiKeyRecord } from "./types.ts";

/**
 * The wall-clock ms from which `record` is refused as expired: `Infinity`
 * without expiry; `-Infinity` for a key rotated without grace (`expiresAt` at
 * or before `rotatedAt`, the rotating instance's now), which ended at its
 * rotation whatever this instance's clock says (a clock behind the rotating
 * instance's would otherwise accept it for as long as it is behind); `-Infinity`
 * too for an expiry that cannot be read (an invalid `Date`: expired, see
 * docs/api-keys.md "Unreadable expiry"); else `expiresAt`, a grace's end
 * included, judged on this instance's clock.
 */
export function acceptedUntilMs(
  record: Pick<ApiKeyRecord, "expiresAt" | "rotatedAt">,
): number {
  const { expiresAt, rotatedAt } = record;
  if (expiresAt === null) return Infinity;
  const ms = expiresAt.getTime();
  if (Number.isNaN(ms)) return -Infinity;
  return rotatedAt !== null && ms <= rotatedAt.getTime() ? -Infinity : ms;
}
