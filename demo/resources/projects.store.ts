/**
 * In-memory projects per tenant: 42 generated ones to page through, plus
 * those created over HTTP. Lives as long as the process.
 *
 * @module
 */
import type { Project, ProjectStatus } from "./project.ts";

/** Projects every tenant starts with. */
export const SEEDED_PROJECT_COUNT = 42;

const NAMES = [
  "Atlas",
  "Borealis",
  "Cobalt",
  "Dynamo",
  "Ember",
  "Fjord",
  "Granite",
  "Hydra",
  "Ion",
  "Juniper",
  "Kestrel",
  "Lumen",
  "Meridian",
  "Nimbus",
];

function seededProjects(): Project[] {
  const start = Date.UTC(2025, 0, 1);
  return Array.from({ length: SEEDED_PROJECT_COUNT }, (_, i) => ({
    id: `prj_${String(i + 1).padStart(3, "0")}`,
    name: `Project ${NAMES[(i * 5) % NAMES.length]} ${Math.floor(i / NAMES.length) + 1}`,
    status: i % 3 === 2 ? "archived" : "active",
    createdAt: new Date(start + i * 86_400_000).toISOString(),
  }));
}

/** The projects of each tenant (no dependencies: Nest builds it without `@Injectable`). */
export class ProjectsStore {
  readonly #byTenant = new Map<string, Project[]>();

  /** All projects of `tenantId`, in creation order (a copy). */
  all(tenantId: string): Project[] {
    return [...this.#projects(tenantId)];
  }

  /** One project, or undefined. */
  find(tenantId: string, id: string): Project | undefined {
    return this.#projects(tenantId).find((project) => project.id === id);
  }

  /** Sets the status of a stored project and returns it. */
  setStatus(project: Project, status: ProjectStatus): Project {
    project.status = status;
    return project;
  }

  /** Adds a project and returns it. */
  add(tenantId: string, name: string, status: ProjectStatus): Project {
    const projects = this.#projects(tenantId);
    const project: Project = {
      id: `prj_${String(projects.length + 1).padStart(3, "0")}`,
      name,
      status,
      createdAt: new Date().toISOString(),
    };
    projects.push(project);
    return project;
  }

  #projects(tenantId: string): Project[] {
    let projects = this.#byTenant.get(tenantId);
    if (projects === undefined) {
      projects = seededProjects();
      this.#byTenant.set(tenantId, projects);
    }
    return projects;
  }
}
