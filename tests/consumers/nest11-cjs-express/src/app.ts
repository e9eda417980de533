// A Nest 11 CommonJS app on Express using @saferoute/api-kit as an npm user would. Its routes
// and modules are ../shared/app.ts (copied in from tests/consumers/shared/ by run.ts).
import { NestFactory } from "@nestjs/core";
import type { NestExpressApplication } from "@nestjs/platform-express";
import { AppModule, serve } from "../shared/app.ts";

/** Boots the app on 127.0.0.1 (port 0 = any free port) with Swagger at /docs. */
export async function bootstrap(
  port = 0,
): Promise<{ app: NestExpressApplication; url: string }> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule, {
    logger: false,
  });
  return { app, url: await serve(app, port) };
}
