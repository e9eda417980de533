/**
 * The OpenTelemetry bridge through real apps over HTTP (a Fetch app, a Nest
 * app on Express and on Fastify): one scripted sequence of requests, then each
 * instrument's value, the attribute sets (bounded) and no secret in any
 * exported metric or span.
 */
import "reflect-metadata";
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { isDeepStrictEqual } from "node:util";
import {
  Controller,
  Get,
  Inject,
  Injectable,
  Module,
  type OnModuleDestroy,
  type OnModuleInit,
  UseGuards,
} from "@nestjs/common";
import type { DataPoint, MetricReader, ResourceMetrics } from "@opentelemetry/sdk-metrics";
import { instrumentTelemetry, type Telemetry, type TelemetryOptions } from "../../telemetry/mod.ts";
import { ApiKeysService } from "../../api_keys/service.ts";
import { InMemoryApiKeyStorage } from "../../api_keys/storage/in_memory.ts";
import { createApiKeyAuthorizer } from "../../api_keys/fetch/api_keys.authorizer.ts";
import { ApiKeysModule } from "../../api_keys/nest/api_keys.module.ts";
import { ApiKeysGuard } from "../../api_keys/nest/api_keys.guard.ts";
import { createSafeFetch } from "../../safe_response/fetch/mod.ts";
import { defineErrors, SafeException } from "../../safe_response/mod.ts";
import { SafeResponseModule } from "../../safe_response/nest/safe_response.module.ts";
import { Responder } from "../../safe_response/responder.ts";
import { createMemoryRateLimitStore, createRateLimiter } from "../../rate_limits/mod.ts";
import type { RateLimiter } from "../../rate_limits/limiter.ts";
import { PEPPER_1, READ_ORDERS } from "../api_keys/helpers.ts";
import { serve } from "../scenarios/_serve.ts";
import { boot, PLATFORMS } from "../api_keys/nest/test_app.ts";
import { setup } from "./_sdk.ts";
import { eventually } from "../eventually.ts";

const TENANT = "tenant-telemetry-apps";
const BOOM = "a handler's own failure";
const Errors = defineErrors({ ITEM_BAD: { status: 400, message: "Bad item" } });
/** A body that cannot be serialised (a BigInt): the reply written instead is a 500. */
const unserialisable = () => ({ id: 1n });
/** An error whose details cannot be serialised: a 400 replaced by the 500 written. */
const badDetails = () => {
  throw new SafeException("ITEM_BAD", { details: { id: 1n } });
};

/** A running app under test: its base URL, its service, how it stops. */
interface App {
  base: string;
  service: ApiKeysService;
  close(): Promise<void>;
}

/** Instruments what an app hands over (the test's providers and limiter added). */
type Instrument = (targets: Pick<TelemetryOptions, "service" | "responder">) => Telemetry;

/** The limiter every app uses: in memory, a fixed clock. */
function newLimiter(): RateLimiter {
  return createRateLimiter({
    logger: () => {},
    store: createMemoryRateLimitStore({ now: () => Date.UTC(2030, 0, 1) }),
  });
}

/** A Fetch app: the authorizer in front of safe routes, errors as envelopes. */
async function fetchApp(limiter: RateLimiter, instrument: Instrument): Promise<App> {
  const service = new ApiKeysService({
    peppers: { 1: PEPPER_1 },
    storage: new InMemoryApiKeyStorage(),
    limiter,
  });
  // The handler's throw is logged once; kept quiet here.
  const safe = createSafeFetch({
    logger: { warn: () => {}, error: () => {} },
    errorCatalog: Errors,
  });
  const authorize = createApiKeyAuthorizer(service, { onError: safe.errorResponse });
  const orders = authorize.protect(safe.route({}, () => ({ orders: [] })));
  const boom = authorize.protect(safe.route({}, () => {
    throw new Error(BOOM);
  }));
  const routes: Record<string, (request: Request) => Promise<Response>> = {
    "/boom": boom,
    "/unserialisable": authorize.protect(safe.route({}, unserialisable)),
    "/bad-details": authorize.protect(safe.route({}, badDetails)),
  };
  const server = await serve((request) =>
    (routes[new URL(request.url).pathname] ?? orders)(request)
  );
  // The Fetch binding hands its responder over as `safe` (it holds one as `responder`).
  const telemetry = instrument({ service, responder: safe });
  return {
    base: server.url,
    service,
    close: () => {
      telemetry.close();
      return server.close();
    },
  };
}

@Controller()
@UseGuards(ApiKeysGuard)
class TelemetryController {
  @Get("orders")
  orders() {
    return { orders: [] };
  }

  @Get("boom")
  boom() {
    throw new Error(BOOM);
  }

  @Get("unserialisable")
  unserialisable() {
    return unserialisable();
  }

  @Get("bad-details")
  badDetails() {
    return badDetails();
  }
}

/**
 * A Nest app on `platform`: `ApiKeysModule` and `SafeResponseModule`, instrumented by a provider
 * of its own the public way (docs/telemetry.md "Nest"): `ApiKeysService` and `Responder` injected
 * by their classes, closed when the app closes.
 */
async function nestApp(
  limiter: RateLimiter,
  platform: "express" | "fastify",
  instrument: Instrument,
): Promise<App> {
  @Injectable()
  class ApiKitTelemetry implements OnModuleInit, OnModuleDestroy {
    #telemetry?: Telemetry;
    constructor(
      @Inject(ApiKeysService) private readonly service: ApiKeysService,
      @Inject(Responder) private readonly responder: Responder,
    ) {}
    onModuleInit() {
      this.#telemetry = instrument({ service: this.service, responder: this.responder });
    }
    onModuleDestroy() {
      this.#telemetry?.close();
    }
  }

  @Module({
    imports: [
      ApiKeysModule.forRoot({
        peppers: { 1: PEPPER_1 },
        storage: new InMemoryApiKeyStorage(),
        limiter,
      }),
      SafeResponseModule.register({ errorCatalog: Errors }),
    ],
    controllers: [TelemetryController],
    providers: [ApiKitTelemetry],
  })
  class TelemetryAppModule {}
  const running = await boot(TelemetryAppModule, platform);
  const base = running.app.getHttpServer().address() as { port: number };
  return {
    base: `http://127.0.0.1:${base.port}`,
    service: running.service,
    close: () => running.close(),
  };
}

interface Point {
  name: string;
  attributes: Record<string, unknown>;
  value: number;
}

async function points(reader: MetricReader): Promise<Point[]> {
  const { resourceMetrics } = await reader.collect() as { resourceMetrics: ResourceMetrics };
  return resourceMetrics.scopeMetrics.flatMap((scope) =>
    scope.metrics.flatMap((metric) =>
      (metric.dataPoints as DataPoint<unknown>[]).map((point) => {
        const v = point.value as number | { count: number };
        return {
          name: metric.descriptor.name,
          attributes: { ...point.attributes },
          value: typeof v === "number" ? v : v.count,
        };
      })
    )
  );
}

/** `name`'s points as `attribute values → value`, e.g. `"success|live" → 3`. */
function series(all: Point[], name: string): Record<string, number> {
  return Object.fromEntries(
    all.filter((p) => p.name === name).map((p) => [
      Object.keys(p.attributes).sort().map((k) => p.attributes[k]).join("|"),
      p.value,
    ]),
  );
}

/** Every attribute name the bridge may use (docs/telemetry.md). */
const ATTRIBUTES = new Set([
  "api_key.outcome",
  "api_key.environment",
  "api_key.cache.result",
  "api_key.usage.outcome",
  "rate_limit.outcome",
  "rate_limit.result",
  "rate_limit.store.name",
  "rate_limit.reason",
  "rate_limit.on_store_error",
  "rate_limit.store.checks",
  "api_key.usage.rows",
  "safe_response.status_class",
]);

const TARGETS = [
  { name: "Fetch", build: fetchApp },
  ...PLATFORMS.map((platform) => ({
    name: `Nest on ${platform}`,
    build: (limiter: RateLimiter, instrument: Instrument) => nestApp(limiter, platform, instrument),
  })),
];

for (const target of TARGETS) {
  describe(`telemetry through a ${target.name} app`, () => {
    const { reader, meterProvider, exporter, tracerProvider } = setup();
    let app: App;
    let instrumented = 0;
    const secrets: string[] = [PEPPER_1];
    const identities: string[] = [TENANT, "127.0.0.1"];

    before(async () => {
      const limiter = newLimiter();
      app = await target.build(limiter, (targets) => {
        instrumented++;
        return instrumentTelemetry({ meterProvider, tracerProvider, limiter, ...targets });
      });
    });
    after(() => app?.close());

    const get = (path: string, key?: string) =>
      fetch(app.base + path, { headers: key === undefined ? {} : { "x-api-key": key } })
        .then(async (response) => ({ status: response.status, body: await response.text() }));

    it("counts a scripted sequence; bounded attributes; no secret in any metric or span", async () => {
      assert.equal(instrumented, 1, "the app instruments itself once");
      const valid = await app.service.create({ tenantId: TENANT, name: "ok", scopes: READ_ORDERS });
      const limited = await app.service.create({
        tenantId: TENANT,
        name: "limited",
        scopes: READ_ORDERS,
        rateLimits: [{ name: "burst", limit: 1, windowMs: 60_000 }],
      });
      for (const created of [valid, limited]) {
        // The raw key, and each of its long parts (the prefix, the secret).
        secrets.push(created.key, ...created.key.split("_").filter((part) => part.length >= 8));
        identities.push(created.id);
      }
      const wrong = valid.key.slice(0, -4) + (valid.key.endsWith("AAAA") ? "BBBB" : "AAAA");
      secrets.push(wrong);

      assert.equal((await get("/orders", valid.key)).status, 200);
      assert.equal((await get("/orders")).status, 401);
      assert.equal((await get("/orders", wrong)).status, 401);
      assert.equal((await get("/orders", limited.key)).status, 200);
      assert.equal((await get("/orders", limited.key)).status, 429);
      const boom = await get("/boom", valid.key);
      assert.equal(boom.status, 500);
      assert.ok(!boom.body.includes(BOOM), "the envelope hides the handler's error");
      // One request, one count: the 500 written, not also the 2xx or 4xx first built.
      assert.equal((await get("/unserialisable", valid.key)).status, 500);
      assert.equal((await get("/bad-details", valid.key)).status, 500);

      // Nest counts a response as it closes, which may come after the client read it.
      const responses = { "2xx": 2, "4xx": 3, "5xx": 3 };
      await eventually(async () => {
        const counted = series(await points(reader), "safe_response.responses");
        return isDeepStrictEqual(counted, responses);
      }, "each response counted once");
      const all = await points(reader);
      assert.deepEqual(series(all, "api_key.authorizations"), {
        "live|success": 5,
        "unknown|missing": 1,
        "unknown|credential_rejected": 1, // an unverified key claims no environment
        "live|rate_limited": 1,
      });
      assert.deepEqual(series(all, "safe_response.responses"), responses);
      // Only the limited key is checked (a key without limits skips the limiter).
      assert.deepEqual(series(all, "rate_limit.checks"), {
        "store|allowed": 1,
        "store|refused": 1,
      });
      // The in-process memory store answers without a store call (docs/telemetry.md).
      assert.deepEqual(series(all, "rate_limit.store.duration"), {});
      // Each key misses once then hits; the wrong key is refused before any lookup.
      assert.deepEqual(series(all, "api_key.cache.lookups"), { hit: 4, miss: 2 });

      const spans = exporter.getFinishedSpans();
      assert.ok(spans.some((s) => s.name === "rate_limit.check"));
      assert.ok(spans.some((s) => s.name === "api_key.storage.lookup"));

      for (const point of all) {
        for (const [name, value] of Object.entries(point.attributes)) {
          assert.ok(ATTRIBUTES.has(name), `${point.name}: unexpected attribute ${name}`);
          assert.ok(!identities.includes(String(value)), `${point.name}: ${name}=${value}`);
        }
      }
      for (const span of spans) {
        for (const name of Object.keys(span.attributes)) {
          assert.ok(ATTRIBUTES.has(name), `${span.name}: unexpected attribute ${name}`);
        }
      }
      const exported = JSON.stringify({
        all,
        spans: spans.map((s) => ({
          name: s.name,
          attributes: s.attributes,
          events: s.events,
          links: s.links,
          status: s.status,
        })),
      });
      for (const secret of secrets) {
        assert.ok(!exported.includes(secret), "a secret in an exported datum");
      }
      for (const identity of identities.slice(0, 1).concat(identities.slice(2))) {
        assert.ok(!exported.includes(identity), `an identity in an exported datum: ${identity}`);
      }
    });
  });
}
