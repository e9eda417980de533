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
import {
  type OffsetPaginationQuery,
  type PaginatedResult,
  SafeException,
} from "../../safe_response/mod.ts";
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
import { ApiKeyThrottlerGuard } from "../api-key-throttler.guard.ts";
import { type DemoErrorKey, DemoErrors } from "../errors.ts";
import { ValidBody, ValidQuery } from "../validation.ts";
import { CreateProjectDto } from "./create-project.dto.ts";
import {
  ListProjectsQuery,
  PROJECTS_DEFAULT_LIMIT,
  PROJECTS_MAX_LIMIT,
} from "./list-projects.query.ts";
import { Project } from "./project.ts";
import { ProjectsStore } from "./projects.store.ts";

/** Problem type of `GET /api/projects/:id` for an unknown id. */
export const PROJECT_NOT_FOUND_TYPE = "https://example.com/problems/project-not-found";

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
    const field = query.sort ?? "createdAt";
    const order = query.order ?? "asc";
    const filters: Record<string, string> = {};
    if (query.status !== undefined) filters.status = query.status;
    if (query.q !== undefined) filters.q = query.q;
    const needle = query.q?.toLowerCase();
    const matching = this.#store.all(apiKey.tenantId)
      .filter((project) => query.status === undefined || project.status === query.status)
      .filter((project) => needle === undefined || project.name.toLowerCase().includes(needle))
      .sort((a, b) => a[field].localeCompare(b[field]) * (order === "asc" ? 1 : -1));
    return {
      data: matching.slice((page - 1) * limit, page * limit),
      total: matching.length,
      page,
      limit,
      sort: { field, order },
      filters,
    };
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
    return this.#find(apiKey.tenantId, id);
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
    const project = this.#find(apiKey.tenantId, id);
    if (project.status === "archived") {
      throw new SafeException<DemoErrorKey>("PROJECT_ALREADY_ARCHIVED", { details: { id } });
    }
    return this.#store.setStatus(project, "archived");
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

  /** The tenant's project `id`, or the catalog's `PROJECT_NOT_FOUND`. */
  #find(tenantId: string, id: string): Project {
    const project = this.#store.find(tenantId, id);
    if (project === undefined) {
      throw new SafeException<DemoErrorKey>("PROJECT_NOT_FOUND", { details: { id } });
    }
    return project;
  }
}
