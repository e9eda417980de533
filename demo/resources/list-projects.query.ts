/**
 * Query of `GET /api/projects`: page, size, sort, filters and field selection.
 *
 * @module
 */
import { ApiPropertyOptional } from "@nestjs/swagger";
import { Type } from "class-transformer";
import { IsIn, IsInt, IsOptional, IsString, Length, Matches, Min } from "class-validator";
import type { ProjectStatus } from "./project.ts";

/** Page, sort, filters and selected fields of the projects list. */
export class ListProjectsQuery {
  /** Page number, from 1 (default 1). */
  @ApiPropertyOptional({ minimum: 1, default: 1 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  page?: number;

  /** Page size (default 10; values above 50 are clamped to 50). */
  @ApiPropertyOptional({ minimum: 1, default: 10, description: "clamped to 50" })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  limit?: number;

  /** Sort field (default `createdAt`). */
  @ApiPropertyOptional({ enum: ["name", "createdAt"], default: "createdAt" })
  @IsOptional()
  @IsIn(["name", "createdAt"])
  sort?: "name" | "createdAt";

  /** Sort order (default `asc`). */
  @ApiPropertyOptional({ enum: ["asc", "desc"], default: "asc" })
  @IsOptional()
  @IsIn(["asc", "desc"])
  order?: "asc" | "desc";

  /** Only projects with this status. */
  @ApiPropertyOptional({ enum: ["active", "archived"] })
  @IsOptional()
  @IsIn(["active", "archived"])
  status?: ProjectStatus;

  /** Only projects whose name contains this text (case-insensitive). */
  @ApiPropertyOptional({ example: "hydra" })
  @IsOptional()
  @IsString()
  @Length(1, 100)
  q?: string;

  /** Fields of each project to keep, comma-separated (read by `FieldSelection`). */
  @ApiPropertyOptional({
    example: "id,name",
    description: "e.g. id,name; lists them in meta.fields",
  })
  @IsOptional()
  @IsString()
  @Matches(/^[A-Za-z0-9_.,]{1,200}$/, { message: "fields must be field names separated by commas" })
  fields?: string;
}
