/**
 * `ResponseMessage`: sets `meta.message`.
 *
 * @module
 */
import { SetMetadata } from "@nestjs/common";
import { RESPONSE_MESSAGE_METADATA } from "./safe-response.constants.ts";

/**
 * Sets `meta.message` of the route's success envelopes. With `i18n` on, the
 * message is a translation key, translated in the request's language.
 *
 * @example
 * ```ts
 * import { Controller, Post } from "@nestjs/common";
 * import { ResponseMessage } from "@saferoute/api-kit/safe-response/nest";
 *
 * @Controller("users")
 * class UsersController {
 *   @Post()
 *   @ResponseMessage("User created")
 *   create() {
 *     return { id: "u1" };
 *   }
 * }
 * ```
 */
export function ResponseMessage(message: string): MethodDecorator & ClassDecorator {
  if (typeof message !== "string" || message === "") {
    throw new TypeError("ResponseMessage: `message` must be a non-empty string");
  }
  return SetMetadata(RESPONSE_MESSAGE_METADATA, message);
}
