/**
 * What the projects routes of both demo servers do, framework-free: the
 * tenant's list (filtered, sorted, paged), one project (the catalog's
 * `PROJECT_NOT_FOUND` otherwise), archiving (the catalog's
 * `PROJECT_ALREADY_ARCHIVED` for an archived one), and the routes' settings.
 *
 * @module
 */
import type { DeprecatedOptions, PaginatedResult } from "../../safe_response/mod.ts";
import { SafeException } from "../../safe_response/mod.ts";
import type { DemoErrorKey } from "../errors.ts";
import type { Project, ProjectStatus } from "./project.ts";
import type { ProjectsStore } from "./projects.store.ts";

/** Largest page size; larger `limit` values are clamped to it. */
export const PROJECTS_MAX_LIMIT = 50;

/** Page size when the request gives none. */
export const PROJECTS_DEFAULT_LIMIT = 10;

/** Problem type of `GET /api/projects/:id` for an unknown id. */
export const PROJECT_NOT_FOUND_TYPE = "https://example.com/problems/project-not-found";

/** Sunset of the legacy route `GET /api/v0/projects`. */
export const LEGACY_SUNSET = "2030-01-01T00:00:00Z";

/** The deprecation of `GET /api/v0/projects`. */
export const LEGACY_DEPRECATION: DeprecatedOptions = Object.freeze({
  since: "2025-01-01T00:00:00Z",
  sunset: LEGACY_SUNSET,
  message: "Use GET /api/projects, which paginates",
  link: "/docs#/projects",
});

/** The list's query, read. */
export interface ProjectsQuery {
  /** Page number, from 1 (default 1). */
  page?: number;
  /** Page size (default 10, clamped to {@link PROJECTS_MAX_LIMIT}). */
  limit?: number;
  /** Sort field (default `createdAt`). */
  sort?: "name" | "createdAt";
  /** Sort order (default `asc`). */
  order?: "asc" | "desc";
  /** Only projects with this status. */
  status?: ProjectStatus;
  /** Only projects whose name contains this text (case-insensitive). */
  q?: string;
}

/** A page of the tenant's projects, with the sort and filters applied. */
export function listProjects(
  store: ProjectsStore,
  tenantId: string,
  query: ProjectsQuery,
): PaginatedResult<Project> {
  const page = query.page ?? 1;
  const limit = Math.min(query.limit ?? PROJECTS_DEFAULT_LIMIT, PROJECTS_MAX_LIMIT);
  const field = query.sort ?? "createdAt";
  const order = query.order ?? "asc";
  const filters: Record<string, string> = {};
  if (query.status !== undefined) filters.status = query.status;
  if (query.q !== undefined) filters.q = query.q;
  const needle = query.q?.toLowerCase();
  const matching = store.all(tenantId)
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

/** The tenant's project `id`, or the catalog's `PROJECT_NOT_FOUND`. */
export function findProject(store: ProjectsStore, tenantId: string, id: string): Project {
  const project = store.find(tenantId, id);
  if (project === undefined) {
    throw new SafeException<DemoErrorKey>("PROJECT_NOT_FOUND", { details: { id } });
  }
  return project;
}

/** Archives an active project; an archived one is the catalog's `PROJECT_ALREADY_ARCHIVED`. */
export function archiveProject(store: ProjectsStore, tenantId: string, id: string): Project {
  const project = findProject(store, tenantId, id);
  if (project.status === "archived") {
    throw new SafeException<DemoErrorKey>("PROJECT_ALREADY_ARCHIVED", { details: { id } });
  }
  return store.setStatus(project, "archived");
}
