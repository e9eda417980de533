/**
 * Keys with credits without the manage side: an `InMemoryApiKeyStorage` whose
 * next inserted record carries the given credits.
 */
import assert from "node:assert/strict";
import {
  type ApiKeyCredits,
  type ApiKeyRecord,
  type ApiKeysService,
  InMemoryApiKeyStorage,
} from "../../api_keys/mod.ts";
import { READ_ORDERS } from "./helpers.ts";

/** Memory storage that gives the next inserted record `next` as its credits. */
export class CreditedStorage extends InMemoryApiKeyStorage {
  /** Credits of the next inserted record (then cleared). */
  next: ApiKeyCredits | undefined;

  override insert(record: ApiKeyRecord): Promise<void> {
    const credits = this.next;
    this.next = undefined;
    return super.insert(credits === undefined ? record : { ...record, credits });
  }
}

/** Creates a key of tenant `t1` holding `credits` (`updatedAt` default: the epoch) with `rateLimits`. */
export async function creditedKey(
  service: ApiKeysService,
  storage: CreditedStorage,
  credits: Omit<ApiKeyCredits, "updatedAt"> & { updatedAt?: Date },
  rateLimits?: { name: string; limit: number; windowMs: number }[],
): Promise<{ id: string; key: string }> {
  storage.next = { updatedAt: new Date(0), ...credits };
  const { id, key } = await service.create({
    tenantId: "t1",
    name: "credited",
    scopes: READ_ORDERS,
    rateLimits,
  });
  return { id, key };
}

const HOUR = 3_600_000;

/**
 * Creates a key of tenant `tenantId` with 5 credits of its own and the
 * tenant's pool of 1, refilled every hour; answers the key.
 */
export async function pooledKey(service: ApiKeysService, tenantId: string): Promise<string> {
  const { key } = await service.create({
    tenantId,
    name: "pooled",
    scopes: READ_ORDERS,
    credits: { remaining: 5, pool: { remaining: 1, refill: { amount: 1, everyMs: HOUR } } },
  });
  return key;
}

/** Asserts `response` is a 429 whose `Retry-After` is the next hourly refill (±1 s). */
export function assertRefusedUntilNextHour(response: Response): void {
  assert.equal(response.status, 429);
  const now = Date.now();
  const expected = Math.ceil(((Math.floor(now / HOUR) + 1) * HOUR - now) / 1000);
  const retryAfter = Number(response.headers.get("retry-after"));
  assert.ok(Math.abs(retryAfter - expected) <= 1, `${retryAfter} vs ${expected}`);
}
