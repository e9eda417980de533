// A Nest 12 ESM app on Fastify using @saferoute/api-kit as an npm user would. Its routes and
// modules are ../shared/app.ts (copied in from tests/consumers/shared/ by run.ts).
import { NestFactory } from "@nestjs/core";
import { FastifyAdapter, type NestFastifyApplication } from "@nestjs/platform-fastify";
import { AppModule, serve } from "../shared/app.ts";

/** Boots the app on 127.0.0.1 (port 0 = any free port) with Swagger at /docs. */
export async function bootstrap(
  port = 0,
): Promise<{ app: NestFastifyApplication; url: string }> {
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule,
    new FastifyAdapter(),
    {
      logger: false,
    },
  );
  return { app, url: await serve(app, port) };
}
