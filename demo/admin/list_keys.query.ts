/**
 * Query of `GET /admin/keys`.
 *
 * @module
 */
import { ApiPropertyOptional } from "@nestjs/swagger";
import { IsIn, IsOptional } from "class-validator";

/** Listing options. */
export class ListKeysQuery {
  /** `true` to include revoked keys (default `false`). */
  @ApiPropertyOptional({ enum: ["true", "false"], default: "false" })
  @IsOptional()
  @IsIn(["true", "false"])
  includeRevoked?: "true" | "false";
}
