import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  Controller,
  Get,
  type INestApplication,
  Injectable,
  Module,
  type Provider,
  Scope,
  type Type,
  UseGuards,
} from "@nestjs/common";
import { APP_GUARD, NestFactory, Reflector } from "@nestjs/core";
import { ApiKeysGuard } from "../../../api_keys/nest/api_keys.guard.ts";
import { ApiKeysModule } from "../../../api_keys/nest/api_keys.module.ts";
import {
  routeRequirementsOf,
  unguardedRoutesLine,
} from "../../../api_keys/nest/_route_requirements.ts";
import {
  RateLimit,
  RequireEnvironment,
  RequireScope,
  SkipApiKey,
} from "../../../api_keys/nest/api_keys.decorators.ts";
import {
  appModule,
  boot,
  issue,
  moduleOptions,
  moduleWarnings,
  type Platform,
  PLATFORMS,
  withKey,
} from "./test_app.ts";

/** A guard of the app's own, built on `ApiKeysGuard`. */
@Injectable()
class TenantGuard extends ApiKeysGuard {}

@Controller("orders")
class OrdersController {
  @Get()
  @RequireScope("orders", "write")
  list() {
    return { ok: "list" };
  }

  @Get("open")
  open() {
    return { ok: "open" };
  }

  @Get("public")
  @SkipApiKey()
  skipped() {
    return { ok: "public" };
  }
}

@Controller("live")
@RequireEnvironment("live")
class LiveController {
  @Get()
  index() {
    return { ok: "live" };
  }
}

@Controller("limited")
class LimitedController {
  @Get()
  @RateLimit(false)
  count() {
    return { ok: "limited" };
  }
}

class BaseReportsController {
  @Get()
  @RequireScope("reports", "read")
  reports() {
    return { ok: "reports" };
  }
}

@Controller("reports")
class ReportsController extends BaseReportsController {}

@Controller("class")
@UseGuards(ApiKeysGuard)
class ClassGuardedController {
  @Get()
  @RequireScope("orders", "write")
  list() {
    return { ok: "class" };
  }
}

@Controller("method")
class MethodGuardedController {
  @Get()
  @UseGuards(ApiKeysGuard)
  @RequireScope("orders", "write")
  list() {
    return { ok: "method" };
  }
}

@Controller("subclass")
@UseGuards(TenantGuard)
class SubclassGuardedController {
  @Get()
  @RequireEnvironment("live")
  index() {
    return { ok: "subclass" };
  }
}

@Controller("subclass-method")
class SubclassMethodGuardedController {
  @Get()
  @UseGuards(TenantGuard)
  @RateLimit(false)
  index() {
    return { ok: "subclass-method" };
  }
}

/** A public controller (`SkipApiKey` on the class) with methods of their own requirements. */
@Controller("ops")
@SkipApiKey()
class OpsController {
  @Get("health")
  health() {
    return { ok: "health" };
  }

  @Get("purge")
  @RequireScope("admin", "write")
  purge() {
    return { ok: "purge" };
  }

  @Get("live")
  @RequireEnvironment("live")
  live() {
    return { ok: "live" };
  }

  @Get("limited")
  @RateLimit(false)
  limited() {
    return { ok: "limited" };
  }
}

/** A subclass's own requirement under a parent controller's `SkipApiKey`. */
@Controller("audit")
@RequireScope("audit", "read")
class AuditController extends OpsController {}

/** The routes with requirements and no guard of their own, and the path of each. */
const UNGUARDED: [Type, string, string][] = [
  [OrdersController, "/orders", "OrdersController.list"],
  [LiveController, "/live", "LiveController.index"],
  [ReportsController, "/reports", "ReportsController.reports"],
];

/** The routes `@UseGuards` covers, on the class or the method, with the guard or a subclass. */
const GUARDED: [Type, string][] = [
  [ClassGuardedController, "/class"],
  [MethodGuardedController, "/method"],
  [SubclassGuardedController, "/subclass"],
  [SubclassMethodGuardedController, "/subclass-method"],
];

/**
 * Boots `module` (with `configure` before it listens), answers the status of a keyless GET of
 * each path, and returns them with the module's warnings.
 */
async function keylessStatuses(
  module: Type,
  paths: string[],
  { platform = "express", configure }: {
    platform?: Platform;
    configure?: (app: INestApplication) => void;
  } = {},
): Promise<{ warned: string[]; statuses: Record<string, number> }> {
  const statuses: Record<string, number> = {};
  const warned = await moduleWarnings(async () => {
    const running = await boot(module, platform, undefined, configure);
    try {
      for (const path of paths) statuses[path] = (await running.request(path)).status;
    } finally {
      await running.close();
    }
  });
  return { warned, statuses };
}

/** Every path answering `status`. */
function all(paths: string[], status: number): Record<string, number> {
  return Object.fromEntries(paths.map((path) => [path, status]));
}

describe("ApiKeysModule's check that ApiKeysGuard covers the routes with requirements", () => {
  for (const platform of ["express", "fastify"] as const) {
    it(`warns once at start-up, naming each route no ApiKeysGuard covers, and how to install it (${platform})`, async () => {
      const controllers = [
        ...UNGUARDED.map(([controller]) => controller),
        LimitedController,
        ...GUARDED.map(([c]) => c),
      ];
      const paths = [
        "/orders",
        "/orders/open",
        "/orders/public",
        "/limited",
        ...GUARDED.map(([, path]) => path),
      ];
      const { warned, statuses } = await keylessStatuses(
        appModule(ApiKeysModule.forRoot(moduleOptions()), controllers),
        paths,
        { platform },
      );
      // What the warning is about: requirements no guard enforces, served to anyone.
      assert.equal(statuses["/orders"], 200);
      for (const [, path] of GUARDED) assert.equal(statuses[path], 401, path);
      assert.equal(warned.length, 1, warned.join("\n"));
      const [line] = warned;
      assert.match(line, /3 routes/);
      for (const [, , name] of UNGUARDED) assert.ok(line.includes(name), `${name} in: ${line}`);
      // RateLimit(false) only turns counting off: it asks nothing of a key.
      assert.equal(statuses["/limited"], 200);
      assert.doesNotMatch(line, /OrdersController\.(open|skipped)|Guarded|LimitedController/);
      assert.match(line, /served without any key check/);
      assert.match(line, /\{ provide: APP_GUARD, useExisting: ApiKeysGuard \}/);
      assert.match(line, /@UseGuards\(ApiKeysGuard\)/);
    });
  }

  it("names at most 5 routes, then how many more", async () => {
    @Controller("many")
    @RequireScope("orders", "read")
    class ManyController {
      @Get("a")
      a() {}
      @Get("b")
      b() {}
      @Get("c")
      c() {}
      @Get("d")
      d() {}
      @Get("e")
      e() {}
      @Get("f")
      f() {}
      @Get("g")
      g() {}
    }
    const { warned } = await keylessStatuses(
      appModule(ApiKeysModule.forRoot(moduleOptions()), [ManyController]),
      [],
    );
    assert.equal(warned.length, 1, warned.join("\n"));
    assert.match(
      warned[0],
      /ManyController\.a, ManyController\.b, ManyController\.c, ManyController\.d, ManyController\.e and 2 more/,
    );
    assert.doesNotMatch(warned[0], /ManyController\.[fg]/);
  });

  /** Ways to install the guard for the whole app, each covering every route. */
  const GLOBAL: [string, Provider[], ((app: INestApplication) => void)?][] = [
    ["an APP_GUARD provider of ApiKeysGuard", [{ provide: APP_GUARD, useExisting: ApiKeysGuard }]],
    ["an APP_GUARD provider of a subclass", [{ provide: APP_GUARD, useClass: TenantGuard }]],
    [
      "a request-scoped APP_GUARD provider of a subclass",
      [{ provide: APP_GUARD, useClass: TenantGuard, scope: Scope.REQUEST }],
    ],
    ["app.useGlobalGuards", [], (app) => app.useGlobalGuards(app.get(ApiKeysGuard))],
  ];
  for (const [how, providers, configure] of GLOBAL) {
    it(`does not warn when ${how} covers every route`, async () => {
      const paths = UNGUARDED.map(([, path]) => path);
      const { warned, statuses } = await keylessStatuses(
        appModule(
          ApiKeysModule.forRoot(moduleOptions()),
          UNGUARDED.map(([controller]) => controller),
          providers,
        ),
        paths,
        { configure },
      );
      assert.deepEqual(statuses, all(paths, 401));
      assert.deepEqual(warned, []);
    });
  }

  it("counts an APP_GUARD provider of a feature module", async () => {
    @Module({ providers: [{ provide: APP_GUARD, useExisting: ApiKeysGuard }] })
    class GuardModule {}
    @Module({
      imports: [ApiKeysModule.forRoot(moduleOptions()), GuardModule],
      controllers: [OrdersController],
    })
    class RootModule {}
    const { warned, statuses } = await keylessStatuses(RootModule, ["/orders"]);
    assert.deepEqual(statuses, { "/orders": 401 });
    assert.deepEqual(warned, []);
  });

  it("does not warn when @UseGuards covers every route (class or method, guard or subclass)", async () => {
    const paths = GUARDED.map(([, path]) => path);
    const { warned, statuses } = await keylessStatuses(
      appModule(ApiKeysModule.forRoot(moduleOptions()), GUARDED.map(([controller]) => controller)),
      paths,
    );
    assert.deepEqual(statuses, all(paths, 401));
    assert.deepEqual(warned, []);
  });

  it("does not warn in an application context, which serves no route", async () => {
    const warned = await moduleWarnings(async () => {
      const context = await NestFactory.createApplicationContext(
        appModule(ApiKeysModule.forRoot(moduleOptions()), [OrdersController]),
        { logger: false, abortOnError: false },
      );
      await context.close();
    });
    assert.deepEqual(warned, []);
  });
});

describe("SkipApiKey on a controller yields to a requirement nearer the route (fail closed)", () => {
  for (const platform of PLATFORMS) {
    it(`a method's own RequireScope, RequireEnvironment or RateLimit needs a key under APP_GUARD (${platform})`, async () => {
      const running = await boot(
        appModule(
          ApiKeysModule.forRoot(moduleOptions()),
          [OpsController, AuditController],
          [{ provide: APP_GUARD, useExisting: ApiKeysGuard }],
        ),
        platform,
      );
      try {
        const keyless = async (path: string) => (await running.request(path)).status;
        assert.equal(await keyless("/ops/health"), 200);
        assert.equal(await keyless("/ops/limited"), 200); // RateLimit(false) asks nothing of a key
        for (const path of ["/ops/purge", "/ops/live", "/audit/health"]) {
          assert.equal(await keyless(path), 401, path);
        }
        const admin = await issue(running.service, {
          environment: "live",
          scopes: [{ resource: "admin", level: "write" }, { resource: "audit", level: "read" }],
        });
        const reader = await issue(running.service, { environment: "test" });
        const status = async (path: string, key: string) =>
          (await running.request(path, { headers: withKey(key) })).status;
        assert.equal(await status("/ops/purge", admin.key), 200);
        assert.equal(await status("/ops/purge", reader.key), 403);
        assert.equal(await status("/ops/live", admin.key), 200);
        assert.equal(await status("/ops/live", reader.key), 403);
        assert.equal(await status("/audit/health", admin.key), 200);
        assert.equal(await status("/audit/health", reader.key), 403);
      } finally {
        await running.close();
      }
    });
  }

  it("names those routes in the start-up warning when no guard covers them", async () => {
    const { warned, statuses } = await keylessStatuses(
      appModule(ApiKeysModule.forRoot(moduleOptions()), [OpsController]),
      ["/ops/health"],
    );
    assert.deepEqual(statuses, { "/ops/health": 200 });
    assert.equal(warned.length, 1, warned.join("\n"));
    assert.match(warned[0], /2 routes/);
    for (const name of ["OpsController.purge", "OpsController.live"]) {
      assert.ok(warned[0].includes(name), `${name} in: ${warned[0]}`);
    }
    assert.doesNotMatch(warned[0], /OpsController\.(health|limited)/);
  });
});

describe("routeRequirementsOf and unguardedRoutesLine", () => {
  it("merges a class's and a method's RateLimit field by field (the method's fields win), as Fetch's require does", () => {
    const own = [{ name: "export", limit: 2, windowMs: 3_600_000 }];
    @RateLimit(own)
    class Reports {
      @RateLimit(undefined, { cost: 1 })
      priced() {}
      @RateLimit("hourly")
      named() {}
      @RateLimit(false)
      uncounted() {}
      plain() {}
    }
    @RateLimit(undefined, { cost: 10 })
    class Priced {
      @RateLimit("hourly")
      named() {}
      @RateLimit(false)
      uncounted() {}
    }
    const reflector = new Reflector();
    const of = (type: Type, name: string) => {
      const route = routeRequirementsOf(reflector, type.prototype[name], type);
      const limits = route?.rateLimits;
      // A route's own policy as given (compiled, it carries its default cost too).
      return Array.isArray(limits) && typeof limits[0] === "object"
        ? { ...route, rateLimits: own }
        : route;
    };
    assert.deepEqual(of(Reports, "priced"), { rateLimits: own, cost: 1 });
    assert.deepEqual(of(Reports, "named"), { rateLimits: ["hourly"] });
    assert.deepEqual(of(Reports, "uncounted"), { rateLimits: false });
    assert.deepEqual(of(Reports, "plain"), { rateLimits: own });
    assert.deepEqual(of(Priced, "named"), { rateLimits: ["hourly"], cost: 10 });
    // A method that counts nothing drops its class's cost (never charged).
    assert.deepEqual(of(Priced, "uncounted"), { rateLimits: false });
    // A cost under a class that counts nothing is never charged: refused, naming the route.
    @RateLimit(false)
    class Quiet {
      @RateLimit(undefined, { cost: 5 })
      priced() {}
    }
    assert.throws(() => of(Quiet, "priced"), {
      name: "TypeError",
      message: /^RateLimit on Quiet\.priced: a cost with rateLimits false is never charged/,
    });
  });

  it("reads a route's requirements (none on a plain route, undefined under SkipApiKey)", () => {
    const reflector = new Reflector();
    const { prototype } = OrdersController;
    const scoped = routeRequirementsOf(reflector, prototype.list, OrdersController);
    assert.deepEqual(Object.keys(scoped ?? {}), ["requiredScope"]);
    assert.deepEqual(routeRequirementsOf(reflector, prototype.open, OrdersController), {});
    assert.equal(routeRequirementsOf(reflector, prototype.skipped, OrdersController), undefined);
  });

  it("lets a method's or a subclass's own requirement beat a controller's SkipApiKey", () => {
    const reflector = new Reflector();
    const { prototype } = OpsController;
    assert.equal(routeRequirementsOf(reflector, prototype.health, OpsController), undefined);
    assert.deepEqual(routeRequirementsOf(reflector, prototype.purge, OpsController), {
      requiredScope: { resource: "admin", level: "write" },
    });
    assert.deepEqual(routeRequirementsOf(reflector, prototype.live, OpsController), {
      requiredEnvironment: "live",
    });
    // RateLimit(false) asks nothing of a key, so the skip stays the nearest.
    assert.equal(routeRequirementsOf(reflector, prototype.limited, OpsController), undefined);
    assert.deepEqual(routeRequirementsOf(reflector, prototype.health, AuditController), {
      requiredScope: { resource: "audit", level: "read" },
    });
    // A subclass's own SkipApiKey still beats its parent's requirement.
    @SkipApiKey()
    class PublicAudit extends AuditController {}
    assert.equal(routeRequirementsOf(reflector, prototype.health, PublicAudit), undefined);
    // And a method's own SkipApiKey, its controller's requirements.
    assert.equal(
      routeRequirementsOf(reflector, OrdersController.prototype.skipped, LiveController),
      undefined,
    );
  });

  it("takes SkipApiKey beside RateLimit(false), which asks nothing of a key, on one method or class", () => {
    @SkipApiKey()
    @RateLimit(false)
    class Quiet {
      @SkipApiKey()
      @RateLimit(false)
      a() {}
      @RateLimit(false)
      @SkipApiKey()
      b() {}
    }
    const reflector = new Reflector();
    assert.equal(routeRequirementsOf(reflector, Quiet.prototype.a, Quiet), undefined);
    assert.equal(routeRequirementsOf(reflector, Quiet.prototype.b, Quiet), undefined);
    // The key's policies, policy names or a cost do ask of a key: still a clash, and a method's
    // own under a skipped controller needs a key.
    const counted = [
      RateLimit(),
      RateLimit("hourly"),
      RateLimit(undefined, { cost: 2 }),
    ];
    for (const limit of counted) {
      @SkipApiKey()
      class Skipped {
        route() {}
      }
      limit(
        Skipped.prototype,
        "route",
        Object.getOwnPropertyDescriptor(Skipped.prototype, "route")!,
      );
      assert.notEqual(routeRequirementsOf(reflector, Skipped.prototype.route, Skipped), undefined);
    }
    for (const limit of counted) {
      class Counted {}
      limit(Counted);
      assert.throws(
        () => SkipApiKey()(Counted),
        /SkipApiKey\(\) on Counted: it already has RateLimit/,
      );
    }
  });

  it("names at most five routes, then how many more, and how to install the guard", () => {
    assert.match(unguardedRoutesLine(["A.a"]), /: 1 route with .*: A\.a; install the guard/);
    const seven = ["A.a", "A.b", "A.c", "A.d", "A.e", "A.f", "A.g"];
    const line = unguardedRoutesLine(seven);
    assert.match(line, /: 7 routes with .*: A\.a, A\.b, A\.c, A\.d, A\.e and 2 more; /);
    assert.ok(!line.includes("A.f"), line);
    assert.match(line, /APP_GUARD, useExisting: ApiKeysGuard .*@UseGuards\(ApiKeysGuard\)/);
  });
});
