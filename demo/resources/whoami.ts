/**
 * What `GET /api/whoami` answers, built once for both demos (the Nest
 * controller documents its shape as `WhoAmI`).
 *
 * @module
 */
import type { ApiKeyContext } from "../../api_keys/mod.ts";

/** The caller's key context and the client address the guard checked. */
export interface WhoAmIBody {
  keyId: string;
  prefix: string;
  tenantId: string;
  environment: string;
  scopes: string[];
  allowedIpCidrs: string[];
  clientIp: string | null;
}

/** The answer for `apiKey`, seen from `clientIp`. */
export function whoAmI(apiKey: ApiKeyContext, clientIp: string | undefined): WhoAmIBody {
  return {
    keyId: apiKey.keyId,
    prefix: apiKey.prefix,
    tenantId: apiKey.tenantId,
    environment: apiKey.environment,
    scopes: [...apiKey.scopes],
    allowedIpCidrs: [...(apiKey.allowedIpCidrs ?? [])],
    clientIp: clientIp ?? null,
  };
}
