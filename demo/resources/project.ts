/**
 * The demo's resource: a project.
 *
 * @module
 */
import { ApiProperty } from "@nestjs/swagger";

/** Project status, the filterable field. */
export type ProjectStatus = "active" | "archived";

/** A project of a tenant. */
export class Project {
  /** Id, `prj_NNN`. */
  @ApiProperty({ example: "prj_007" })
  id!: string;
  /** Name. */
  @ApiProperty({ example: "Project Hydra" })
  name!: string;
  /** `active` or `archived`. */
  @ApiProperty({ enum: ["active", "archived"] })
  status!: ProjectStatus;
  /** Creation time (ISO 8601). */
  @ApiProperty({ type: String, format: "date-time" })
  createdAt!: string;
}
