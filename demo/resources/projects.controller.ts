/**
 * `/api/projects`: the scoped, offset-paginated list (sort, filters, links,
 * field selection), one project (catalog errors typed with `ProblemType`),
 * and `live`-only writes (create; archive, whose failures come from the
 * error catalog).
 *
 * @module
 */
import { Controller, Get, HttpCode, Inject, Param, Post, UseGuards } from "@nestjs/common";
import { ApiOperation, ApiSecurity, ApiTags } from "@nestjs/swagger";
import type { ApiKeyContext } from "../../api_keys/mod.ts";
import {
  ApiKeysGuard,
  CurrentApiKey,
  RequireEnvironment,
  RequireScope,
} from "../../api_keys/nest/mod.ts";
import type { OffsetPaginationQuery, PaginatedResult } from "../../safe_response/mod.ts";
import {
  FieldSelection,
  FilterMeta,
  Paginated,
  PaginationQuery,
  ProblemType,
  ResponseMessage,
  SortMeta,
  SuccessCode,
} from "../../safe_response/nest/mod.ts";
import {
  ApiPaginatedSafeResponse,
  ApiSafeCatalogErrors,
  ApiSafeResponse,
} from "../../safe_response/openapi/mod.ts";
import { ApiKeyThrottlerGuard } from "../api_key_throttler.guard.ts";
import { DemoErrors } from "../errors.ts";
import { ValidBody, ValidQuery } from "../validation.ts";
import { CreateProjectDto } from "./create_project.dto.ts";
import { ListProjectsQuery } from "./list_projects.query.ts";
import { Project } from "./project.ts";
import {
  archiveProject,
  findProject,
  listProjects,
  PROJECT_NOT_FOUND_TYPE,
  PROJECTS_DEFAULT_LIMIT,
  PROJECTS_MAX_LIMIT,
} from "./projects.ts";
import { ProjectsStore } from "./projects.store.ts";

/** Projects of the caller's tenant. */
@ApiTags("projects")
@ApiSecurity("api-key")
@Controller("api/projects")
@UseGuards(ApiKeysGuard, ApiKeyThrottlerGuard)
export class ProjectsController {
  readonly #store: ProjectsStore;

  /** Builds the controller. */
  constructor(@Inject(ProjectsStore) store: ProjectsStore) {
    this.#store = store;
  }

  /**
   * Offset pagination with sort, filters, links and `?fields=`; needs
   * `projects:read`. `page` and `limit` come parsed and clamped from
   * `PaginationQuery()` (a bad value is a 400 before this runs).
   */
  @Get()
  @ApiOperation({ summary: "List projects (page, limit ≤ 50, sort, order, status, q, fields)" })
  @ApiPaginatedSafeResponse(Project, { description: "A page of projects" })
  @RequireScope("projects", "read")
  @Paginated({ maxLimit: PROJECTS_MAX_LIMIT, defaultLimit: PROJECTS_DEFAULT_LIMIT, links: true })
  @SortMeta()
  @FilterMeta()
  @FieldSelection()
  list(
    @CurrentApiKey() apiKey: ApiKeyContext,
    @ValidQuery(ListProjectsQuery) query: ListProjectsQuery,
    @PaginationQuery() { page, limit = PROJECTS_DEFAULT_LIMIT }: OffsetPaginationQuery,
  ): PaginatedResult<Project> {
    return listProjects(this.#store, apiKey.tenantId, { ...query, page, limit });
  }

  /** One project; an unknown id is the catalog's 404, typed `PROJECT_NOT_FOUND_TYPE`. */
  @Get(":id")
  @ApiOperation({
    summary: "Read one project (404 from the error catalog, typed with ProblemType)",
  })
  @ApiSafeResponse(Project)
  @ApiSafeCatalogErrors(DemoErrors, ["PROJECT_NOT_FOUND"])
  @RequireScope("projects", "read")
  @ProblemType(PROJECT_NOT_FOUND_TYPE)
  get(@CurrentApiKey() apiKey: ApiKeyContext, @Param("id") id: string): Project {
    return findProject(this.#store, apiKey.tenantId, id);
  }

  /** Archives an active project; `live` keys with `projects:write` only. */
  @Post(":id/archive")
  @HttpCode(200)
  @ApiOperation({ summary: "Archive a project (409 from the error catalog if already archived)" })
  @ApiSafeResponse(Project)
  @ApiSafeCatalogErrors(DemoErrors, ["PROJECT_NOT_FOUND", "PROJECT_ALREADY_ARCHIVED"])
  @RequireEnvironment("live")
  @RequireScope("projects", "write")
  @SuccessCode("PROJECT_ARCHIVED")
  archive(@CurrentApiKey() apiKey: ApiKeyContext, @Param("id") id: string): Project {
    return archiveProject(this.#store, apiKey.tenantId, id);
  }

  /** Creates a project; `live` keys with `projects:write` only. */
  @Post()
  @ApiOperation({ summary: "Create a project (live keys only, projects:write)" })
  @ApiSafeResponse(Project, { statusCode: 201 })
  @RequireEnvironment("live")
  @RequireScope("projects", "write")
  @SuccessCode("PROJECT_CREATED")
  @ResponseMessage("Project created")
  create(
    @CurrentApiKey() apiKey: ApiKeyContext,
    @ValidBody(CreateProjectDto) body: CreateProjectDto,
  ): Project {
    return this.#store.add(apiKey.tenantId, body.name, body.status ?? "active");
  }
}
