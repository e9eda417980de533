/**
 * The demo tenant and its keys, created at start in the embedded mode: a
 * `live` admin key, a `live` reader key, a `test` key, a `live` key
 * restricted to 127.0.0.1, a key expiring in 3 days (its expiry notice is in
 * the log at start), a `live` key limited to 2 requests a minute, a `live`
 * trial key with 20 credits, and a key of another tenant (only its id is shown, to try tenant isolation). Each key
 * carries a rate-limit policy.
 *
 * @module
 */
import type { ApiKeysService, Scope } from "../api_keys/mod.ts";
import { DEMO_KEY_POLICY, LIMITED_KEY_POLICY, TRIAL_KEY_CREDITS } from "./limits.ts";

/** Tenant of the demo keys. */
export const DEMO_TENANT_ID = "demo";

/** The other tenant, whose key id the admin routes must not find. */
export const OTHER_TENANT_ID = "other";

/** Scopes of the seeded admin key: key management plus what it may hand out. */
export const ADMIN_SCOPES: readonly Scope[] = Object.freeze([
  { resource: "keys", level: "write" },
  { resource: "projects", level: "write" },
  { resource: "feed", level: "read" },
]);

/** A seeded key: its record id and the raw key (shown once). */
export interface SeededKey {
  /** Record id. */
  id: string;
  /** Raw key. */
  key: string;
}

/** Every key the demo creates at start. */
export interface DemoKeys {
  /** Tenant of the demo keys. */
  tenantId: string;
  /** `live`, `keys:write`, `projects:write`, `feed:read`. */
  admin: SeededKey;
  /** `live`, `projects:read`, `feed:read`. */
  reader: SeededKey;
  /** `test`, `projects:write`, `feed:read`. */
  test: SeededKey;
  /** `live`, `projects:read`, allowed from 127.0.0.1 only. */
  restricted: SeededKey;
  /** `live`, `projects:read`, expiring 3 days after the start (see `EXPIRING_KEY_LIFETIME_MS`). */
  expiring: SeededKey;
  /** `live`, `projects:read`, `LIMITED_KEY_POLICY` (2 requests a minute). */
  limited: SeededKey;
  /** `live`, `projects:read`, `TRIAL_KEY_CREDITS` credits without refill. */
  trial: SeededKey;
  /** A key of `OTHER_TENANT_ID`; the demo shows its id only. */
  otherTenant: SeededKey & { tenantId: string };
}

/** How long the seeded `expiring` key lives: 3 days, inside the 7-day expiry notice. */
export const EXPIRING_KEY_LIFETIME_MS = 3 * 24 * 60 * 60 * 1000;

/**
 * Creates the demo keys (never expiring but the `expiring` one, `createdBy: "demo-seed"`,
 * `DEMO_KEY_POLICY` but the `limited` one; the `test` key counts on the admin key's windows). The storage must store rate limits
 * and credits, and the service needs a `limiter` (the `trial` key's credits).
 *
 * @example
 * ```ts
 * import { ApiKeysService, InMemoryApiKeyStorage } from "../api_keys/mod.ts";
 * import { createDemoKeyLimiter } from "./limits.ts";
 * import { seedDemoKeys } from "./seed.ts";
 * const service = new ApiKeysService({
 *   peppers: { 1: "a-pepper-of-at-least-thirty-two-bytes" },
 *   storage: new InMemoryApiKeyStorage(),
 *   limiter: createDemoKeyLimiter(),
 * });
 * const keys = await seedDemoKeys(service);
 * keys.admin.key; // "ak_live_..."
 * ```
 */
export async function seedDemoKeys(service: ApiKeysService): Promise<DemoKeys> {
  const rateLimits = [DEMO_KEY_POLICY];
  const common = { tenantId: DEMO_TENANT_ID, expiresAt: null, createdBy: "demo-seed", rateLimits };
  const admin = await service.create({
    ...common,
    name: "demo admin",
    environment: "live",
    scopes: [...ADMIN_SCOPES],
  });
  const reader = await service.create({
    ...common,
    name: "demo reader",
    environment: "live",
    scopes: [{ resource: "projects", level: "read" }, { resource: "feed", level: "read" }],
  });
  // On the admin key's windows (`limitsOf`): no less limited than it, so the banner's admin
  // step may rotate it (the escalation rule refuses a key with counters of its own).
  const test = await service.create({
    tenantId: DEMO_TENANT_ID,
    expiresAt: null,
    createdBy: "demo-seed",
    limitsOf: admin.id,
    name: "demo test key",
    environment: "test",
    scopes: [{ resource: "projects", level: "write" }, { resource: "feed", level: "read" }],
  });
  const restricted = await service.create({
    ...common,
    name: "demo localhost-only key",
    environment: "live",
    scopes: [{ resource: "projects", level: "read" }],
    allowedIpCidrs: ["127.0.0.1"],
  });
  const expiring = await service.create({
    ...common,
    name: "demo key expiring in 3 days",
    environment: "live",
    scopes: [{ resource: "projects", level: "read" }],
    expiresAt: new Date(Date.now() + EXPIRING_KEY_LIFETIME_MS),
  });
  const limited = await service.create({
    ...common,
    name: "demo key limited to 2 requests a minute",
    environment: "live",
    scopes: [{ resource: "projects", level: "read" }],
    rateLimits: [LIMITED_KEY_POLICY],
  });
  const trial = await service.create({
    ...common,
    name: `demo trial key (${TRIAL_KEY_CREDITS} credits)`,
    environment: "live",
    scopes: [{ resource: "projects", level: "read" }],
    credits: { remaining: TRIAL_KEY_CREDITS },
  });
  const other = await service.create({
    tenantId: OTHER_TENANT_ID,
    rateLimits,
    name: "someone else's key",
    environment: "live",
    scopes: [{ resource: "projects", level: "read" }],
    expiresAt: null,
    createdBy: "demo-seed",
  });
  return {
    tenantId: DEMO_TENANT_ID,
    admin,
    reader,
    test,
    restricted,
    expiring,
    limited,
    trial,
    otherTenant: { ...other, tenantId: OTHER_TENANT_ID },
  };
}
