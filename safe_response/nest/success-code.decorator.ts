/**
 * `SuccessCode`: the success `code` of a route.
 *
 * @module
 */
import { SetMetadata } from "@nestjs/common";
import { SUCCESS_CODE_METADATA } from "./safe-response.constants.ts";

/**
 * Sets the success envelope's `code` (method level only); wins over the
 * `successCodeMapper` option.
 *
 * @example
 * ```ts
 * import { Controller, Post } from "@nestjs/common";
 * import { SuccessCode } from "@saferoute/api-kit/safe-response/nest";
 *
 * @Controller("orders")
 * class OrdersController {
 *   @Post()
 *   @SuccessCode("ORDER_PLACED")
 *   place() {
 *     return { id: "o1" };
 *   }
 * }
 * ```
 */
export function SuccessCode(code: string): MethodDecorator {
  if (typeof code !== "string" || code === "") {
    throw new TypeError("SuccessCode: `code` must be a non-empty string");
  }
  const setCode = SetMetadata(SUCCESS_CODE_METADATA, code);
  return (target, key, descriptor) => {
    if (descriptor === undefined) throw new TypeError("SuccessCode applies to methods only");
    setCode(target, key, descriptor);
  };
}
