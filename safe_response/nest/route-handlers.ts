/**
 * The route handlers a controller class declares, for decorators that apply
 * to every route of a controller.
 *
 * @module
 */
import { NEST_METHOD_METADATA } from "./safe-response.constants.ts";

/**
 * The route handlers (methods with a Nest request-method decorator) declared
 * by the class `controller` itself. A class decorator runs after its methods'
 * decorators, so every route is already marked.
 */
export function routeHandlersOf(controller: object): object[] {
  const prototype = (controller as { prototype: object }).prototype;
  const handlers: object[] = [];
  for (const name of Object.getOwnPropertyNames(prototype)) {
    const handler = Object.getOwnPropertyDescriptor(prototype, name)?.value;
    if (typeof handler === "function" && Reflect.hasMetadata(NEST_METHOD_METADATA, handler)) {
      handlers.push(handler);
    }
  }
  return handlers;
}
