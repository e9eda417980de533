/**
 * Body of `POST /admin/keys`. The tenant is never taken from the body: it is
 * the admin key's own tenant. The key asked for must be no more powerful than
 * the admin key (see `no_escalation.ts`).
 *
 * @module
 */
import { ApiProperty, ApiPropertyOptional } from "@nestjs/swagger";
import { Type } from "class-transformer";
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsIn,
  IsISO8601,
  IsOptional,
  IsString,
  Length,
  ValidateNested,
} from "class-validator";
import type { Environment } from "../../api_keys/mod.ts";
import { ScopeDto } from "./scope.dto.ts";

/** A key to create. */
export class CreateKeyDto {
  /** Display name. */
  @ApiProperty({ example: "billing worker", minLength: 1, maxLength: 200 })
  @IsString()
  @Length(1, 200)
  name!: string;

  /** Scopes; each must be held by the admin key. */
  @ApiProperty({ type: [ScopeDto], example: [{ resource: "projects", level: "read" }] })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(20)
  @ValidateNested({ each: true })
  @Type(() => ScopeDto)
  scopes!: ScopeDto[];

  /** `live` (default) or `test`; a `test` admin key creates `test` keys only. */
  @ApiPropertyOptional({ enum: ["live", "test"], default: "live" })
  @IsOptional()
  @IsIn(["live", "test"])
  environment?: Environment;

  /**
   * Expiry (ISO 8601, in the future); omitted means no expiry. At most the
   * admin key's own expiry, so required when the admin key expires.
   */
  @ApiPropertyOptional({ type: String, format: "date-time" })
  @IsOptional()
  @IsISO8601({ strict: true })
  expiresAt?: string;

  /**
   * Allowed client addresses or CIDR ranges; omitted means any address. Each
   * range must lie inside the admin key's allowlist, so required when the
   * admin key has one.
   */
  @ApiPropertyOptional({ type: [String], example: ["127.0.0.1", "10.0.0.0/8"] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(50)
  @IsString({ each: true })
  allowedIpCidrs?: string[];
}
