/**
 * The demo's root module: both components wired together. API keys (with
 * the demo's client-IP resolver and expiry notices logged), the safe-response envelope (options from
 * `safe_response_options.ts`: request ids, response time, rate-limit meta,
 * error catalog, API version, global errors), `@nestjs/throttler` (tracked per
 * API key), the library's admin routes (`admin/admin_routes.ts`, with usage
 * recorded), the
 * resource controllers (bodies and queries validated per parameter, see
 * `validation.ts`), and the web page.
 *
 * @module
 */
import { type DynamicModule, Module, UseGuards } from "@nestjs/common";
import { ApiSecurity, ApiTags } from "@nestjs/swagger";
import { ThrottlerModule } from "@nestjs/throttler";
import type { ApiKeyStorage } from "../api_keys/mod.ts";
import {
  ApiKeysGuard,
  ApiKeysModule,
  getApiKeyContext,
  RequireScope,
} from "../api_keys/nest/mod.ts";
import { createApiKeysAdminController } from "../api_keys/nest/api_keys.admin.ts";
import { SafeResponseModule, type SafeResponseModuleOptions } from "../safe_response/nest/mod.ts";
import { DEMO_ADMIN_PREFIX, DEMO_USAGE, demoAdminOptions } from "./admin/admin_routes.ts";
import { ApiKeyThrottlerGuard } from "./api_key_throttler.guard.ts";
import { demoClientIpResolver } from "./client_ip.ts";
import {
  createDemoKeyLimiter,
  DEFAULT_RATE_LIMIT,
  RATE_LIMIT_MESSAGE,
  RATE_LIMIT_WINDOW_MS,
} from "./limits.ts";
import { DEMO_EXPIRY_NOTICES, keyEventLogger } from "./key_events.ts";
import { PageController } from "./page.controller.ts";
import type { PageAssets } from "./page_assets.ts";
import type { PageSession } from "./page_session.ts";
import type { DemoPeppers } from "./peppers.ts";
import { FeedController } from "./resources/feed.controller.ts";
import { LegacyProjectsController } from "./resources/legacy_projects.controller.ts";
import { PingController } from "./resources/ping.controller.ts";
import { ProjectsController } from "./resources/projects.controller.ts";
import { ProjectsStore } from "./resources/projects.store.ts";
import { WhoAmIController } from "./resources/whoami.controller.ts";
import {
  DEMO_KEY_STORAGE,
  DEMO_LEAK_REPORT_LIMITER,
  DEMO_PAGE_ASSETS,
  DEMO_PAGE_SESSION,
} from "./tokens.ts";
import { DEMO_SECRET_SCANNING_KEYS, LeakedKeysController } from "./leaks/leaked_keys.controller.ts";
import { LeakReportLimitGuard } from "./leaks/leak_report_limit.guard.ts";
import { createLeakReportLimiter, type LeakReportLimits } from "./leaks/report_limits.ts";
import type { SecretScanningPublicKey } from "../api_keys/mod.ts";

/** What the demo module is built from. */
export interface DemoAppOptions {
  /** Key storage (in memory or PostgreSQL). */
  storage: ApiKeyStorage;
  /** Peppers by version. */
  peppers: DemoPeppers;
  /** Options of `SafeResponseModule` (see `demoSafeResponseOptions`). */
  safeResponse: SafeResponseModuleOptions;
  /** The web page's files. */
  pageAssets: PageAssets;
  /** The page's session, filled once the keys are seeded. */
  pageSession: PageSession;
  /** Keys the secret-scanning partner route trusts (default none: every report is 401). */
  secretScanningKeys?: readonly SecretScanningPublicKey[];
  /** Limits of the public leak-report route (default `LEAK_REPORT_LIMITS`). */
  leakReportLimits?: LeakReportLimits;
  /** Where key lifecycle lines go (expiry notices, rotations; see `key_events.ts`); none without. */
  log?: (line: string) => void;
}

/** The library's admin routes at `/admin`, behind the key check and the per-key throttler. */
const AdminKeysController = createApiKeysAdminController({
  path: DEMO_ADMIN_PREFIX.slice(1),
  decorators: [
    ApiTags("admin"),
    ApiSecurity("api-key"),
    UseGuards(ApiKeysGuard, ApiKeyThrottlerGuard),
    RequireScope("keys", "write"),
  ],
  ...demoAdminOptions(getApiKeyContext),
});

/** Root module of the demo. */
@Module({})
export class DemoAppModule {
  /** Builds the module for `options`. */
  static forRoot(options: DemoAppOptions): DynamicModule {
    return {
      module: DemoAppModule,
      imports: [
        ApiKeysModule.forRoot({
          peppers: options.peppers,
          storage: options.storage,
          clientIpResolver: demoClientIpResolver,
          onEvent: options.log === undefined ? undefined : keyEventLogger(options.log),
          expiryNotices: DEMO_EXPIRY_NOTICES,
          limiter: createDemoKeyLimiter(options.log),
          usage: DEMO_USAGE,
        }),
        SafeResponseModule.register(options.safeResponse),
        ThrottlerModule.forRoot({
          throttlers: [{ name: "default", ttl: RATE_LIMIT_WINDOW_MS, limit: DEFAULT_RATE_LIMIT }],
          errorMessage: RATE_LIMIT_MESSAGE,
        }),
      ],
      controllers: [
        PageController,
        AdminKeysController,
        ProjectsController,
        LegacyProjectsController,
        FeedController,
        WhoAmIController,
        PingController,
        LeakedKeysController,
      ],
      providers: [
        { provide: DEMO_KEY_STORAGE, useValue: options.storage },
        { provide: DEMO_PAGE_ASSETS, useValue: options.pageAssets },
        { provide: DEMO_PAGE_SESSION, useValue: options.pageSession },
        { provide: DEMO_SECRET_SCANNING_KEYS, useValue: options.secretScanningKeys ?? [] },
        {
          provide: DEMO_LEAK_REPORT_LIMITER,
          useValue: createLeakReportLimiter(options.leakReportLimits),
        },
        LeakReportLimitGuard,
        ApiKeyThrottlerGuard,
        ProjectsStore,
      ],
    };
  }
}
