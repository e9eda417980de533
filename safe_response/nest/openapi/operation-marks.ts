/**
 * Marks left on OpenAPI operations by `Deprecated`, `SkipGlobalErrors` and
 * `ProblemType`.
 *
 * @module
 */
import { DECORATORS } from "@nestjs/swagger";
import { routeHandlersOf } from "../route-handlers.ts";

/**
 * Vendor extension set to `true` on operations of `SkipGlobalErrors` routes;
 * `applyGlobalErrors` leaves them alone.
 *
 * @example
 * ```ts
 * import { SKIP_GLOBAL_ERRORS_EXTENSION } from "@saferoute/api-kit/safe-response/nest";
 * SKIP_GLOBAL_ERRORS_EXTENSION; // "x-safe-skip-global-errors"
 * ```
 */
export const SKIP_GLOBAL_ERRORS_EXTENSION = "x-safe-skip-global-errors";

/**
 * Vendor extension holding the `ProblemType` URI of an operation (the `type`
 * of problem details thrown by its handler).
 *
 * @example
 * ```ts
 * import { PROBLEM_TYPE_EXTENSION } from "@saferoute/api-kit/safe-response/nest";
 * PROBLEM_TYPE_EXTENSION; // "x-safe-problem-type"
 * ```
 */
export const PROBLEM_TYPE_EXTENSION = "x-safe-problem-type";

function markDeprecated(handler: object): void {
  const operation = Reflect.getMetadata(DECORATORS.API_OPERATION, handler);
  Reflect.defineMetadata(DECORATORS.API_OPERATION, { ...operation, deprecated: true }, handler);
}

/**
 * Sets `deprecated: true` on the operation of the route, or of every route of
 * a controller, keeping its other `@ApiOperation` fields (in any decorator
 * order).
 */
export function ApiDeprecatedOperation(): MethodDecorator & ClassDecorator {
  return (target: object, _key?: string | symbol, descriptor?: PropertyDescriptor) => {
    if (descriptor !== undefined) {
      markDeprecated(descriptor.value);
      return;
    }
    for (const handler of routeHandlersOf(target)) markDeprecated(handler);
  };
}
