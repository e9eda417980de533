/**
 * A scope in a request body: a resource and a level.
 *
 * @module
 */
import { ApiProperty } from "@nestjs/swagger";
import { IsIn, IsString, Length, Matches } from "class-validator";
import type { ScopeLevel } from "../../api_keys/mod.ts";
import { SCOPE_RESOURCE_MAX_LENGTH, SCOPE_RESOURCE_PATTERN } from "./scope_rule.ts";

/** One requested scope. */
export class ScopeDto {
  /** Resource name: lower-case letters, digits, `_`, `.` and `-`. */
  @ApiProperty({ example: "projects", pattern: SCOPE_RESOURCE_PATTERN.source })
  @IsString()
  @Length(1, SCOPE_RESOURCE_MAX_LENGTH)
  @Matches(SCOPE_RESOURCE_PATTERN, { message: "resource must match [a-z0-9_.-]+" })
  resource!: string;

  /** `read` or `write` (`write` implies `read`). */
  @ApiProperty({ enum: ["read", "write"] })
  @IsIn(["read", "write"])
  level!: ScopeLevel;
}
