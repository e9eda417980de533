/**
 * Types of the admin routes: the framework-free request and response, the
 * options, the hooks and the presets (routes and JSON shapes:
 * docs/settings-page.md).
 *
 * @module
 */
import type { ApiKeysService } from "../service.ts";
import type { ApiKeySummary, Environment } from "../types.ts";
import type { Escalation, KeyPowers } from "./no_escalation.ts";

/**
 * What a request asks to do; `canManage` receives it.
 *
 * @example
 * ```ts
 * import type { AdminAction } from "@saferoute/api-kit/api-keys/admin";
 * const action: AdminAction = "rotate";
 * ```
 */
export type AdminAction =
  | "config"
  | "list"
  | "read"
  | "create"
  | "rename"
  | "revoke"
  | "rotate"
  | "usage";

/**
 * How long a rotated key keeps working.
 *
 * @example
 * ```ts
 * import type { GracePreset } from "@saferoute/api-kit/api-keys/admin";
 * const grace: GracePreset = "1h";
 * ```
 */
export type GracePreset = "none" | "1h" | "24h" | "7d";

/**
 * How long a created key lives (`never`: no expiry).
 *
 * @example
 * ```ts
 * import type { ExpiryPreset } from "@saferoute/api-kit/api-keys/admin";
 * const expiry: ExpiryPreset = "90d";
 * ```
 */
export type ExpiryPreset = "7d" | "30d" | "90d" | "1y" | "never";

/**
 * What `canManage` decides on: the caller's tenant, the key acted on (`null`
 * for `config`, `list` and `create`) and, for `create`, the key asked for.
 *
 * @example
 * ```ts
 * import type { AdminTarget } from "@saferoute/api-kit/api-keys/admin";
 * const target: AdminTarget = { tenantId: "acme", key: null, proposed: null };
 * ```
 */
export interface AdminTarget {
  /** The tenant `tenantOf` answered. */
  tenantId: string;
  /** The key of the route's `:id`, read in that tenant. */
  key: ApiKeySummary | null;
  /** The key `create` would issue (the values written). */
  proposed: KeyPowers | null;
}

/**
 * One check of the policy: a key the request would issue (`new`) or act on
 * (`target`).
 *
 * @example
 * ```ts
 * import type { AdminPolicyCheck } from "@saferoute/api-kit/api-keys/admin";
 * const check: AdminPolicyCheck<Request> = {
 *   request: new Request("https://example.com"), tenantId: "acme", action: "create", role: "new",
 *   key: { environment: "test", scopes: ["projects:read"], allowedIpCidrs: [], expiresAt: null },
 * };
 * ```
 */
export interface AdminPolicyCheck<R> {
  /** The app's request. */
  request: R;
  /** The caller's tenant. */
  tenantId: string;
  /** The action. */
  action: AdminAction;
  /** `new`: the key to issue; `target`: the key acted on. */
  role: "new" | "target";
  /** The key's powers. */
  key: KeyPowers;
}

/**
 * A policy: `null` allows, an `Escalation` refuses (403
 * `api_key_escalation_refused`, the escalation in `details.exceeds`).
 *
 * @example
 * ```ts
 * import type { AdminPolicy } from "@saferoute/api-kit/api-keys/admin";
 * const testKeysOnly: AdminPolicy<Request> = ({ key }) =>
 *   key.environment === "test" ? null : { environment: [key.environment] };
 * ```
 */
export type AdminPolicy<R> = (
  check: AdminPolicyCheck<R>,
) => Escalation | null | Promise<Escalation | null>;

/**
 * A scope the server offers to `create`, with an optional text for the page.
 *
 * @example
 * ```ts
 * import type { AdminScopeOffer } from "@saferoute/api-kit/api-keys/admin";
 * const offer: AdminScopeOffer = { scope: "projects:read", description: "Read projects" };
 * ```
 */
export interface AdminScopeOffer {
  /** A flat scope, `resource:level`. */
  scope: string;
  /** What it allows, for people. */
  description?: string;
}

/**
 * Options of `createApiKeysAdminHandler`; `R` is the app's request type.
 *
 * @example
 * ```ts
 * import type { ApiKeysAdminOptions } from "@saferoute/api-kit/api-keys/admin";
 * declare const service: ApiKeysAdminOptions<Request>["service"];
 * const options: ApiKeysAdminOptions<Request> = {
 *   service,
 *   scopes: ["projects:read", "projects:write"],
 *   tenantOf: (request) => request.headers.get("x-tenant"),
 *   canManage: () => true,
 *   policy: () => null,
 * };
 * ```
 */
export interface ApiKeysAdminOptions<R> {
  /** The key service. */
  service: ApiKeysService;
  /** The caller's tenant, from the app's own authentication; `null` answers 401. */
  tenantOf: (request: R) => string | null | undefined | Promise<string | null | undefined>;
  /** Called for every action; `false` answers 403 `forbidden`, a throw 500. */
  canManage: (request: R, action: AdminAction, target: AdminTarget) => boolean | Promise<boolean>;
  /**
   * Id of the API key the caller authenticated with, for the default policy
   * (no escalation over that key). Required unless `policy` is given.
   */
  callerKeyIdOf?: (request: R) => string | null | undefined | Promise<string | null | undefined>;
  /** The policy; default: no escalation over the caller's key (docs/security.md). */
  policy?: AdminPolicy<R>;
  /** The scopes `create` may ask for (flat `resource:level`), 1 to 200. */
  scopes: readonly (string | AdminScopeOffer)[];
  /** Environments `create` may ask for; the first is the default (default `["live", "test"]`). */
  environments?: readonly Environment[];
  /** Rotation grace choices (default all: `none`, `1h`, `24h`, `7d`). */
  gracePresets?: readonly GracePreset[];
  /** Expiry choices of `create` (default all: `7d`, `30d`, `90d`, `1y`, `never`). */
  expiryPresets?: readonly ExpiryPreset[];
  /**
   * The header state-changing routes require (default `{ header:
   * "x-requested-with", value: "api-keys-manager" }`). `false` turns the CSRF
   * check off: only for apps whose admin callers authenticate with a header
   * a browser never sends by itself (an API key, a bearer token).
   */
  csrf?: { header?: string; value?: string } | false;
  /** Largest request body in bytes (default 16,384). */
  maxBodyBytes?: number;
  /** Receives the unexpected errors answered as 500 (default: `console.error`). */
  onError?: (error: unknown) => void;
}

/**
 * A request as every binding gives it: `path` is relative to the mount point
 * (`/keys/abc/rotate`).
 *
 * @example
 * ```ts
 * import type { AdminRequest } from "@saferoute/api-kit/api-keys/admin";
 * const request: AdminRequest = {
 *   method: "DELETE", path: "/keys/abc", query: () => null, headers: () => null, body: "",
 * };
 * ```
 */
export interface AdminRequest {
  /** HTTP method. */
  method: string;
  /** Path below the mount point, starting with `/`. */
  path: string;
  /** A query parameter. */
  query: (name: string) => string | null | undefined;
  /** Case-insensitive header lookup. */
  headers: (name: string) => string | null | undefined;
  /** The body: bytes or text (a binding may stop reading past `maxBodyBytes + 1`). */
  body: Uint8Array | string | null;
}

/**
 * An answer: status, headers, JSON body.
 *
 * @example
 * ```ts
 * import type { AdminResponse } from "@saferoute/api-kit/api-keys/admin";
 * const answer: AdminResponse = { status: 204, headers: {}, body: "" };
 * ```
 */
export interface AdminResponse {
  /** HTTP status. */
  status: number;
  /** Response headers. */
  headers: Record<string, string>;
  /** JSON body. */
  body: string;
}

/**
 * The admin routes: `undefined` for a path that is none of them.
 *
 * @example
 * ```ts
 * import type { ApiKeysAdminHandler } from "@saferoute/api-kit/api-keys/admin";
 * declare const handle: ApiKeysAdminHandler<Request>;
 * ```
 */
export interface ApiKeysAdminHandler<R> {
  /** Answers one request; `native` is what the hooks receive. */
  (request: AdminRequest, native: R): Promise<AdminResponse | undefined>;
  /** Largest body read, in bytes. */
  readonly maxBodyBytes: number;
}
