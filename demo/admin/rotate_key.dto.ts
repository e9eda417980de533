/**
 * Body of `POST /admin/keys/:id/rotate`; every field is optional. The key
 * rotated and its replacement must be no more powerful than the admin key
 * (see `no_escalation.ts`).
 *
 * @module
 */
import { ApiPropertyOptional } from "@nestjs/swagger";
import {
  ArrayMaxSize,
  IsArray,
  IsIn,
  IsInt,
  IsISO8601,
  IsOptional,
  IsString,
  Length,
  Max,
  Min,
} from "class-validator";

/** Longest grace period the demo accepts: 30 days. */
export const MAX_GRACE_PERIOD_MS = 30 * 24 * 60 * 60 * 1000;

/** Longest wait for a new key's first use the demo accepts: 30 days. */
export const MAX_WAIT_MS = 30 * 24 * 60 * 60 * 1000;

/** How to rotate a key. */
export class RotateKeyDto {
  /** How long the old key keeps working, in ms (default 24 h; 0 ends it now). */
  @ApiPropertyOptional({ minimum: 0, maximum: MAX_GRACE_PERIOD_MS, example: 3_600_000 })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(MAX_GRACE_PERIOD_MS)
  gracePeriodMs?: number;

  /** When the grace period starts: at the rotation (default) or at the new key's first use. */
  @ApiPropertyOptional({ enum: ["rotation", "first-use"] })
  @IsOptional()
  @IsIn(["rotation", "first-use"])
  graceStarts?: "rotation" | "first-use";

  /** With `graceStarts: "first-use"` (required there): how long to wait for the first use, in ms. */
  @ApiPropertyOptional({ minimum: 0, maximum: MAX_WAIT_MS, example: 604_800_000 })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(MAX_WAIT_MS)
  maxWaitMs?: number;

  /** Name of the new key (default: the old name). */
  @ApiPropertyOptional({ minLength: 1, maxLength: 200 })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  name?: string;

  /** Expiry of the new key (ISO 8601; at most the admin key's); omitted keeps the old expiry. */
  @ApiPropertyOptional({ type: String, format: "date-time" })
  @IsOptional()
  @IsISO8601({ strict: true })
  expiresAt?: string;

  /** Allowlist of the new key, inside the admin key's (default: the old allowlist). */
  @ApiPropertyOptional({ type: [String] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(50)
  @IsString({ each: true })
  allowedIpCidrs?: string[];
}
