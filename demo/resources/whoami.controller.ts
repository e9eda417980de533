/**
 * `/api/whoami`: the verified key and the client IP the guard saw. With the
 * localhost-only key it shows the IP allowlist at work.
 *
 * @module
 */
import { Controller, Get, Req, UseGuards } from "@nestjs/common";
import { ApiOperation, ApiProperty, ApiSecurity, ApiTags } from "@nestjs/swagger";
import type { ApiKeyContext } from "../../api_keys/mod.ts";
import { ApiKeysGuard, CurrentApiKey } from "../../api_keys/nest/mod.ts";
import { ApiSafeResponse } from "../../safe_response/openapi/mod.ts";
import { ApiKeyThrottlerGuard } from "../api_key_throttler.guard.ts";
import { demoClientIpResolver } from "../client_ip.ts";
import { whoAmI } from "./whoami.ts";

/** What `GET /api/whoami` answers. */
export class WhoAmI {
  /** Record id of the key. */
  @ApiProperty()
  keyId!: string;
  /** Public prefix. */
  @ApiProperty()
  prefix!: string;
  /** Tenant. */
  @ApiProperty({ example: "demo" })
  tenantId!: string;
  /** `live` or `test`. */
  @ApiProperty({ enum: ["live", "test"] })
  environment!: string;
  /** Flattened scopes. */
  @ApiProperty({ type: [String], example: ["projects:read"] })
  scopes!: string[];
  /** The key's IP allowlist (empty: any address). */
  @ApiProperty({ type: [String], example: ["127.0.0.1/32"] })
  allowedIpCidrs!: string[];
  /** The client address the guard checked. */
  @ApiProperty({ type: String, nullable: true, example: "127.0.0.1" })
  clientIp!: string | null;
}

/** Any valid key, no scope required. */
@ApiTags("keys")
@ApiSecurity("api-key")
@Controller("api/whoami")
@UseGuards(ApiKeysGuard, ApiKeyThrottlerGuard)
export class WhoAmIController {
  /** The caller's key context and client IP. */
  @Get()
  @ApiOperation({ summary: "The verified key and client IP (try the localhost-only key)" })
  @ApiSafeResponse(WhoAmI)
  async get(
    @CurrentApiKey() apiKey: ApiKeyContext,
    // deno-lint-ignore no-explicit-any
    @Req() request: any,
  ): Promise<WhoAmI> {
    return whoAmI(apiKey, await demoClientIpResolver(request));
  }
}
