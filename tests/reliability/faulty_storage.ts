/** A storage over `InMemoryApiKeyStorage` whose methods can be switched to fail. */
import {
  API_KEY_STORAGE_METHODS,
  type ApiKeyRecord,
  type ApiKeyStorage,
  InMemoryApiKeyStorage,
} from "../../api_keys/mod.ts";

/** How a method fails. */
export type FaultMode =
  | "throw"
  | "reject"
  | "hang"
  | "malformed"
  | "wrong-types"
  | "throwing-getter"
  | "non-object";

export const FAULT_MODES: FaultMode[] = [
  "throw",
  "reject",
  "hang",
  "malformed",
  "wrong-types",
  "throwing-getter",
  "non-object",
];

/** Text that must never reach a caller, a sink or a log. */
export const CAUSE_SECRET = "db-password=hunter2-internal-host-10.9.8.7";

type Method = (typeof API_KEY_STORAGE_METHODS)[number];

/** A malformed value standing in for a record (or a list) in the given mode. */
function malformedValue(mode: FaultMode, method: Method, good: unknown): unknown {
  const record = (Array.isArray(good) ? good[0] : good) as ApiKeyRecord | null | undefined;
  const base: Record<string, unknown> = record ? { ...record } : { id: "x", prefix: "p" };
  let bad: unknown;
  switch (mode) {
    case "malformed": // fields missing
      delete base.hash;
      delete base.createdAt;
      bad = base;
      break;
    case "wrong-types":
      bad = { ...base, pepperVersion: "1", scopes: "orders:read", expiresAt: "tomorrow" };
      break;
    case "throwing-getter":
      bad = new Proxy(base, {
        get() {
          throw new Error(CAUSE_SECRET);
        },
      });
      break;
    default:
      bad = CAUSE_SECRET;
  }
  return method === "listByTenant" ? [bad] : bad;
}

/** The storage and its switches. */
export class FaultyStorage {
  readonly inner = new InMemoryApiKeyStorage();
  readonly faults = new Map<Method, FaultMode>();
  /** Pending never-settling calls, counted (the promises themselves are not retained). */
  hung = 0;
  readonly storage: ApiKeyStorage;

  constructor() {
    const storage: Record<string, unknown> = {};
    for (const method of API_KEY_STORAGE_METHODS) {
      storage[method] = (...args: unknown[]) => this.#call(method, args);
    }
    this.storage = storage as unknown as ApiKeyStorage;
  }

  fail(method: Method, mode: FaultMode): this {
    this.faults.set(method, mode);
    return this;
  }

  clear(): void {
    this.faults.clear();
  }

  #call(method: Method, args: unknown[]): Promise<unknown> {
    const mode = this.faults.get(method);
    const real = () =>
      (this.inner[method] as (...a: unknown[]) => Promise<unknown>).apply(this.inner, args);
    switch (mode) {
      case undefined:
        return real();
      case "throw":
        throw new Error(CAUSE_SECRET);
      case "reject":
        return Promise.reject(new Error(CAUSE_SECRET));
      case "hang":
        this.hung++;
        return new Promise(() => {});
      default:
        // Malformed answers come from reads; writes that "answer" junk did not write.
        if (method === "findById" || method === "findByPrefix" || method === "listByTenant") {
          return real().then((good) => malformedValue(mode, method, good));
        }
        throw new Error(CAUSE_SECRET);
    }
  }
}
