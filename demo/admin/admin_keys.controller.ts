/**
 * Admin routes: manage the admin key's own tenant over HTTP. Guarded by the
 * API key (scope `keys:write`) and rate-limited per key.
 *
 * `keys:write` alone is not enough: a key may create, rotate or revoke only
 * keys no more powerful than itself (environment, scopes, IP allowlist,
 * expiry), or the answer is 403 `api_key_escalation_refused`. The rule is
 * `findEscalation` in `no_escalation.ts`, applied by `TenantKeysService`, and
 * written out in docs/security.md, "Delegated key management (no escalation)".
 * Copy that rule with the routes: a scope check alone lets a key mint keys
 * more powerful than itself.
 *
 * @module
 */
import { Controller, Delete, Get, Inject, Param, Post, UseGuards } from "@nestjs/common";
import { ApiOperation, ApiSecurity, ApiTags } from "@nestjs/swagger";
import type { ApiKeyContext } from "../../api_keys/mod.ts";
import { ApiKeysGuard, CurrentApiKey, RequireScope } from "../../api_keys/nest/mod.ts";
import { ResponseMessage, SuccessCode } from "../../safe_response/nest/mod.ts";
import { ApiSafeResponse } from "../../safe_response/openapi/mod.ts";
import { ApiKeyThrottlerGuard } from "../api_key_throttler.guard.ts";
import { ValidBody, ValidQuery } from "../validation.ts";
import { CreateKeyDto } from "./create_key.dto.ts";
import { ListKeysQuery } from "./list_keys.query.ts";
import { IssuedKey, RotatedKey } from "./issued_key.ts";
import { PublicKeyView } from "./public_key_view.ts";
import { RotateKeyDto } from "./rotate_key.dto.ts";
import { TenantKeysService } from "./tenant_keys.service.ts";

/** `/admin/keys`: create, list, read, rotate and revoke the tenant's keys. */
@ApiTags("admin")
@ApiSecurity("api-key")
@Controller("admin/keys")
@UseGuards(ApiKeysGuard, ApiKeyThrottlerGuard)
@RequireScope("keys", "write")
export class AdminKeysController {
  readonly #keys: TenantKeysService;

  /** Builds the controller. */
  constructor(@Inject(TenantKeysService) keys: TenantKeysService) {
    this.#keys = keys;
  }

  /** Creates a key; the raw key is in the answer once. */
  @Post()
  @ApiOperation({ summary: "Create a key in the admin key's tenant" })
  @ApiSafeResponse(IssuedKey, { statusCode: 201 })
  @SuccessCode("KEY_CREATED")
  @ResponseMessage("Store the key now: it is never shown again")
  create(
    @CurrentApiKey() admin: ApiKeyContext,
    @ValidBody(CreateKeyDto) body: CreateKeyDto,
  ): Promise<IssuedKey> {
    return this.#keys.create(admin, body);
  }

  /** Lists the tenant's keys (public view). */
  @Get()
  @ApiOperation({ summary: "List the tenant's keys" })
  @ApiSafeResponse(PublicKeyView, { isArray: true })
  list(
    @CurrentApiKey() admin: ApiKeyContext,
    @ValidQuery(ListKeysQuery) query: ListKeysQuery,
  ): Promise<PublicKeyView[]> {
    return this.#keys.list(admin, query.includeRevoked === "true");
  }

  /** One key of the tenant. */
  @Get(":id")
  @ApiOperation({ summary: "Read one key of the tenant" })
  @ApiSafeResponse(PublicKeyView)
  get(@CurrentApiKey() admin: ApiKeyContext, @Param("id") id: string): Promise<PublicKeyView> {
    return this.#keys.get(admin, id);
  }

  /** Rotates a key: a new key now, the old one until the grace end. */
  @Post(":id/rotate")
  @ApiOperation({ summary: "Rotate a key of the tenant" })
  @ApiSafeResponse(RotatedKey, { statusCode: 201 })
  @SuccessCode("KEY_ROTATED")
  @ResponseMessage("Store the new key now: it is never shown again")
  rotate(
    @CurrentApiKey() admin: ApiKeyContext,
    @Param("id") id: string,
    @ValidBody(RotateKeyDto) body: RotateKeyDto,
  ): Promise<RotatedKey> {
    return this.#keys.rotate(admin, id, body);
  }

  /** Revokes a key at once. */
  @Delete(":id")
  @ApiOperation({ summary: "Revoke a key of the tenant" })
  @ApiSafeResponse(PublicKeyView)
  @SuccessCode("KEY_REVOKED")
  revoke(@CurrentApiKey() admin: ApiKeyContext, @Param("id") id: string): Promise<PublicKeyView> {
    return this.#keys.revoke(admin, id);
  }
}
