/**
 * `ProblemType`: the problem type URI of a route.
 *
 * @module
 */
import { applyDecorators, SetMetadata } from "@nestjs/common";
import { ApiExtension } from "@nestjs/swagger";
import { PROBLEM_TYPE_EXTENSION } from "./openapi/operation-marks.ts";
import { PROBLEM_TYPE_METADATA } from "./safe-response.constants.ts";

/**
 * Sets the problem-details `type` of errors thrown by the route's handler
 * (not of errors thrown by guards). Used when `problemDetails` is on. The
 * OpenAPI operation carries it as `x-safe-problem-type`.
 *
 * @example
 * ```ts
 * import { Controller, Get } from "@nestjs/common";
 * import { ProblemType } from "@saferoute/api-kit/safe-response/nest";
 *
 * @Controller("payments")
 * class PaymentsController {
 *   @Get()
 *   @ProblemType("https://api.example.com/problems/payment")
 *   list() {
 *     return [];
 *   }
 * }
 * ```
 */
export function ProblemType(typeUri: string): MethodDecorator & ClassDecorator {
  if (typeof typeUri !== "string" || typeUri === "" || /\s/.test(typeUri)) {
    throw new TypeError("ProblemType: `typeUri` must be a URI");
  }
  return applyDecorators(
    SetMetadata(PROBLEM_TYPE_METADATA, typeUri),
    ApiExtension(PROBLEM_TYPE_EXTENSION, typeUri),
  );
}
