/**
 * `createApiKeysAdminHandler`: the admin routes of docs/settings-page.md over
 * a framework-free request, for every binding.
 *
 * @module
 */
import { serviceAllowedIpCidrs } from "../ip_allowlist.ts";
import { actorProblem, fail, validTenantId } from "../_input.ts";
import { requireKeyName } from "../_key_name.ts";
import { ApiKeyOperationError, ApiKeyStorageError, ApiKeyValidationError } from "../errors.ts";
import { errorResponse, jsonResponse, optionalFunction, positiveInteger } from "../leaks/_core.ts";
import { serviceHooks } from "../_service_hooks.ts";
import { isFlatScope, SCOPE_RESOURCE_RULE } from "../scopes.ts";
import { callDetached } from "../../telemetry/_detached.ts";
import { errorMessageOf, errorNameOf } from "../../telemetry/_error_name.ts";
import { logLine } from "../_sinks.ts";
import { CSRF_METHODS, csrfOf } from "../../client/_csrf.ts";
import type { ApiKeysService } from "../service.ts";
import type { KeyLimits, Written } from "../_manage.ts";
import type { ApiKeySummary, CreateApiKeyInput, Environment, Scope, ScopeLevel } from "../types.ts";
import type { ApiKeyUsageBucket } from "../metering/usage.ts";
import type { CreditRefill } from "../../rate_limits/mod.ts";
import { creditsView, spendsCredits, tenantCreditsView } from "./_credits.ts";
import { AdminHttpError, bodyInstant, oneOf, readObject, stringList } from "./_body.ts";
import {
  auditQuery,
  encodeCursor,
  listQuery,
  type QueryOf,
  usageKeys,
  usageWindow,
} from "./_query.ts";
import { positionOf } from "../storage/_paging.ts";
import {
  type Escalation,
  ESCALATION_FIELDS,
  findEscalation,
  findLimitsEscalation,
  type KeyPowers,
} from "./no_escalation.ts";
import type {
  AdminAction,
  AdminConfig,
  AdminKeyLimitsView,
  AdminPermissions,
  AdminPolicy,
  AdminRequest,
  AdminResponse,
  AdminScopeOffer,
  AdminTarget,
  ApiKeysAdminHandler,
  ApiKeysAdminOptions,
  AuditPage,
  ExpiryPreset,
  GracePreset,
  IssuedKey,
  KeyList,
  KeyView,
  RotatedKey,
  UsageAnswer,
  UsageBatchAnswer,
} from "./types.ts";

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const GRACE_MS: Readonly<Record<GracePreset, number>> = {
  none: 0,
  "1h": HOUR_MS,
  "24h": DAY_MS,
  "7d": 7 * DAY_MS,
};
const EXPIRY_MS: Readonly<Record<ExpiryPreset, number | null>> = {
  "7d": 7 * DAY_MS,
  "30d": 30 * DAY_MS,
  "90d": 90 * DAY_MS,
  "1y": 365 * DAY_MS,
  never: null,
};
const ENVIRONMENTS: readonly Environment[] = ["live", "test"];
const DEFAULT_MAX_BODY_BYTES = 16_384;
const MAX_SCOPES_OFFERED = 200;
const MAX_SCOPES_PER_KEY = 50;
const MAX_ALLOWLIST = 50;
const SAME_SITE_FETCH = new Set(["same-origin", "none"]);
const MAX_ALLOWED_ORIGINS = 100;

/** The 403 of a `role` key that `exceeds` the caller's: `how` more powerful or less limited. */
function escalationRefused(
  role: "new" | "target",
  how: "more powerful" | "less limited",
  exceeds: Escalation,
): AdminHttpError {
  const verb = role === "new" ? "issue" : "act on";
  return new AdminHttpError(
    403,
    "api_key_escalation_refused",
    `The caller cannot ${verb} a key ${how} than its own`,
    { key: role, exceeds },
  );
}

/**
 * A custom policy's refusal as the 403 sends it: a copy of its `Escalation` fields, each a list
 * of strings. Anything else (another field, a value JSON cannot send) is the hook's failure.
 */
function policyAnswer(answer: unknown): Escalation {
  const copy: Record<string, string[]> = {};
  let usable: boolean;
  try {
    usable = typeof answer === "object" && answer !== null && !Array.isArray(answer) &&
      Object.keys(answer).every((field) => {
        const value: unknown = (answer as Record<string, unknown>)[field];
        if (!ESCALATION_FIELDS.has(field) || !Array.isArray(value)) return false;
        copy[field] = [...value];
        return copy[field].every((entry) => typeof entry === "string");
      });
  } catch (error) {
    throw new HookFailure(error); // a getter or a proxy that throws as it is read
  }
  if (!usable) {
    throw new HookFailure(
      new TypeError("options.policy must answer null or an Escalation (lists of strings)"),
    );
  }
  return copy;
}

/** A failure of an app hook: always a 500, the error to `onError`. */
class HookFailure {
  readonly error: unknown;
  constructor(error: unknown) {
    this.error = error;
  }
}

/**
 * A create's failure, as the routes answer it: a refusal of the key's
 * `credits` or `rateLimits` is the server's own (the body has none: they come
 * from `keyLimits`, such as a plan's pool rule the tenant's pool does not have
 * yet, or a tenant-shared policy's new limit), so a 500 with the provider told
 * through `onError` what to do, never a 400 blaming a field the customer never
 * sent. Any other error as it is.
 */
function refusedLimits(error: unknown, tenantId: string): unknown {
  if (
    !(error instanceof ApiKeyValidationError) ||
    (error.field !== "credits" && error.field !== "rateLimits")
  ) return error;
  // The service's credits message says what to do; its shared-policy one says only the limit.
  const advice = error.field === "rateLimits"
    ? " (a tenant-shared limit that changes with the plan goes in rateLimitResolver)"
    : "";
  return new HookFailure(
    new TypeError(
      `options.keyLimits answered ${error.field} the service refused for tenant ${
        JSON.stringify(tenantId)
      }: ${error.message}${advice}`,
    ),
  );
}

async function hook<T>(call: () => T | Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw new HookFailure(error);
  }
}

interface Route {
  action: AdminAction;
  id: string | null;
}

/** Each path's routes by method, `:id` standing for one segment. */
const ROUTES: Readonly<Record<string, Readonly<Record<string, AdminAction>>>> = {
  "/config": { GET: "config" },
  "/keys": { GET: "list", POST: "create" },
  "/keys/:id": { GET: "read", PATCH: "rename", DELETE: "revoke" },
  "/keys/:id/rotate": { POST: "rotate" },
  "/keys/:id/usage": { GET: "usage" },
  "/usage": { GET: "usage" },
  "/audit": { GET: "audit" },
};
const MAX_PATH_LENGTH = 512;

/** The routes of `path` by method, with its `:id`; `undefined` for no path of the routes. */
function routesOf(
  path: string,
): { methods: Readonly<Record<string, AdminAction>>; id: string | null } | undefined {
  if (typeof path !== "string" || path.length > MAX_PATH_LENGTH) return undefined;
  const segments = path.split("/");
  if (segments[0] !== "" || segments.length > 4 || segments.some((s, i) => i > 0 && s === "")) {
    return undefined;
  }
  const id = segments.length >= 3 ? segments[2] : null;
  const pattern = id === null ? path : ["", segments[1], ":id", ...segments.slice(3)].join("/");
  return Object.hasOwn(ROUTES, pattern) ? { methods: ROUTES[pattern], id } : undefined;
}

/** The route of `method` `path`; `undefined` for no path of the routes. */
function matchRoute(method: string, path: string): Route | undefined {
  const routes = routesOf(path);
  if (routes === undefined) return undefined;
  const { methods, id } = routes;
  const action = Object.hasOwn(methods, method) ? methods[method] : undefined;
  if (action === undefined) {
    throw new AdminHttpError(405, "method_not_allowed", "Method not allowed", {
      allow: Object.keys(methods),
    });
  }
  return { action, id };
}

function subset<T extends string>(
  value: readonly T[] | undefined,
  all: readonly T[],
  label: string,
): readonly T[] {
  if (value === undefined) return all;
  if (
    !Array.isArray(value) || value.length === 0 || new Set(value).size !== value.length ||
    !value.every((item) => all.includes(item))
  ) {
    throw new TypeError(
      `${label} must be a non-empty list of distinct values of ${all.join(", ")}`,
    );
  }
  return Object.freeze([...value]);
}

/**
 * The expiry presets the TTL policy allows (`allowsLifetime`): `listed`
 * (each allowed, else a `TypeError` naming it), else all the allowed ones
 * (at least one).
 */
function expiryPresetsOf(
  listed: readonly ExpiryPreset[] | undefined,
  allowsLifetime: (lifetimeMs: number | null) => boolean,
): readonly ExpiryPreset[] {
  const all = Object.keys(EXPIRY_MS) as ExpiryPreset[];
  const presets = subset(listed, all, "options.expiryPresets");
  const refused = presets.filter((preset) => !allowsLifetime(EXPIRY_MS[preset]));
  if (listed !== undefined && refused.length > 0) {
    throw new TypeError(
      `options.expiryPresets: ${refused.join(", ")} refused by the service's ttlPolicy`,
    );
  }
  const allowed = presets.filter((preset) => !refused.includes(preset));
  if (allowed.length === 0) {
    throw new TypeError(
      `options.expiryPresets: the service's ttlPolicy refuses every preset (${all.join(", ")})`,
    );
  }
  return Object.freeze(allowed);
}

/** `value` when it is one of `presets`; omitted: `preferred` when offered, else the first. */
function presetDefault<T extends string>(
  value: T | undefined,
  presets: readonly T[],
  preferred: T,
  label: string,
): T {
  if (value === undefined) return presets.includes(preferred) ? preferred : presets[0];
  if (!presets.includes(value)) {
    throw new TypeError(`${label} must be one of ${presets.join(", ")}`);
  }
  return value;
}

function scopeOffers(value: unknown): AdminScopeOffer[] {
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_SCOPES_OFFERED) {
    throw new TypeError(`options.scopes must list 1 to ${MAX_SCOPES_OFFERED} scopes`);
  }
  return value.map((item) => {
    const offer = typeof item === "string" ? { scope: item } : item as AdminScopeOffer;
    if (!isFlatScope(offer?.scope)) {
      throw new TypeError(
        `options.scopes: each must be a resource:level scope (a resource of ${SCOPE_RESOURCE_RULE})`,
      );
    }
    if (offer.description !== undefined && typeof offer.description !== "string") {
      throw new TypeError("options.scopes: a description must be a string");
    }
    return offer.description === undefined
      ? { scope: offer.scope }
      : { scope: offer.scope, description: offer.description };
  });
}

/** `options.allowedOrigins` as a set of exact, serialized `http(s)` origins. */
function allowedOriginsOf(value: unknown): ReadonlySet<string> {
  if (value === undefined) return new Set();
  if (!Array.isArray(value) || value.length > MAX_ALLOWED_ORIGINS) {
    throw new TypeError(`options.allowedOrigins must list at most ${MAX_ALLOWED_ORIGINS} origins`);
  }
  for (const origin of value) {
    let url: URL | undefined;
    try {
      url = typeof origin === "string" ? new URL(origin) : undefined;
    } catch {
      url = undefined;
    }
    if (url === undefined || !/^https?:$/.test(url.protocol) || url.origin !== origin) {
      throw new TypeError(
        "options.allowedOrigins: each must be an exact origin such as https://app.example.com",
      );
    }
  }
  return new Set(value as string[]);
}

function toScope(flat: string): Scope {
  const at = flat.lastIndexOf(":");
  return { resource: flat.slice(0, at), level: flat.slice(at + 1) as ScopeLevel };
}

const iso = (date: Date | null): string | null => date === null ? null : date.toISOString();

/** The `KeyView` of docs/settings-page.md; `replacesKeyId` the key it replaced, when known. */
function view(summary: ApiKeySummary, replacesKeyId: string | null): KeyView {
  return {
    id: summary.id,
    name: summary.name,
    environment: summary.environment,
    prefix: summary.prefix,
    scopes: [...summary.scopes],
    allowedIpCidrs: [...summary.allowedIpCidrs],
    status: summary.status,
    createdAt: summary.createdAt.toISOString(),
    lastUsedAt: iso(summary.lastUsedAt),
    expiresAt: iso(summary.expiresAt),
    revokedAt: iso(summary.revokedAt),
    rotatedAt: iso(summary.rotatedAt),
    replacedByKeyId: summary.replacedByKeyId,
    createdBy: summary.createdBy,
    replacesKeyId,
    ...creditsView(summary),
  };
}

/** A refill as `AdminKeyLimitsView` words it: `daily`, `monthly`, `monthly:<day>` or `<ms>ms`. */
function refillEvery(refill: CreditRefill): string {
  if ("everyMs" in refill) return `${refill.everyMs}ms`;
  return refill.interval === "monthly" && refill.day !== undefined
    ? `monthly:${refill.day}`
    : refill.interval;
}

/** The actions of `AdminPermissions`, each asked of `canManage` for `GET /config`. */
const PERMISSIONS: readonly (keyof AdminPermissions)[] = [
  "create",
  "rename",
  "rotate",
  "revoke",
  "audit",
];

/** One request's state: the caller's powers are read once. */
interface Call<R> {
  request: R;
  tenantId: string;
  caller?: Promise<ApiKeySummary | null>;
}

/**
 * The admin routes (docs/settings-page.md) as one framework-free handler:
 * `./api-keys/fetch` and `./api-keys/nest` serve it. Checks `options` once
 * (a `TypeError` naming the option). Each request: CSRF on `POST`, `PATCH`
 * and `DELETE`, the tenant from `tenantOf`, the bounded body, the key of the
 * route's `:id` in that tenant (another tenant's is 404 like an unknown id),
 * `canManage`, the policy, then the operation. A hook's throw or rejection is
 * a 500 `internal_error` (the error to `onError`), a storage failure a 503
 * (`ApiKeyStorageError` to `onError` too); errors never carry a key's
 * secret. A new key whose read-back fails is answered as written, once.
 *
 * @example
 * ```ts
 * import { ApiKeysService, InMemoryApiKeyStorage } from "@saferoute/api-kit/api-keys";
 * import { createApiKeysAdminHandler } from "@saferoute/api-kit/api-keys/admin";
 *
 * const service = new ApiKeysService({
 *   peppers: { 1: "a-pepper-of-at-least-thirty-two-bytes" },
 *   storage: new InMemoryApiKeyStorage(),
 * });
 * const handle = createApiKeysAdminHandler<{ user: string }>({
 *   service,
 *   scopes: ["projects:read", "projects:write"],
 *   tenantOf: (session) => session.user,
 *   canManage: () => true,
 *   policy: () => null,
 * });
 * const answer = await handle(
 *   { method: "GET", path: "/keys", query: () => null, headers: () => null, body: null },
 *   { user: "acme" },
 * );
 * console.log(answer?.status); // 200
 * ```
 */
export function createApiKeysAdminHandler<R>(
  options: ApiKeysAdminOptions<R>,
): ApiKeysAdminHandler<R> {
  if (typeof options !== "object" || options === null) {
    throw new TypeError("options must be an object");
  }
  const service: ApiKeysService = options.service;
  const hooks = typeof service === "object" && service !== null ? serviceHooks(service) : undefined;
  if (hooks === undefined) throw new TypeError("options.service must be an ApiKeysService");
  for (const name of ["tenantOf", "canManage"] as const) {
    if (typeof options[name] !== "function") throw new TypeError(`options.${name} is required`);
  }
  optionalFunction(options.callerKeyIdOf, "options.callerKeyIdOf");
  optionalFunction(options.policy, "options.policy");
  optionalFunction(options.onError, "options.onError");
  optionalFunction(options.actorOf, "options.actorOf");
  optionalFunction(options.keyLimits, "options.keyLimits");
  if (options.policy === undefined && options.callerKeyIdOf === undefined) {
    throw new TypeError(
      "options.callerKeyIdOf is required by the default policy (no escalation); or pass options.policy",
    );
  }
  const { tenantOf, canManage, callerKeyIdOf } = options;
  const policy: AdminPolicy<R> | undefined = options.policy;
  // By default one line: the error's name and message, credentials and keys hidden; never its
  // cause (a driver's error may hold a connection URL) or stack.
  const onError = options.onError ?? ((error: unknown) =>
    logLine(
      console.error,
      hooks.redact(`api-keys admin: ${errorNameOf(error)}: ${errorMessageOf(error)}`),
    ));
  const offers = scopeOffers(options.scopes);
  const offered = new Set(offers.map((offer) => offer.scope));
  const environments = subset(options.environments, ENVIRONMENTS, "options.environments");
  const gracePresets = subset(
    options.gracePresets,
    Object.keys(GRACE_MS) as GracePreset[],
    "options.gracePresets",
  );
  const { allowsLifetime, defaultLifetimeMs } = hooks;
  const expiryPresets = expiryPresetsOf(options.expiryPresets, allowsLifetime);
  const defaultGrace = presetDefault(
    options.defaultGrace,
    gracePresets,
    "24h",
    "options.defaultGrace",
  );
  if (
    options.defaultExpiry !== undefined && Object.hasOwn(EXPIRY_MS, options.defaultExpiry) &&
    !allowsLifetime(EXPIRY_MS[options.defaultExpiry])
  ) {
    throw new TypeError(
      `options.defaultExpiry: ${options.defaultExpiry} refused by the service's ttlPolicy`,
    );
  }
  // The policy's default when it is a preset (none: no expiry), else the first.
  const defaultExpiry = presetDefault(
    options.defaultExpiry,
    expiryPresets,
    expiryPresets.find((preset) => EXPIRY_MS[preset] === defaultLifetimeMs) ??
      expiryPresets[0],
    "options.defaultExpiry",
  );
  const csrf = csrfOf(options.csrf);
  const allowedOrigins = allowedOriginsOf(options.allowedOrigins);
  const { actorOf, keyLimits } = options;
  const maxBodyBytes = positiveInteger(
    options.maxBodyBytes,
    DEFAULT_MAX_BODY_BYTES,
    "options.maxBodyBytes",
  );
  const {
    clock,
    layouts,
    renameForTenant: rename,
    conditionalRename,
    recordsUsage,
    audits,
    recordRefusal,
    listPage,
    createWithRecord,
    rotateWithRecord,
    summaryOf,
    summariesOf,
    keyLimitsOf,
    predecessorOf,
    usageOfKeys,
  } = hooks;
  let csrfRefused = 0;
  const capabilities = Object.freeze({
    rename: rename !== undefined,
    conditionalRename,
    usage: recordsUsage,
  });

  /**
   * The new key `written` read back (its balance with it); when the read
   * fails (a storage 503), `written` as the write stored it, the failure to
   * `onError`: the key exists, so its secret is answered now or never. So
   * does a failure of its credit join write (`joinFailure`).
   */
  async function readBack(
    call: Call<R>,
    { written, joinFailure }: Written<unknown>,
  ): Promise<ApiKeySummary> {
    if (joinFailure !== undefined) report(joinFailure);
    try {
      return await findKey(call, written.id);
    } catch (error) {
      report(error);
      return written;
    }
  }

  /** The tenant's key `id`, read now (one lookup); another tenant's is unknown. */
  async function findKey(call: Call<R>, id: string): Promise<ApiKeySummary> {
    const key = await summaryOf(call.tenantId, id);
    if (key === null) throw new ApiKeyOperationError("api_key_record_not_found");
    return key;
  }

  async function allow(call: Call<R>, action: AdminAction, target: AdminTarget): Promise<void> {
    const allowed = await hook(() => canManage(call.request, action, target));
    if (allowed !== true) throw new AdminHttpError(403, "forbidden", "Not allowed");
  }

  /**
   * The caller's key, read now; null when `callerKeyIdOf` names none. A key it names that is not a
   * usable key of the tenant (unknown, revoked, expired: a request verified before a revoke, an
   * instance not told yet) is the 403 of a caller without a key, whatever the policy: its powers
   * and limits are not a caller's.
   */
  function callerPowers(call: Call<R>): Promise<ApiKeySummary | null> {
    return call.caller ??= (async () => {
      const id = await hook(() => callerKeyIdOf!(call.request));
      if (typeof id !== "string") return null;
      const key = await summaryOf(call.tenantId, id);
      if (key === null || key.status === "revoked" || key.status === "expired") throw noCallerKey();
      return key;
    })();
  }

  /** `createdBy` of a key the routes write: `actorOf`'s answer, checked. */
  async function actor(call: Call<R>): Promise<string | undefined> {
    if (actorOf === undefined) return undefined;
    const name = await hook(() => actorOf(call.request));
    const problem = actorProblem(name);
    if (problem !== undefined) {
      throw new HookFailure(new TypeError(`options.actorOf's answer ${problem}`));
    }
    return name as string;
  }

  /**
   * The limits of a key `create` issues: the app's (`keyLimits`) and, for a
   * caller with a key, that key's policies, windows and balance (no escalation).
   */
  async function newKeyLimits(
    call: Call<R>,
  ): Promise<Pick<CreateApiKeyInput, "rateLimits" | "credits" | "limitsOf">> {
    const set = keyLimits === undefined
      ? undefined
      : await hook(() => keyLimits(call.request, call.tenantId));
    if (set !== null && set !== undefined && (typeof set !== "object" || Array.isArray(set))) {
      throw new HookFailure(
        new TypeError("options.keyLimits must answer null or { rateLimits?, credits? }"),
      );
    }
    const added = set?.rateLimits === undefined ? [] : [...set.rateLimits];
    const caller = callerKeyIdOf === undefined ? null : await callerPowers(call);
    if (caller === null) {
      return { rateLimits: added.length === 0 ? undefined : added, credits: set?.credits };
    }
    const own = caller.rateLimits ?? [];
    // The new key's policies, checked as stored: the caller's as they are (a policy of keyLimits
    // under one of their names, a plan's other limit, would be more than the caller has or a
    // second limit on its counter), then keyLimits' of other names.
    const rateLimits = [
      ...own,
      ...added.filter((policy) => !own.some((mine) => mine.name === policy.name)),
    ];
    // The caller's limits (its id standing for its windows and balance), and the new key's, on
    // them (`limitsOf`); keyLimits' credits, unless the tenant's pool the caller spends (the
    // minted key spends it), are a balance in place of the caller's (the service adds none to a
    // balance it shares).
    const limits: KeyLimits = {
      rateLimits: own,
      windowsOf: caller.id,
      balanceOf: caller.credits === undefined ? null : caller.id,
      pool: caller.tenantCredits !== undefined,
    };
    const asked = set?.credits;
    const inherits = asked === undefined || (asked.sharedBy === "tenant" && limits.pool);
    refuseLessLimited("new", limits, {
      rateLimits,
      windowsOf: caller.id,
      balanceOf: inherits ? limits.balanceOf : "new",
      pool: inherits && limits.pool,
    });
    return {
      limitsOf: caller.id,
      rateLimits: rateLimits.length === 0 ? undefined : rateLimits,
      credits: spendsCredits(caller) ? undefined : set?.credits,
    };
  }

  /**
   * Refuses the rotation of `key` by a caller with a key when `key`'s limits,
   * which its successor keeps (policies, windows, balance), are less than the
   * caller's: create's rule. A caller without limits reads nothing more.
   */
  async function checkSuccessorLimits(call: Call<R>, key: ApiKeySummary): Promise<void> {
    const caller = callerKeyIdOf === undefined ? null : await callerPowers(call);
    if (caller === null || caller.id === key.id) return;
    if ((caller.rateLimits ?? []).length === 0 && !spendsCredits(caller)) return;
    const [limits, target] = await keyLimitsOf(call.tenantId, [caller.id, key.id]);
    if (target === null) throw new ApiKeyOperationError("api_key_record_not_found");
    if (limits === null) {
      throw noCallerKey();
    }
    refuseLessLimited("target", limits, target);
  }

  /** A 403 `api_key_escalation_refused` when a key with limits `key` is less limited than the caller's. */
  function refuseLessLimited(role: "new" | "target", caller: KeyLimits, key: KeyLimits): void {
    const exceeds = findLimitsEscalation(caller, key);
    if (exceeds !== null) throw escalationRefused(role, "less limited", exceeds);
  }

  /** Whether a state-changing request passes the CSRF check. */
  function passesCsrf(request: AdminRequest): boolean {
    if (csrf === null) return true;
    if (request.headers(csrf.header) !== csrf.value) return false;
    const site = request.headers("sec-fetch-site");
    if (site === null || site === undefined || SAME_SITE_FETCH.has(site)) return true;
    const origin = request.headers("origin");
    return site === "same-site" && typeof origin === "string" && allowedOrigins.has(origin);
  }

  /** The refusal of a caller without a key of the tenant to compare with. */
  function noCallerKey(): AdminHttpError {
    return new AdminHttpError(
      403,
      "api_key_escalation_refused",
      "The caller has no key of this tenant to compare with",
      { key: "caller" },
    );
  }

  /** Where `key` exceeds what the caller may issue or act on (the policy's answer), or `null`. */
  async function escalationOf(
    call: Call<R>,
    action: AdminAction,
    role: "new" | "target",
    key: KeyPowers,
  ): Promise<Escalation | null> {
    let exceeds;
    if (policy !== undefined) {
      // A caller key named but revoked or expired is refused first, whatever the policy answers.
      if (callerKeyIdOf !== undefined) await callerPowers(call);
      exceeds = await hook(() =>
        policy({ request: call.request, tenantId: call.tenantId, action, role, key })
      );
      if (exceeds !== null) exceeds = policyAnswer(exceeds);
    } else {
      const caller = await callerPowers(call);
      if (caller === null) {
        throw noCallerKey();
      }
      exceeds = findEscalation(caller, key);
    }
    return exceeds;
  }

  async function enforce(
    call: Call<R>,
    action: AdminAction,
    role: "new" | "target",
    key: KeyPowers,
  ): Promise<void> {
    const exceeds = await escalationOf(call, action, role, key);
    if (exceeds !== null) throw escalationRefused(role, "more powerful", exceeds);
  }

  /**
   * What the caller may grant: each offered scope and environment probed
   * alone against the policy (an error of the policy, such as a caller
   * without a key: nothing).
   */
  async function grantable(
    call: Call<R>,
  ): Promise<{ scopes: AdminScopeOffer[]; environments: Environment[] }> {
    const probe = (key: Partial<KeyPowers>) =>
      escalationOf(call, "create", "new", {
        environment: environments[0],
        scopes: [],
        allowedIpCidrs: [],
        expiresAt: null,
        ...key,
      });
    try {
      const scopes: AdminScopeOffer[] = [];
      for (const offer of offers) {
        if ((await probe({ scopes: [offer.scope] }))?.scopes === undefined) scopes.push(offer);
      }
      const allowed: Environment[] = [];
      for (const environment of environments) {
        if ((await probe({ environment }))?.environment === undefined) allowed.push(environment);
      }
      return { scopes, environments: allowed };
    } catch (error) {
      if (error instanceof AdminHttpError) return { scopes: [], environments: [] };
      throw error;
    }
  }

  /** The limits a key the caller creates carries; `undefined` when it may not create one. */
  async function limitsView(call: Call<R>): Promise<AdminKeyLimitsView | null | undefined> {
    let limits;
    try {
      limits = await newKeyLimits(call);
    } catch (error) {
      if (error instanceof AdminHttpError) return undefined;
      throw error;
    }
    const policies = (limits.rateLimits ?? []).map(({ name, limit, windowMs }) => ({
      name,
      limit,
      windowMs,
    }));
    // A key minted by a caller with credits spends the caller's balance (its own, or the pool);
    // one on keyLimits' shared pool joins the tenant's pool as it is, once the tenant has one.
    const caller = limits.limitsOf === undefined ? null : await callerPowers(call);
    const own = limits.credits;
    const pool = own?.sharedBy === "tenant" ? await service.tenantCredits(call.tenantId) : null;
    const shared = caller?.credits ?? caller?.tenantCredits ?? pool ?? undefined;
    const amount = shared?.remaining ?? own?.remaining;
    const refill = shared === undefined ? own?.refill : shared.refill;
    // The tenant's pool unless the caller's own balance: the caller's pool, or keyLimits' one.
    const pooled = caller?.credits === undefined &&
      (caller?.tenantCredits !== undefined || own?.sharedBy === "tenant");
    const credits = amount === undefined ? null : {
      amount,
      refillAmount: refill?.amount ?? null,
      refillEvery: refill === undefined ? null : refillEvery(refill),
      ...(pooled ? { sharedBy: "tenant" as const } : {}),
    };
    return policies.length === 0 && credits === null ? null : { policies, credits };
  }

  /** `GET /config` for the caller. */
  async function configOf(call: Call<R>): Promise<AdminConfig> {
    const none: AdminTarget = { tenantId: call.tenantId, key: null, proposed: null };
    const can = {} as AdminPermissions;
    for (const action of PERMISSIONS) {
      can[action] = await hook(() => canManage(call.request, action, none)) === true;
    }
    can.rename &&= rename !== undefined;
    can.audit &&= audits;
    const offer = can.create ? await grantable(call) : { scopes: [], environments: [] };
    const limits = can.create ? await limitsView(call) : null;
    can.create &&= offer.scopes.length > 0 && offer.environments.length > 0 &&
      limits !== undefined;
    return {
      scopes: offer.scopes,
      environments: offer.environments,
      gracePresets: [...gracePresets],
      defaultGrace,
      expiryPresets: [...expiryPresets],
      defaultExpiry,
      capabilities,
      csrf,
      can,
      limits: limits ?? null,
    };
  }

  /** `GET /keys`: one page of the tenant's keys (reads only). */
  async function listKeys(call: Call<R>, query: QueryOf): Promise<KeyList> {
    const { limit, options } = listQuery(query);
    const page = await listPage(call.tenantId, { ...options, now: clock() });
    const keys = page.summaries.slice(0, limit);
    const last = keys.at(-1);
    return {
      keys: keys.map((key) =>
        view(key, Object.hasOwn(page.predecessors, key.id) ? page.predecessors[key.id] : null)
      ),
      nextCursor: page.summaries.length > limit && last !== undefined
        ? encodeCursor(options.sort, positionOf(last, options.sort))
        : null,
      capabilities,
      tenantCredits: tenantCreditsView(await service.tenantCredits(call.tenantId)),
    };
  }

  /** `GET /usage?keys=…`: the usage of up to 100 of the tenant's keys, each allowed by `canManage`. */
  async function usageBatch(
    call: Call<R>,
    query: QueryOf,
  ): Promise<Omit<UsageBatchAnswer, "keys"> & { keys: Record<string, ApiKeyUsageBucket[]> }> {
    const ids = usageKeys(query);
    const { granularity, from, to, covered } = usageWindow(query, clock());
    // One storage read of the keys (`findManyByIds`); another tenant's id is unknown.
    const keys = (await summariesOf(call.tenantId, ids)).filter((key) => key !== null);
    if (keys.length !== ids.length) throw new ApiKeyOperationError("api_key_record_not_found");
    for (const key of keys) {
      await allow(call, "usage", { tenantId: call.tenantId, key, proposed: null });
    }
    // One storage read for the page's keys (`readUsageOfKeys`), at most MAX_KEYS_PER_READ of them.
    const buckets = await usageOfKeys(call.tenantId, ids, { from, to, granularity });
    // The service's buckets as they are: JSON writes their dates as ISO strings.
    return {
      granularity,
      from: covered.from.toISOString(),
      to: covered.to.toISOString(),
      keys: Object.fromEntries(ids.map((id, i) => [id, buckets[i]])),
    };
  }

  /**
   * A new key's expiry: `expiresAt` (an instant; the service checks it is in
   * the future and within its TTL policy) or the `expiresIn` preset, never both.
   */
  function newKeyExpiry(input: Record<string, unknown>): Date | null {
    if (input.expiresAt !== undefined) {
      if (input.expiresIn !== undefined) fail("expiresAt", "must not be sent with expiresIn");
      return bodyInstant(input.expiresAt, "expiresAt");
    }
    const lifetime = EXPIRY_MS[oneOf(input.expiresIn, expiryPresets, defaultExpiry, "expiresIn")];
    return lifetime === null ? null : new Date(clock().getTime() + lifetime);
  }

  async function create(call: Call<R>, body: AdminRequest["body"]): Promise<AdminResponse> {
    const input = readObject(body, maxBodyBytes, [
      "name",
      "scopes",
      "environment",
      "expiresIn",
      "expiresAt",
      "allowedIpCidrs",
    ]);
    const name = requireKeyName(input.name, "name");
    const scopes = [...new Set(stringList(input.scopes, "scopes", 1, MAX_SCOPES_PER_KEY))];
    if (!scopes.every((scope) => offered.has(scope))) {
      fail("scopes", "must be scopes the server offers (GET config)");
    }
    const environment = oneOf(input.environment, environments, environments[0], "environment");
    const expiresAt = newKeyExpiry(input);
    let allowedIpCidrs: string[] = [];
    if (input.allowedIpCidrs !== undefined) {
      const entries = stringList(input.allowedIpCidrs, "allowedIpCidrs", 0, MAX_ALLOWLIST);
      try {
        allowedIpCidrs = serviceAllowedIpCidrs(entries, layouts);
      } catch (error) {
        fail("allowedIpCidrs", (error as Error).message);
      }
    }
    const proposed: KeyPowers = {
      environment,
      scopes,
      allowedIpCidrs,
      expiresAt,
    };
    await allow(call, "create", { tenantId: call.tenantId, key: null, proposed });
    await enforce(call, "create", "new", proposed);
    const limits = await newKeyLimits(call);
    const createdBy = await actor(call);
    const made = await createWithRecord({
      ...limits,
      createdBy,
      tenantId: call.tenantId,
      name,
      scopes: scopes.map(toScope),
      environment,
      expiresAt: proposed.expiresAt,
      allowedIpCidrs,
    }, { actor: createdBy }).catch((error) => {
      throw refusedLimits(error, call.tenantId);
    });
    const record = await readBack(call, made);
    const issued: IssuedKey = { key: made.result.key, record: view(record, null) };
    return jsonResponse(201, JSON.stringify(issued));
  }

  /** `POST /keys/:id/rotate`'s body: `grace` (a preset) and `name` (omitted: the old key's). */
  function rotateBody(body: AdminRequest["body"]): { grace: GracePreset; name?: string } {
    const input = readObject(body, maxBodyBytes, ["grace", "name"]);
    return {
      grace: oneOf(input.grace, gracePresets, defaultGrace, "grace"),
      name: input.name === undefined ? undefined : requireKeyName(input.name, "name"),
    };
  }

  async function rotate(call: Call<R>, key: ApiKeySummary, body: ReturnType<typeof rotateBody>) {
    const { grace, name } = body;
    await allow(call, "rotate", { tenantId: call.tenantId, key, proposed: null });
    await enforce(call, "rotate", "target", key);
    await checkSuccessorLimits(call, key);
    const createdBy = await actor(call);
    const made = await rotateWithRecord(call.tenantId, key.id, {
      createdBy,
      gracePeriodMs: GRACE_MS[grace],
      name,
      // The old key's expiry as the service keeps it: a date at most now + ttlPolicy.maxExpiresInMs
      // (a key made before the policy was tightened), none while the policy allows none (else the
      // policy's default, else now + maxExpiresInMs).
      expiresAt: key.expiresAt === null && allowsLifetime(null) ? null : undefined,
      allowedIpCidrs: key.allowedIpCidrs,
    }, { actor: createdBy });
    const { result: rotated } = made;
    const record = await readBack(call, made);
    const answer: RotatedKey = {
      key: rotated.key,
      record: view(record, rotated.replacedKeyId),
      replacedKeyId: rotated.replacedKeyId,
      graceExpiresAt: rotated.graceExpiresAt.toISOString(),
    };
    return jsonResponse(201, JSON.stringify(answer));
  }

  async function readUsage(call: Call<R>, key: ApiKeySummary, request: AdminRequest) {
    await allow(call, "usage", { tenantId: call.tenantId, key, proposed: null });
    const { granularity, from, to, covered } = usageWindow(request.query, clock());
    // The page's read (`usageOfKeys`), for one key.
    const [buckets] = await usageOfKeys(call.tenantId, [key.id], { from, to, granularity });
    // The service's buckets as they are: JSON writes their dates as the ISO strings of UsageAnswer.
    const answer: Omit<UsageAnswer, "buckets"> & { buckets: ApiKeyUsageBucket[] } = {
      keyId: key.id,
      granularity,
      from: covered.from.toISOString(),
      to: covered.to.toISOString(),
      buckets,
    };
    return jsonResponse(200, JSON.stringify(answer));
  }

  /** 200 with the key `id` read again, and the key it replaced. */
  async function answerKey(call: Call<R>, id: string): Promise<AdminResponse> {
    const key = await findKey(call, id);
    return jsonResponse(200, JSON.stringify(view(key, await predecessorOf(call.tenantId, id))));
  }

  async function dispatch(route: Route, request: AdminRequest, native: R): Promise<AdminResponse> {
    const { action } = route;
    if (CSRF_METHODS.has(request.method) && !passesCsrf(request)) {
      csrfRefused++;
      throw new AdminHttpError(403, "csrf_refused", "Cross-site request refused");
    }
    const tenantId = await hook(() => tenantOf(native));
    if (typeof tenantId !== "string" || tenantId === "") {
      throw new AdminHttpError(401, "unauthenticated", "Authentication required");
    }
    try {
      validTenantId(tenantId);
    } catch {
      // The session layer's bug, never the customer's field: a 500, told to onError.
      throw new HookFailure(
        new TypeError(
          "options.tenantOf's answer is not a tenant id a key may have (1 to 255 UTF-16 units, " +
            "printable, no surrounding whitespace)",
        ),
      );
    }
    // Said only to a caller the app let in: which routes this deployment lacks.
    if (
      (action === "rename" && rename === undefined) ||
      (action === "usage" && !recordsUsage) || (action === "audit" && !audits)
    ) {
      throw new AdminHttpError(501, "not_implemented", `The ${action} route is not available`);
    }
    const call: Call<R> = { request: native, tenantId };
    try {
      return await act(route, request, call);
    } catch (error) {
      if (error instanceof AdminHttpError && error.code === "api_key_escalation_refused") {
        await recordRefused(call, route, error);
      }
      throw error;
    }
  }

  /**
   * With the audit log, records an escalation refused to the caller (actor
   * from `actorOf`): what it asked and where it exceeded. A failure to record
   * goes to `onError`; the answer stays the refusal.
   */
  async function recordRefused(call: Call<R>, route: Route, error: AdminHttpError): Promise<void> {
    if (recordRefusal === undefined) return;
    try {
      const key = route.id === null ? null : await summaryOf(call.tenantId, route.id);
      const exceeds = error.details?.exceeds ?? null;
      await recordRefusal(call.tenantId, { actor: await actor(call) }, key, route.action, exceeds);
    } catch (failure) {
      report(failure);
    }
  }

  /**
   * `PATCH /keys/:id`'s body: `name`, and `expectedName` (checked as a name;
   * `null` or omitted: none). `expectedName` needs `replaceNameForTenant`
   * (a read then a rename would not be atomic): without it, 501 before the
   * key is read, as the rename route without `renameForTenant`.
   */
  function renameBody(body: AdminRequest["body"]): { name: string; expectedName?: string } {
    const input = readObject(body, maxBodyBytes, ["name", "expectedName"]);
    const name = requireKeyName(input.name, "name");
    const expectedName = input.expectedName === undefined || input.expectedName === null
      ? undefined
      : requireKeyName(input.expectedName, "expectedName");
    if (expectedName !== undefined && !conditionalRename) {
      throw new AdminHttpError(
        501,
        "not_implemented",
        "A rename with expectedName is not available (the storage lacks replaceNameForTenant)",
      );
    }
    return { name, expectedName };
  }

  async function act(route: Route, request: AdminRequest, call: Call<R>): Promise<AdminResponse> {
    const { action, id } = route;
    const { tenantId } = call;
    const none: AdminTarget = { tenantId, key: null, proposed: null };
    switch (action) {
      case "config":
        await allow(call, "config", none);
        return jsonResponse(200, JSON.stringify(await configOf(call)));
      case "list":
        await allow(call, "list", none);
        return jsonResponse(200, JSON.stringify(await listKeys(call, request.query)));
      case "create":
        return await create(call, request.body);
      case "audit": {
        await allow(call, "audit", none);
        const page: AuditPage = await service.auditLog(tenantId, auditQuery(request.query));
        return jsonResponse(200, JSON.stringify(page));
      }
    }
    if (action === "usage" && id === null) {
      return jsonResponse(200, JSON.stringify(await usageBatch(call, request.query)));
    }
    // The body before the key: a bad one answers 400 or 413 whether the key exists or not.
    const renaming = action === "rename" ? renameBody(request.body) : undefined;
    const rotation = action === "rotate" ? rotateBody(request.body) : undefined;
    const key = await findKey(call, id!);
    const target: AdminTarget = { tenantId, key, proposed: null };
    switch (action) {
      case "read":
        await allow(call, "read", target);
        return jsonResponse(
          200,
          JSON.stringify(view(key, await predecessorOf(tenantId, key.id))),
        );
      case "rename": {
        const { name, expectedName } = renaming!;
        await allow(call, "rename", target);
        await enforce(call, "rename", "target", key);
        if (
          !await rename!(tenantId, key.id, name, { actor: await actor(call) }, { expectedName })
        ) {
          // Renamed meanwhile (another tab): the name it has now is not said, GET /keys/:id reads it.
          throw new AdminHttpError(
            409,
            "api_key_name_changed",
            "The key's name is no longer expectedName (renamed meanwhile)",
          );
        }
        return await answerKey(call, key.id);
      }
      case "revoke":
        await allow(call, "revoke", target);
        await enforce(call, "revoke", "target", key);
        await service.revokeForTenant(tenantId, key.id, { actor: await actor(call) });
        return await answerKey(call, key.id);
      case "rotate":
        return await rotate(call, key, rotation!);
      default:
        return await readUsage(call, key, request);
    }
  }

  function answerError(error: unknown): AdminResponse {
    if (error instanceof AdminHttpError) {
      const answer = errorResponse(error.status, error.code, error.message, error.details);
      if (error.status === 405) {
        answer.headers.allow = (error.details!.allow as string[]).join(", ");
      }
      return answer;
    }
    if (error instanceof ApiKeyValidationError) {
      return errorResponse(400, error.code, error.message, { field: error.field });
    }
    if (error instanceof ApiKeyStorageError) {
      // The provider's storage failing: theirs to see (the error holds no key nor secret).
      report(error);
      return errorResponse(error.httpStatus, error.code, error.message);
    }
    if (error instanceof ApiKeyOperationError) {
      return errorResponse(error.httpStatus, error.code, error.message);
    }
    report(error);
    return errorResponse(500, "internal_error", "Internal error");
  }

  /** Hands `error` to `onError`, whose own throw or rejection changes nothing of the answer. */
  function report(error: unknown): void {
    callDetached(onError, [error instanceof HookFailure ? error.error : error], () => {});
  }

  const handle = async (request: AdminRequest, native: R): Promise<AdminResponse | undefined> => {
    try {
      const route = matchRoute(request.method, request.path);
      return route === undefined ? undefined : await dispatch(route, request, native);
    } catch (error) {
      return answerError(error);
    }
  };
  const hasRoute = (path: string): boolean => routesOf(path) !== undefined;
  return Object.defineProperty(Object.assign(handle, { maxBodyBytes, hasRoute }), "csrfRefused", {
    get: () => csrfRefused,
    enumerable: true,
  }) as ApiKeysAdminHandler<R>;
}
