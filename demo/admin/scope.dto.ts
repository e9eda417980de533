/**
 * A scope in a request body: a resource and a level.
 *
 * @module
 */
import { ApiProperty } from "@nestjs/swagger";
import { IsIn, IsString, Length, Matches } from "class-validator";
import type { ScopeLevel } from "../../api_keys/mod.ts";

/** One requested scope. */
export class ScopeDto {
  /** Resource name: lower-case letters, digits, `_`, `.` and `-`. */
  @ApiProperty({ example: "projects", pattern: "^[a-z0-9_.-]+$" })
  @IsString()
  @Length(1, 64)
  @Matches(/^[a-z0-9_.-]+$/, { message: "resource must match [a-z0-9_.-]+" })
  resource!: string;

  /** `read` or `write` (`write` implies `read`). */
  @ApiProperty({ enum: ["read", "write"] })
  @IsIn(["read", "write"])
  level!: ScopeLevel;
}
