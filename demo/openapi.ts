/**
 * The OpenAPI document of the demo, served as Swagger UI at `/docs` and as
 * JSON at `/openapi.json`. Routes document their success envelopes with the
 * library's `Api*SafeResponse` decorators, the admin routes with
 * `applyApiKeysAdminRoutes`; the global error responses of the
 * safe-response options (`swagger.globalErrors`) are added to every route by
 * `applyGlobalErrors`, in the format the server sends (envelope or problem
 * details).
 *
 * @module
 */
import type { INestApplication } from "@nestjs/common";
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from "@nestjs/swagger";
import type { SafeResponseModuleOptions } from "../safe_response/nest/mod.ts";
import { applyApiKeysAdminRoutes, applyGlobalErrors } from "../safe_response/openapi/mod.ts";
import { DEMO_ADMIN_PREFIX } from "./admin/admin_routes.ts";

/**
 * Builds the document from the app's controllers and decorators, plus the
 * global errors of `options` (the options `SafeResponseModule` was registered with).
 */
export function buildOpenApiDocument(
  app: INestApplication,
  options: SafeResponseModuleOptions,
): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle("SafeRoute API kit demo")
    .setDescription(
      "API keys and the safe-response envelope working together. Send a key in `X-API-Key` " +
        "(or `Authorization: Bearer`).",
    )
    .setVersion("0.1.0")
    .addApiKey({ type: "apiKey", in: "header", name: "X-API-Key" }, "api-key")
    .build();
  const document = applyApiKeysAdminRoutes(SwaggerModule.createDocument(app, config), {
    prefix: DEMO_ADMIN_PREFIX,
    tags: ["admin"],
    security: [{ "api-key": [] }],
    problemDetails: options.problemDetails,
  });
  return applyGlobalErrors(document, options);
}

/** Mounts Swagger UI at `/docs` and the JSON document at `/openapi.json`. */
export function setupOpenApi(
  app: INestApplication,
  options: SafeResponseModuleOptions,
): OpenAPIObject {
  const document = buildOpenApiDocument(app, options);
  SwaggerModule.setup("docs", app, document, {
    jsonDocumentUrl: "openapi.json",
    raw: ["json"],
    customSiteTitle: "SafeRoute API kit demo",
  });
  return document;
}
