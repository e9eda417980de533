/**
 * The OpenAPI document of the demo, served as Swagger UI at `/docs` and as
 * JSON at `/openapi.json`.
 *
 * @module
 */
import type { INestApplication } from "@nestjs/common";
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from "@nestjs/swagger";

/** Builds the document from the app's controllers and decorators. */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle("SafeRoute API kit demo")
    .setDescription(
      "API keys and the safe-response envelope working together. Send a key in `X-API-Key` " +
        "(or `Authorization: Bearer`).",
    )
    .setVersion("0.1.0")
    .addApiKey({ type: "apiKey", in: "header", name: "X-API-Key" }, "api-key")
    .build();
  const document = SwaggerModule.createDocument(app, config);
  // Global error responses are added here, in one place, once `applyGlobalErrors` lands.
  return document;
}

/** Mounts Swagger UI at `/docs` and the JSON document at `/openapi.json`. */
export function setupOpenApi(app: INestApplication): OpenAPIObject {
  const document = buildOpenApiDocument(app);
  SwaggerModule.setup("docs", app, document, {
    jsonDocumentUrl: "openapi.json",
    raw: ["json"],
    customSiteTitle: "SafeRoute API kit demo",
  });
  return document;
}
