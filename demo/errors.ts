/**
 * The demo's error catalog: application errors defined once by key, given to
 * `SafeResponseModule` as `errorCatalog`, and thrown with
 * `new SafeException<DemoErrorKey>(key)`. The filter answers the catalog's
 * status and message, with the key as the error code; `ApiSafeCatalogErrors`
 * documents them.
 *
 * @module
 */
import { defineErrors, type ErrorKey } from "../safe_response/mod.ts";

/** Errors of the projects routes, by key. */
export const DemoErrors = defineErrors({
  PROJECT_NOT_FOUND: { status: 404, message: "No project with this id in this tenant" },
  PROJECT_ALREADY_ARCHIVED: {
    status: 409,
    message: "The project is already archived",
    details: { hint: "Only active projects can be archived" },
  },
});

/** A key of {@link DemoErrors}. */
export type DemoErrorKey = ErrorKey<typeof DemoErrors>;
