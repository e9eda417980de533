/**
 * `/api/v0/projects`: the deprecated route, answered with `Deprecation`,
 * `Sunset` and `Link` headers and `meta.deprecation`.
 *
 * @module
 */
import { Controller, Get, Inject, UseGuards } from "@nestjs/common";
import { ApiOperation, ApiSecurity, ApiTags } from "@nestjs/swagger";
import type { ApiKeyContext } from "../../api_keys/mod.ts";
import { ApiKeysGuard, CurrentApiKey, RequireScope } from "../../api_keys/nest/mod.ts";
import { Deprecated } from "../../safe_response/nest/mod.ts";
import { ApiSafeResponse } from "../../safe_response/openapi/mod.ts";
import { ApiKeyThrottlerGuard } from "../api_key_throttler.guard.ts";
import { Project } from "./project.ts";
import { LEGACY_DEPRECATION } from "./projects.ts";
import { ProjectsStore } from "./projects.store.ts";

/** The first version of the projects list, kept until its sunset. */
@ApiTags("projects")
@ApiSecurity("api-key")
@Controller("api/v0/projects")
@UseGuards(ApiKeysGuard, ApiKeyThrottlerGuard)
export class LegacyProjectsController {
  readonly #store: ProjectsStore;

  /** Builds the controller. */
  constructor(@Inject(ProjectsStore) store: ProjectsStore) {
    this.#store = store;
  }

  /** The first five projects, unpaginated. */
  @Get()
  @ApiOperation({ summary: "Deprecated: first five projects (use GET /api/projects)" })
  @ApiSafeResponse(Project, { isArray: true })
  @RequireScope("projects", "read")
  @Deprecated(LEGACY_DEPRECATION)
  list(@CurrentApiKey() apiKey: ApiKeyContext): Project[] {
    return this.#store.all(apiKey.tenantId).slice(0, 5);
  }
}
