/** Shared fixtures of the Nest suites: real apps on 127.0.0.1 over Express or Fastify. */
import "reflect-metadata";
import {
  Controller,
  type DynamicModule,
  Get,
  type INestApplication,
  Logger,
  Module,
  Post,
  type Provider,
  Req,
  type Type,
  UseGuards,
} from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
import { FastifyAdapter } from "@nestjs/platform-fastify";
import type { ApiKeyContext, CreateApiKeyInput } from "../../../api_keys/types.ts";
import { InMemoryApiKeyStorage } from "../../../api_keys/storage/in_memory.ts";
import { ApiKeysService } from "../../../api_keys/service.ts";
import {
  CurrentApiKey,
  RequireEnvironment,
  RequireScope,
} from "../../../api_keys/nest/api_keys.decorators.ts";
import { ApiKeysGuard, getApiKeyContext } from "../../../api_keys/nest/api_keys.guard.ts";
import { createApiKeysAdminController } from "../../../api_keys/nest/api_keys.admin.ts";
import type { ApiKeysModuleOptions } from "../../../api_keys/nest/api_keys.module.ts";
import { closeApp } from "../../close_app.ts";

export const PEPPER = "test-pepper-0123456789abcdefghijklmnopqrstuvwxyz";

export type Platform = "express" | "fastify";
export const PLATFORMS: readonly Platform[] = ["express", "fastify"];

/** Options with the required fields filled in. */
export function moduleOptions(extra: Partial<ApiKeysModuleOptions> = {}): ApiKeysModuleOptions {
  return { peppers: { 1: PEPPER }, storage: new InMemoryApiKeyStorage(), ...extra };
}

/** Routes of every requirement kind; each returns what the handler can see of the key. */
@Controller()
@UseGuards(ApiKeysGuard)
export class KeyedController {
  @Get("open")
  // deno-lint-ignore no-explicit-any
  open(@CurrentApiKey() apiKey: ApiKeyContext | undefined, @Req() request: any) {
    return {
      current: apiKey ?? null,
      property: request.apiKey ?? null,
      auth: request.auth ?? null,
    };
  }

  @Get("orders")
  @RequireScope("orders", "read")
  readOrders() {
    return { ok: "read" };
  }

  @Post("orders")
  @RequireScope("orders", "write")
  writeOrders() {
    return { ok: "write" };
  }

  @Get("live")
  @RequireEnvironment("live")
  live() {
    return { ok: "live" };
  }

  @Get("live-orders")
  @RequireEnvironment("live")
  @RequireScope("orders", "write")
  liveOrders() {
    return { ok: "live-orders" };
  }
}

/** Class-level requirements, overridden by one method. */
@Controller("admin")
@UseGuards(ApiKeysGuard)
@RequireEnvironment("live")
@RequireScope("admin", "write")
export class AdminController {
  @Get()
  index() {
    return { ok: "admin" };
  }

  @Get("reports")
  @RequireScope("reports", "read")
  @RequireEnvironment("test")
  reports() {
    return { ok: "reports" };
  }
}

/**
 * The admin routes at `path` behind `ApiKeysGuard` and scope `keys:write` (tenant and caller from
 * the key), any action allowed, without CSRF checks.
 */
export function guardedAdminController(path: string): Type {
  return createApiKeysAdminController({
    path,
    decorators: [UseGuards(ApiKeysGuard), RequireScope("keys", "write")],
    scopes: ["projects:read"],
    tenantOf: (request) => getApiKeyContext(request)?.tenantId,
    callerKeyIdOf: (request) => getApiKeyContext(request)?.keyId,
    canManage: () => true,
    csrf: false,
  });
}

/** A root module importing `apiKeys` with the given controllers and providers. */
export function appModule(
  apiKeys: DynamicModule,
  controllers: Type[] = [KeyedController, AdminController],
  providers: Provider[] = [],
): Type {
  @Module({ imports: [apiKeys], controllers, providers })
  class AppModule {}
  return AppModule;
}

/** Trust-proxy setting: Express `trust proxy` value / Fastify `trustProxy` (a number: a hop count). */
export type TrustProxy = boolean | string | number;

/** A running app and a `fetch` helper bound to it. */
export interface RunningApp {
  app: INestApplication;
  service: ApiKeysService;
  request(
    path: string,
    init?: { method?: string; headers?: Record<string, string> },
  ): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }>;
  close(): Promise<void>;
}

/** Boots `module` on 127.0.0.1 with a random port; `configure` runs before listening. */
export async function boot(
  module: Type,
  platform: Platform,
  trustProxy?: TrustProxy,
  configure?: (app: INestApplication) => void,
): Promise<RunningApp> {
  const options = { logger: false as const, abortOnError: false };
  const app = platform === "express"
    ? await NestFactory.create(module, options)
    : await NestFactory.create(
      module,
      // Fastify 5's types leave out a number (a hop count), which the hop-count test passes anyway.
      new FastifyAdapter(trustProxy === undefined ? {} : { trustProxy: trustProxy as string }),
      options,
    );
  if (platform === "express" && trustProxy !== undefined) {
    app.getHttpAdapter().getInstance().set("trust proxy", trustProxy);
  }
  configure?.(app);
  await app.listen(0, "127.0.0.1");
  const { port } = app.getHttpServer().address() as { port: number };
  const base = `http://127.0.0.1:${port}`;
  return {
    app,
    service: app.get(ApiKeysService),
    async request(path, init = {}) {
      const response = await fetch(base + path, { method: init.method, headers: init.headers });
      const text = await response.text();
      return {
        status: response.status,
        body: text === "" ? {} : JSON.parse(text),
        headers: response.headers,
      };
    },
    close: () => closeApp(app),
  };
}

/** Creates a key with defaults for the fields a test does not care about. */
export async function issue(
  service: ApiKeysService,
  input: Partial<CreateApiKeyInput> = {},
): Promise<{ id: string; key: string }> {
  return await service.create({
    tenantId: "tenant-1",
    name: "test key",
    scopes: [{ resource: "orders", level: "read" }],
    environment: "test",
    ...input,
  });
}

/** `X-API-Key` header object. */
export function withKey(key: string, extra: Record<string, string> = {}): Record<string, string> {
  return { "x-api-key": key, ...extra };
}

/** The `ApiKeysModule` lines Nest's `Logger` warns while `run` runs. */
export async function moduleWarnings(run: () => Promise<void>): Promise<string[]> {
  const warned: string[] = [];
  const original = Logger.prototype.warn;
  Logger.prototype.warn = function (message: unknown) {
    if (String(message).includes("ApiKeysModule")) warned.push(String(message));
  };
  try {
    await run();
  } finally {
    Logger.prototype.warn = original;
  }
  return warned;
}
