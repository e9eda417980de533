/**
 * Marks requests whose handler phase began (the interceptor ran), so the
 * exception filter can tell handler errors from guard errors (docs/spec.md,
 * "Response-envelope errors", rule 3), find the route's plan (filters get no
 * handler from Nest) and compute the response time.
 *
 * @module
 */
import type { RoutePlan } from "./route-plan.ts";

/** What the interceptor records for the exception filter. */
export interface HandlerPhase {
  /** Monotonic start (`performance.now()`). */
  readonly start: number;
  /** The route's plan. */
  readonly plan: RoutePlan;
  /** `meta.apiVersion` of the request. */
  readonly apiVersion?: string;
}

const phases = new WeakMap<object, HandlerPhase>();

/** Records that the interceptor ran for `request`. */
export function markHandlerPhase(request: object, phase: HandlerPhase): void {
  phases.set(request, phase);
}

/** The handler phase of `request`, or `undefined` before it (guard errors). */
export function handlerPhase(request: object): HandlerPhase | undefined {
  return phases.get(request);
}

/** Elapsed milliseconds since `start`, rounded to 0.01 ms. */
export function elapsedSince(start: number): number {
  return Math.round((performance.now() - start) * 100) / 100;
}
