/**
 * `/api/projects`: the scoped, offset-paginated list (sort, filters, links),
 * one project (errors typed with `ProblemType`), and a `live`-only write.
 *
 * @module
 */
import { Controller, Get, Inject, NotFoundException, Param, Post, UseGuards } from "@nestjs/common";
import { ApiOperation, ApiSecurity, ApiTags } from "@nestjs/swagger";
import type { ApiKeyContext } from "../../api_keys/mod.ts";
import {
  ApiKeysGuard,
  CurrentApiKey,
  RequireEnvironment,
  RequireScope,
} from "../../api_keys/nest/mod.ts";
import type { PaginatedResult } from "../../safe_response/mod.ts";
import {
  FilterMeta,
  Paginated,
  ProblemType,
  ResponseMessage,
  SortMeta,
  SuccessCode,
} from "../../safe_response/nest/mod.ts";
import { ApiKeyThrottlerGuard } from "../api-key-throttler.guard.ts";
import { ValidBody, ValidQuery } from "../validation.ts";
import { CreateProjectDto } from "./create-project.dto.ts";
import { ListProjectsQuery, PROJECTS_MAX_LIMIT } from "./list-projects.query.ts";
import type { Project } from "./project.ts";
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

  /** Offset pagination with sort, filters and links; needs `projects:read`. */
  @Get()
  @ApiOperation({ summary: "List projects (page, limit ≤ 50, sort, order, status, q)" })
  @RequireScope("projects", "read")
  @Paginated({ maxLimit: PROJECTS_MAX_LIMIT, links: true })
  @SortMeta()
  @FilterMeta()
  list(
    @CurrentApiKey() apiKey: ApiKeyContext,
    @ValidQuery(ListProjectsQuery) query: ListProjectsQuery,
  ): PaginatedResult<Project> {
    const page = query.page ?? 1;
    const limit = Math.min(query.limit ?? 10, PROJECTS_MAX_LIMIT);
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

  /** One project; an unknown id is a 404 typed `PROJECT_NOT_FOUND_TYPE`. */
  @Get(":id")
  @ApiOperation({ summary: "Read one project (404 typed with ProblemType)" })
  @RequireScope("projects", "read")
  @ProblemType(PROJECT_NOT_FOUND_TYPE)
  get(@CurrentApiKey() apiKey: ApiKeyContext, @Param("id") id: string): Project {
    const project = this.#store.find(apiKey.tenantId, id);
    if (project === undefined) {
      throw new NotFoundException({
        code: "PROJECT_NOT_FOUND",
        message: `Project ${id} does not exist in this tenant`,
      });
    }
    return project;
  }

  /** Creates a project; `live` keys with `projects:write` only. */
  @Post()
  @ApiOperation({ summary: "Create a project (live keys only, projects:write)" })
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
