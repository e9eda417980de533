/**
 * `safeValidationExceptionFactory`: the `exceptionFactory` of Nest's
 * `ValidationPipe` that keeps class-validator's property paths, so the
 * module option `validationDetails: "fields"` can send
 * `[{ pointer, messages }]`.
 *
 * @module
 */
import { BadRequestException } from "@nestjs/common";
import {
  attachValidationFields,
  describeValidationErrors,
  type ValidationErrorLike,
} from "../validation_details.ts";

/**
 * An `exceptionFactory` for `new ValidationPipe({ exceptionFactory })`
 * (class-validator's errors in, the exception to throw out). It returns what
 * Nest's own factory returns (a `BadRequestException` whose body
 * `message` is the flat list, `address.zip must be a string`), so the
 * default `validationDetails: "messages"` sends the same `details` as
 * before; it also keeps each failing property's path, so with
 * `validationDetails: "fields"` `details` is
 * `[{ pointer: "/address/zip", messages: ["zip must be a string"] }]`
 * (RFC 6901 JSON Pointers; at most 50 entries of at most 500 characters).
 * Only property paths and constraint messages are read: the input values of
 * the errors (`value`, `target`) never reach the response. Write constraint
 * messages without `$value` to keep them out of the messages too.
 * @example
 * ```ts
 * import { Module, ValidationPipe } from "@nestjs/common";
 * import { APP_PIPE } from "@nestjs/core";
 * import {
 *   SafeResponseModule,
 *   safeValidationExceptionFactory,
 * } from "@saferoute/api-kit/safe-response/nest";
 * @Module({
 *   imports: [SafeResponseModule.register({ validationDetails: "fields" })],
 *   providers: [{
 *     provide: APP_PIPE,
 *     useValue: new ValidationPipe({ exceptionFactory: safeValidationExceptionFactory }),
 *   }],
 * })
 * class AppModule {}
 * ```
 */
export function safeValidationExceptionFactory(errors: readonly ValidationErrorLike[]): Error {
  const { messages, fields } = describeValidationErrors(errors);
  return attachValidationFields(new BadRequestException(messages), fields);
}
