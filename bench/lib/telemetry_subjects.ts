/**
 * What bench/telemetry.ts measures, built from the sources beside this file:
 * bench/telemetry.ts imports it as shipped and from baseline copies of the
 * library (so every import here stays relative).
 *
 * @module
 */
import { ApiKeysService, InMemoryApiKeyStorage } from "../../api_keys/mod.ts";
import { createRateLimiter } from "../../rate_limits/mod.ts";
import { resolveSettings, Responder } from "../../safe_response/mod.ts";

const PEPPER = "bench-pepper-0123456789abcdefghijklmnopqrstuvwxyz";
const SCOPES = [{ resource: "orders", level: "read" as const }];
/** The policy of every check (never refuses). */
export const POLICY = [{ name: "api", limit: 1_000_000_000, windowMs: 60_000 }];
const EXCHANGE = {
  method: "GET",
  target: "/x",
  requestHeader: () => undefined,
  responseHeader: () => undefined,
};

/**
 * A service with a limiter on the memory store, two cached keys (`key` without limits, verified
 * alone; `limited` with `POLICY`, checked too), a responder, its reply and a request's hot path
 * (the limited key's authorize, then the reply).
 */
export async function build() {
  const limiter = createRateLimiter({ logger: () => {} });
  const service = new ApiKeysService({
    peppers: { 1: PEPPER },
    storage: new InMemoryApiKeyStorage(),
    limiter,
  });
  const responder = new Responder(resolveSettings({ timestamp: false }));
  const { key } = await service.create({ tenantId: "bench", name: "k", scopes: SCOPES });
  const limited = (await service.create({
    tenantId: "bench",
    name: "limited",
    scopes: SCOPES,
    rateLimits: POLICY,
  })).key;
  await service.authorize(key);
  await service.authorize(limited);
  const plan = responder.plan({});
  /** A reply as a binding sends it: built, then counted as written. */
  const reply = () => {
    const built = responder.success({ a: 1 }, EXCHANGE, { plan });
    responder.written?.(built.status);
    return built;
  };
  const request = async () => {
    await service.authorize(limited);
    return reply();
  };
  return { limiter, service, responder, key, reply, request };
}
