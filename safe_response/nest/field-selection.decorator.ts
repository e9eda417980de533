/**
 * `FieldSelection`: partial responses selected by a query parameter.
 *
 * @module
 */
import { SetMetadata } from "@nestjs/common";
import { type FieldSelectionOptions, resolveFieldSelection } from "../field_selection.ts";
import { FIELD_SELECTION_METADATA } from "./safe-response.constants.ts";

/**
 * Turns field selection on for a route or controller (`?fields=id,address.city`
 * keeps only those fields of `data`, of each item on paginated routes, and
 * lists them in `meta.fields`), or off with `false`. Wins over the module
 * option `fieldSelection`; options not given here come from the module
 * option, else the defaults (`queryParam` `fields`, `separator` `,`,
 * `maxDepth` 3).
 *
 * @example
 * ```ts
 * import { Controller, Get } from "@nestjs/common";
 * import { FieldSelection } from "@saferoute/api-kit/safe-response/nest";
 *
 * @Controller("users")
 * class UsersController {
 *   @Get(":id")
 *   @FieldSelection({ maxDepth: 2 })
 *   get() {
 *     return { id: "u1", name: "Ada", address: { city: "London", zip: "N1" } };
 *   }
 *
 *   @Get(":id/raw")
 *   @FieldSelection(false)
 *   raw() {
 *     return { id: "u1" };
 *   }
 * }
 * ```
 */
export function FieldSelection(
  options: FieldSelectionOptions | false = {},
): MethodDecorator & ClassDecorator {
  if (options !== false) resolveFieldSelection(options, "FieldSelection options"); // fail early
  return SetMetadata(FIELD_SELECTION_METADATA, options === false ? false : { ...options });
}
