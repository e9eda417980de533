// Every consumer app's entry: boots the suite's AppModule (../shared/app.ts, copied in by run.ts)
// on the platform the matrix gives the app (CONSUMER_ADAPTER, CONSUMER_ADAPTER_CLASS), as an npm
// user of @saferoute/api-kit would. The adapter is imported by name: each app installs only its own.
import process from "node:process";
import type { INestApplication } from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
import { AppModule, serve } from "../shared/app.ts";

/** Reads a variable run.ts sets for the app. */
function setting(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === "") throw new Error(`${name} is not set (see run.ts)`);
  return value;
}

/** Boots the app on 127.0.0.1 (port 0 = any free port); returns it with its base URL. */
export async function bootstrap(port = 0): Promise<{ app: INestApplication; url: string }> {
  const adapterPackage = setting("CONSUMER_ADAPTER");
  const adapterClass = setting("CONSUMER_ADAPTER_CLASS");
  const adapters = await import(adapterPackage);
  const Adapter = adapters[adapterClass] ?? adapters.default?.[adapterClass];
  if (typeof Adapter !== "function") throw new Error(`${adapterPackage} has no ${adapterClass}`);
  const app = await NestFactory.create(AppModule, new Adapter(), { logger: false });
  return { app, url: await serve(app, port) };
}
