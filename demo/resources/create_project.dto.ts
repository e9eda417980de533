/**
 * Body of `POST /api/projects`.
 *
 * @module
 */
import { ApiProperty, ApiPropertyOptional } from "@nestjs/swagger";
import { IsIn, IsOptional, IsString, Length } from "class-validator";
import type { ProjectStatus } from "./project.ts";

/** A project to create. */
export class CreateProjectDto {
  /** Name. */
  @ApiProperty({ example: "Project Zephyr", minLength: 1, maxLength: 100 })
  @IsString()
  @Length(1, 100)
  name!: string;

  /** Status (default `active`). */
  @ApiPropertyOptional({ enum: ["active", "archived"], default: "active" })
  @IsOptional()
  @IsIn(["active", "archived"])
  status?: ProjectStatus;
}
