/**
 * The public view of a key: what the admin routes answer, the library's
 * `ApiKeySummary` (no hash or pepper version) with dates as ISO strings.
 *
 * @module
 */
import { ApiProperty, ApiPropertyOptional } from "@nestjs/swagger";
import type { ApiKeyStatus, Environment } from "../../api_keys/mod.ts";

/** A key record without its secret material. */
export class PublicKeyView {
  /** Record id. */
  @ApiProperty({ example: "0198c5e2-6f1a-7c3e-9a4b-2d1f0e8c7b6a" })
  id!: string;
  /** Owning tenant. */
  @ApiProperty({ example: "demo" })
  tenantId!: string;
  /** Display name. */
  @ApiProperty({ example: "billing worker" })
  name!: string;
  /** `live` or `test`. */
  @ApiProperty({ enum: ["live", "test"] })
  environment!: Environment;
  /** Public lookup prefix (safe to show; identifies the key in logs). */
  @ApiProperty({ example: "Xy12Ab34" })
  prefix!: string;
  /** Flattened scopes (`resource:level`). */
  @ApiProperty({ type: [String], example: ["projects:read"] })
  scopes!: string[];
  /** Allowed client addresses; empty means any. */
  @ApiProperty({ type: [String], example: [] })
  allowedIpCidrs!: string[];
  /** Condition at the time of the answer. */
  @ApiProperty({ enum: ["active", "rotating", "expired", "revoked"] })
  status!: ApiKeyStatus;
  /** ISO timestamps, or null. */
  @ApiPropertyOptional({ type: String, nullable: true, format: "date-time" })
  lastUsedAt!: string | null;
  /** Expiry, or null for none. */
  @ApiPropertyOptional({ type: String, nullable: true, format: "date-time" })
  expiresAt!: string | null;
  /** Revocation time, or null. */
  @ApiPropertyOptional({ type: String, nullable: true, format: "date-time" })
  revokedAt!: string | null;
  /** Rotation time, or null. */
  @ApiPropertyOptional({ type: String, nullable: true, format: "date-time" })
  rotatedAt!: string | null;
  /** Id of the key that replaced this one, or null. */
  @ApiPropertyOptional({ type: String, nullable: true })
  replacedByKeyId!: string | null;
  /** Creator, or null. */
  @ApiPropertyOptional({ type: String, nullable: true })
  createdBy!: string | null;
  /** Creation time. */
  @ApiProperty({ type: String, format: "date-time" })
  createdAt!: string;
}

export { toPublicKeyView } from "./key_view.ts";
