/**
 * Query of `GET /api/projects`: page, size, sort, filters and field selection.
 *
 * @module
 */
import { ApiPropertyOptional } from "@nestjs/swagger";
import { Allow, IsIn, IsOptional, IsString, Length, Matches } from "class-validator";
import type { ProjectStatus } from "./project.ts";

/**
 * Sort, filters and selected fields of the projects list. `page` and `limit`
 * are parsed, clamped and documented by `Paginated` (the handler reads them
 * with `PaginationQuery()`); they are listed here only so the whitelist
 * accepts them.
 */
export class ListProjectsQuery {
  /** Read by `PaginationQuery()`. */
  @Allow()
  page?: unknown;

  /** Read by `PaginationQuery()`. */
  @Allow()
  limit?: unknown;

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
