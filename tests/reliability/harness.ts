/** Spies and guards shared by the reliability suite. */
import process from "node:process";
import v8 from "node:v8";
import vm from "node:vm";
import {
  ApiKeysService,
  type ApiKeysServiceOptions,
  type ApiKeyStorage,
  InMemoryApiKeyStorage,
} from "../../api_keys/mod.ts";

export const PEPPER_1 = "reliability-pepper-one-0123456789abcdef";
export const PEPPER_2 = "reliability-pepper-two-0123456789abcdef";

/** One storage call as seen by `spyStorage`. */
export interface StorageCall {
  method: string;
  args: unknown[];
}

/** Wraps a storage, recording every call with its arguments. */
export function spyStorage(inner: ApiKeyStorage = new InMemoryApiKeyStorage()): {
  storage: ApiKeyStorage;
  calls: StorageCall[];
} {
  const calls: StorageCall[] = [];
  const storage = new Proxy(inner, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        calls.push({ method: String(property), args });
        return value.apply(target, args);
      };
    },
  }) as ApiKeyStorage;
  return { storage, calls };
}

/**
 * One hasher primitive call: the operation, the byte length of the hashed
 * data, and for a verify the key and the byte length of the signature.
 */
export interface HashCall {
  operation: "sign" | "verify";
  dataBytes: number;
  key: CryptoKey;
  signatureBytes?: number;
}

/**
 * Records `crypto.subtle.sign`/`verify` (the hasher's only primitives: HMAC
 * sign to hash, HMAC verify to compare). With `verifyResult`, a verify does
 * no crypto and answers an already-settled promise of that value (so a
 * verification settles in a fixed number of microtasks). Call `restore()`
 * when done.
 */
export function spyHasher(
  verifyResult?: boolean,
): { calls: HashCall[]; restore: () => void } {
  const subtle = crypto.subtle;
  const sign = subtle.sign;
  const verify = subtle.verify;
  const calls: HashCall[] = [];
  subtle.sign = function (algorithm, key, data) {
    calls.push({ operation: "sign", dataBytes: (data as ArrayBufferView).byteLength, key });
    return sign.call(subtle, algorithm, key, data);
  } as typeof sign;
  subtle.verify = function (algorithm, key, signature, data) {
    calls.push({
      operation: "verify",
      dataBytes: (data as ArrayBufferView).byteLength,
      key,
      signatureBytes: (signature as ArrayBufferView).byteLength,
    });
    if (verifyResult !== undefined) return Promise.resolve(verifyResult);
    return verify.call(subtle, algorithm, key, signature, data);
  } as typeof verify;
  return {
    calls,
    restore: () => {
      subtle.sign = sign;
      subtle.verify = verify;
    },
  };
}

/**
 * Collects unhandled rejections while installed (and keeps them from
 * crashing the run so the test can report them). On Deno the Web
 * `unhandledrejection` event is the one that fires under `deno test`; on Node,
 * `process`'s `unhandledRejection`.
 */
export function collectUnhandledRejections(): { reasons: unknown[]; stop: () => Promise<void> } {
  const reasons: unknown[] = [];
  const web = typeof (globalThis as { Deno?: unknown }).Deno === "object";
  const onProcess = (reason: unknown) => {
    reasons.push(reason);
  };
  const onWeb = (event: PromiseRejectionEvent) => {
    event.preventDefault();
    reasons.push(event.reason);
  };
  if (web) globalThis.addEventListener("unhandledrejection", onWeb);
  else process.on("unhandledRejection", onProcess);
  return {
    reasons,
    // Give pending rejections a macrotask to be reported before removing the listener.
    stop: async () => {
      await new Promise((resolve) => setTimeout(resolve, 0));
      if (web) globalThis.removeEventListener("unhandledrejection", onWeb);
      else process.off("unhandledRejection", onProcess);
    },
  };
}

/**
 * Microtask turns until `promise` settles (at most `limit`): with every step
 * of an operation answering settled promises, this counts its awaits.
 */
export async function turnsToSettle(promise: Promise<unknown>, limit = 1_000): Promise<number> {
  let settled = false;
  promise.then(() => settled = true, () => settled = true);
  let turns = 0;
  while (!settled && turns < limit) {
    await null;
    turns++;
  }
  return turns;
}

/** Marker of a promise that did not settle within the hang guard. */
export const HUNG = Symbol("hung");

/**
 * Settles `promise` into `{ value }` or `{ error }`, or `HUNG` when it has not
 * settled after `ms` (a generous hang guard, not a timing assertion).
 */
export async function settle<T>(
  promise: Promise<T>,
  ms = 5_000,
): Promise<{ value: T } | { error: unknown } | typeof HUNG> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const guard = new Promise<typeof HUNG>((resolve) => {
    timer = setTimeout(() => resolve(HUNG), ms);
  });
  try {
    return await Promise.race([
      promise.then((value) => ({ value }), (error: unknown) => ({ error })),
      guard,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** A service over `storage` with the suite's pepper and no sinks unless given. */
export function serviceOver(
  storage: ApiKeyStorage,
  overrides: Partial<ApiKeysServiceOptions> = {},
): ApiKeysService {
  return new ApiKeysService({ peppers: { 1: PEPPER_1 }, storage, ...overrides });
}

let gc: (() => void) | undefined;

/** A major GC: `--expose-gc` is switched on at run time, so no flag is needed. */
export function collectGarbage(): void {
  if (gc === undefined) {
    v8.setFlagsFromString("--expose-gc");
    gc = vm.runInNewContext("gc") as () => void;
  }
  gc();
}

/** Heap used after full GCs, in bytes. */
export async function heapUsed(): Promise<number> {
  for (let i = 0; i < 3; i++) {
    await new Promise((resolve) => setTimeout(resolve, 0));
    collectGarbage();
  }
  return process.memoryUsage().heapUsed;
}
