/**
 * Keys with credits without the manage side: an `InMemoryApiKeyStorage` whose
 * next inserted record carries the given credits.
 */
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
