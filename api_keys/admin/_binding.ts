/**
 * What the Fetch and Nest bindings share of mapping a request onto the
 * routes: the method they answer it as, and the path of its decoded segments.
 *
 * @module
 */

/** The method the routes answer `method` as: `HEAD` as `GET` (the binding sends no body). */
export function routeMethod(method: string): string {
  return method === "HEAD" ? "GET" : method;
}

/**
 * The routes' path of percent-decoded `segments` (a `:id` as Express and
 * Fastify decode it), or `undefined` (no route) when one holds a `/`: an
 * escaped `/` in a key id never reaches another route (`keys/<id>%2Fusage`).
 */
export function pathOfSegments(segments: readonly string[]): string | undefined {
  return segments.some((segment) => segment.includes("/")) ? undefined : segments.join("/");
}
