// Every consumer app's entry: creates a Nest app of a module of the suite (../shared/, copied in
// by run.ts) on the platform the matrix gives the app (CONSUMER_ADAPTER, CONSUMER_ADAPTER_CLASS),
// as an npm user of @saferoute/api-kit would. The adapter is imported by name: each app installs
// only its own. The suite starts the app (and documents it where swagger is installed).
import process from "node:process";
import type { INestApplication, Type } from "@nestjs/common";
import { NestFactory } from "@nestjs/core";

/** Reads a variable run.ts sets for the app. */
function setting(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === "") throw new Error(`${name} is not set (see run.ts)`);
  return value;
}

/** Creates (does not start) a Nest app of `module` on the app's platform. */
export async function createApp(module: Type<unknown>): Promise<INestApplication> {
  const adapterPackage = setting("CONSUMER_ADAPTER");
  const adapterClass = setting("CONSUMER_ADAPTER_CLASS");
  const adapters = await import(adapterPackage);
  const Adapter = adapters[adapterClass] ?? adapters.default?.[adapterClass];
  if (typeof Adapter !== "function") throw new Error(`${adapterPackage} has no ${adapterClass}`);
  return await NestFactory.create(module, new Adapter(), { logger: false });
}
