/**
 * The compatibility matrix (`matrix.json` beside this file) and everything derived from it: each
 * consumer app's id and `package.json`, the npm package's peer ranges and the text of
 * `docs/compatibility.md`. Pure functions of the parsed matrix (no I/O), so the runner, the
 * updater, the npm build and the freshness test all derive the same things the same way.
 *
 * @module
 */

/** A Nest major the matrix covers. */
export type NestMajor = 10 | 11 | 12;

/** One end of a Nest major: exact versions npm resolves without `--legacy-peer-deps`. */
export interface VersionSet {
  /** The Nest major. */
  nest: NestMajor;
  /** Which end of the major this set is. */
  end: "lowest" | "highest";
  /** Nest, its platforms, swagger and the other peers: name → exact version. */
  packages: Record<string, string>;
  /** Third-party modules apps use beside the package: name → exact version. */
  integrations: Record<string, string>;
  /** Why a version is where it is: name → reason (shown on the compatibility page). */
  why?: Record<string, string>;
}

/** An HTTP platform: its Nest adapter and the server it brings. */
export interface Platform {
  /** The Nest adapter package, e.g. `@nestjs/platform-express`. */
  adapter: string;
  /** The adapter's class, e.g. `ExpressAdapter`. */
  adapterClass: string;
  /** The server package the adapter depends on, e.g. `express`. */
  server: string;
  /** The server major each Nest major's adapter brings (checked on the installed app). */
  majors: Record<string, number>;
  /** Packages of the set the app also installs when it has `@nestjs/swagger`. */
  withSwagger?: string[];
}

/** One consumer app: a version set on a platform in a module system. */
export interface ConsumerApp {
  /** Key of the version set. */
  set: string;
  /** CommonJS or ESM (`"type": "module"`, `nodenext`). */
  module: "cjs" | "esm";
  /** Key of the platform. */
  platform: string;
  /** Whether `@nestjs/swagger` is installed. */
  swagger: boolean;
  /**
   * Versions replacing the set's (packages or integrations the set has): an app pinning one
   * release inside a set, e.g. `{ "@nestjs/swagger": "11.2.6" }`. Its id ends with each as
   * `-<name><version>` (`-swagger11.2.6`).
   */
  packages?: Record<string, string>;
  /** Why the app does not run yet (it is listed, its lockfile kept, and it is skipped). */
  pending?: string;
}

/** A known incompatibility of the package with a tested stack (to fix in the library). */
export interface KnownIssue {
  /** The stacks affected. */
  where: string;
  /** What goes wrong, and why. */
  what: string;
  /** The error seen. */
  error: string;
}

/** A release range the matrix does not test, and why. */
export interface Untested {
  /** Package name. */
  package: string;
  /** The releases. */
  versions: string;
  /** Why they are not tested. */
  why: string;
}

/** One Prisma major tried against real PostgreSQL. */
export interface PrismaResult {
  /** The exact versions tried (`prisma` and `@prisma/client`). */
  version: string;
  /**
   * `ci`: the storage suite runs on it in CI; `spike`: works here, not in CI yet; `untested`:
   * cannot run here, or not tried (shape-compatible only).
   */
  status: "ci" | "spike" | "untested";
  /** What was tried and what happened. */
  notes: string;
}

/** A store client the rate-limit suite tests at exact versions (no consumer app installs it). */
export interface StoreClient {
  /** The exact versions tested, both ends of each major its range admits. */
  versions: string[];
  /** What runs them. */
  tested: string;
}

/** The checks every app runs (see {@link Matrix.suite}). */
export interface Suite {
  /** The repository-relative folder the runner copies into each app as `shared/`. */
  dir: string;
  /** Files of `dir` copied only into the apps with `@nestjs/swagger` (they import it). */
  swaggerOnly: string[];
}

/** The parsed `matrix.json`. */
export interface Matrix {
  /** The Node major the apps run on (each app checks it). */
  node: string;
  /**
   * The checks every app runs, the one place to swap them: a folder whose `suite.ts` exports
   * `consumerSuite(name, createApp)` (`createApp` makes a Nest app of a module on the app's
   * platform: `tests/consumers/src/app.ts`; the caller is `tests/consumers/test/app.test.ts`).
   */
  suite: Suite;
  /** Tools every app compiles with. */
  devDependencies: Record<string, string>;
  /** Tools only the apps with `@nestjs/swagger` install (the OpenAPI checks use them). */
  swaggerDevDependencies: Record<string, string>;
  /** The npm package's peers; their ranges are derived from the sets or `storeClients`. */
  peers: Record<string, { optional: boolean }>;
  /** Peer name → the versions the rate-limit suite tests (`deno task test:limits`). */
  storeClients?: Record<string, StoreClient>;
  /** Platform key → platform. */
  platforms: Record<string, Platform>;
  /** Set key → version set. */
  sets: Record<string, VersionSet>;
  /** The consumer apps. */
  apps: ConsumerApp[];
  /** Known incompatibilities of the package with tested stacks. */
  known: KnownIssue[];
  /** Releases not tested, and why. */
  untested: Untested[];
  /** The Prisma spike's results. */
  prisma: PrismaResult[];
}

/** The app's folder name under `tests/consumers/apps/`, e.g. `nest10-cjs-express-lowest`. */
export function appId(matrix: Matrix, app: ConsumerApp): string {
  const set = matrix.sets[app.set];
  const id = `nest${set.nest}-${app.module}-${app.platform}-${set.end}`;
  const pinned = Object.entries(app.packages ?? {}).map(([name, version]) =>
    `-${name.slice(name.lastIndexOf("/") + 1)}${version}`
  );
  return `${id}${app.swagger ? "" : "-noswagger"}${pinned.join("")}`;
}

/** Throws on a matrix whose apps name unknown sets or platforms, or repeat an id. */
export function validateMatrix(matrix: Matrix): void {
  const seen = new Set<string>();
  for (const app of matrix.apps) {
    const set = matrix.sets[app.set];
    if (set === undefined) throw new Error(`app names unknown set "${app.set}"`);
    const platform = matrix.platforms[app.platform];
    if (platform === undefined) throw new Error(`app names unknown platform "${app.platform}"`);
    const id = appId(matrix, app);
    if (seen.has(id)) throw new Error(`app ${id} is listed twice`);
    seen.add(id);
    for (const name of [platform.adapter, ...(platform.withSwagger ?? [])]) {
      if (!(name in set.packages)) throw new Error(`set ${app.set} has no version of ${name}`);
    }
    for (const name of Object.keys(app.packages ?? {})) {
      if (!(name in set.packages) && !(name in set.integrations)) {
        throw new Error(`app ${id} pins ${name}, not in its set`);
      }
    }
  }
  for (const name of Object.keys(matrix.storeClients ?? {})) {
    if (!(name in matrix.peers)) throw new Error(`store client ${name} is not a peer`);
  }
  for (const [key, set] of Object.entries(matrix.sets)) {
    for (const name of Object.keys(matrix.peers)) {
      if (name in (matrix.storeClients ?? {})) continue;
      if (!(name in set.packages) && !(name in set.integrations)) {
        throw new Error(`set ${key} has no version of the peer ${name}`);
      }
    }
  }
}

/** Returns a copy of `record` with keys in code-point order. */
function sorted<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : 1)));
}

/** The versions an app installs of its set's packages and integrations: the set's, with the app's pins. */
function appPackages(matrix: Matrix, app: ConsumerApp): Record<string, string> {
  const set = matrix.sets[app.set];
  return { ...set.packages, ...set.integrations, ...app.packages };
}

/** The third-party dependencies an app installs (never the package itself: that is the tarball). */
export function appDependencies(matrix: Matrix, app: ConsumerApp): Record<string, string> {
  const platform = matrix.platforms[app.platform];
  const adapters = new Set(Object.values(matrix.platforms).map((p) => p.adapter));
  const swaggerOnly = new Set(Object.values(matrix.platforms).flatMap((p) => p.withSwagger ?? []));
  const wanted = new Set(app.swagger ? platform.withSwagger ?? [] : []);
  const deps: Record<string, string> = {};
  for (
    const [name, version] of Object.entries(appPackages(matrix, app))
  ) {
    if (adapters.has(name) && name !== platform.adapter) continue;
    if (swaggerOnly.has(name) && !wanted.has(name)) continue;
    if (name === "@nestjs/swagger" && !app.swagger) continue;
    deps[name] = version;
  }
  return sorted(deps);
}

/** The `package.json` of an app (its lockfile is npm's resolution of exactly this). */
export function appPackageJson(matrix: Matrix, app: ConsumerApp): Record<string, unknown> {
  const set = matrix.sets[app.set];
  const pkg: Record<string, unknown> = {
    name: `consumer-${appId(matrix, app)}`,
    version: "0.0.0",
    private: true,
    description:
      `A Nest ${set.nest} ${
        app.module === "esm" ? "ESM" : "CommonJS"
      } app on ${app.platform} (${set.end} versions, ${
        app.swagger ? "with" : "without"
      } @nestjs/swagger) that installs ` +
      "@saferoute/api-kit from the packed tarball. Generated from tests/consumers/matrix.json.",
  };
  if (app.module === "esm") pkg.type = "module";
  pkg.dependencies = appDependencies(matrix, app);
  pkg.devDependencies = sorted({
    ...matrix.devDependencies,
    ...(app.swagger ? matrix.swaggerDevDependencies : {}),
  });
  return pkg;
}

/** Numeric parts of an exact `x.y.z` version. */
function parts(version: string): [number, number, number] {
  const match = version.match(/^(\d+)\.(\d+)\.(\d+)$/);
  if (match === null) throw new Error(`not an exact x.y.z version: ${version}`);
  return [Number(match[1]), Number(match[2]), Number(match[3])];
}

/** Orders exact versions. */
export function compareVersions(a: string, b: string): number {
  const [x, y] = [parts(a), parts(b)];
  return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
}

/**
 * The peer range of `name`: one caret range per major tested (per minor below 1.0, as caret
 * ranges count), each from the lowest version of that major tested: a store client's
 * `storeClients` versions, else the versions the running apps install (a pending app is not
 * tested yet; an app without swagger tests no swagger). So the lower bound is the tested lowest,
 * and every major in the range is one that runs.
 */
export function peerRange(matrix: Matrix, name: string): string {
  const tested = matrix.storeClients?.[name]?.versions ?? matrix.apps.flatMap((app) => {
    const version = app.pending === undefined ? appDependencies(matrix, app)[name] : undefined;
    return version === undefined ? [] : [version];
  });
  const lowest = new Map<string, string>();
  for (const version of tested) {
    const [major, minor] = parts(version);
    const key = major === 0 ? `0.${minor}` : `${major}`;
    const current = lowest.get(key);
    if (current === undefined || compareVersions(version, current) < 0) lowest.set(key, version);
  }
  if (lowest.size === 0) throw new Error(`nothing tests ${name}`);
  return [...lowest.values()].sort(compareVersions).map((version) => `^${version}`).join(" || ");
}

/** The peers the JSR package's files import (its module graph; tests/package_metadata_test.ts). */
export const JSR_PEERS: readonly string[] = [
  "@nestjs/common",
  "@nestjs/core",
  "@nestjs/swagger",
  "@opentelemetry/api",
  "pg",
  "rxjs",
];

/**
 * A peer's range in the JSR package (deno.json `imports`): the newest major of `peerRange`, as
 * Deno's npm specifiers take one caret range (no `||`, `>=` nor spaces) and `deno publish`
 * refuses `*`.
 */
export function jsrPeerRange(matrix: Matrix, name: string): string {
  return peerRange(matrix, name).split(" || ").at(-1)!;
}

/** Every peer with its derived range and whether it is optional. */
export function peerRanges(matrix: Matrix): Record<string, { range: string; optional: boolean }> {
  const peers: Record<string, { range: string; optional: boolean }> = {};
  for (const [name, { optional }] of Object.entries(sorted(matrix.peers))) {
    peers[name] = { range: peerRange(matrix, name), optional };
  }
  return peers;
}

/** Escapes a table cell. */
function cell(text: string): string {
  return text.replaceAll("|", "\\|");
}

/** A Markdown table. */
function table(head: string[], rows: string[][]): string[] {
  return [
    `| ${head.join(" | ")} |`,
    `| ${head.map(() => "---").join(" | ")} |`,
    ...rows.map((row) => `| ${row.map(cell).join(" | ")} |`),
  ];
}

/** The text of `docs/compatibility.md`. */
export function renderCompatibilityDoc(matrix: Matrix): string {
  validateMatrix(matrix);
  const sets = Object.entries(matrix.sets);
  const names = [
    ...new Set(sets.flatMap(([, set]) => [...Object.keys(set.packages)])),
  ];
  const integrations = [...new Set(sets.flatMap(([, set]) => Object.keys(set.integrations)))];
  const lines: string[] = [
    "# Compatibility",
    "",
    "<!-- Generated from tests/consumers/matrix.json by `deno task update:consumers`; do not edit. -->",
    "",
    `Every Nest major the package supports is tested at both ends on Node ${matrix.node} (20.19 or`,
    "later lets the CommonJS apps `require()` the ESM-only Nest 12): the lowest set of versions npm",
    "resolves without `--legacy-peer-deps`, and the highest current set. Each",
    "consumer app below is a real Node project that installs its locked third-party dependencies",
    "(`npm ci`), then the freshly packed package, and runs the shared consumer checks",
    `(\`${matrix.suite.dir}/\`) with real HTTP requests. Run them with`,
    "`deno task test:consumers`. An app without `@nestjs/swagger` compiles the checks without",
    `their swagger-only files (${
      matrix.suite.swaggerOnly.map((file) => `\`${file}\``).join(", ")
    }), skips the OpenAPI checks and checks`,
    "that `@nestjs/swagger` cannot be resolved.",
    "",
    "## Peer ranges",
    "",
    "Each range's lower bound is the lowest tested version, and every major in it is tested: the",
    "ranges are derived from the versions the running apps install.",
    "",
    ...table(
      ["package", "range", "optional"],
      Object.entries(peerRanges(matrix)).map(([name, peer]) => [
        `\`${name}\``,
        `\`${peer.range}\``,
        peer.optional ? "yes" : "no",
      ]),
    ),
    "",
    "## Deno and JSR",
    "",
    "The JSR package takes its npm imports from `deno.json`, where a specifier states one range:",
    "Deno rejects `||`, `>=` and spaces in it, and `deno publish` refuses `*`. So each peer the",
    "published files import is the newest major of its range above: " +
    JSR_PEERS.filter((name) => name in matrix.peers)
      .map((name) => `\`${name}\` \`${jsrPeerRange(matrix, name)}\``).join(", ") +
    ".",
    "Through JSR, a Deno app on Nest 12 (any 12.x from the range's floor) shares its own Nest, and",
    "swagger, rxjs, pg and the API, with the package. A Deno app on Nest 10 or 11 would get a second",
    "Nest (12) beside its own and fail at bootstrap (`UnknownDependenciesException`): through JSR",
    "only Nest 12 is supported. On Nest 10 or 11, a Deno app installs the npm package instead",
    '(`npm install @saferoute/api-kit` beside its `package.json`, `"nodeModulesDir": "manual"` in',
    "`deno.json`), whose peer ranges above span the three majors. The repository's Deno suites",
    "resolve the JSR ranges through the frozen `deno.lock` to the versions it locks (Nest 12.5.1).",
    "Checked by hand, not in CI: an app on the nest12-lowest set importing the package through its",
    "`deno.json`, and an app on Nest 11.2.10 on the npm package, each answering HTTP.",
    "",
    "## Store clients",
    "",
    "The rate-limit stores' clients are optional peers no consumer app installs: the rate-limit",
    "suite runs each version below against the real server, on Deno from the sources and on Node",
    "from the npm build. The peer range is derived from these versions. The servers: CI runs",
    "PostgreSQL 15 and Redis 7.0 (and a Redis 7.0 cluster), the only Redis version tested. The Redis",
    "store's scripts run `TIME`, `GET`, `SET … PX`, `SETRANGE`, `HMGET` and `HSET` (a user whose ACL",
    "denies one of them is refused: the check fails closed) and use the `struct` library of Redis's",
    "Lua. Valkey is not tested.",
    "",
    ...table(
      ["package", "range", "tested versions", "tested by"],
      Object.entries(sorted(matrix.storeClients ?? {})).map(([name, client]) => [
        `\`${name}\``,
        `\`${peerRange(matrix, name)}\``,
        client.versions.join(", "),
        client.tested,
      ]),
    ),
    "",
    "## Version sets",
    "",
    ...table(
      ["package", ...sets.map(([key]) => key)],
      [...names, ...integrations].map((name) => [
        `\`${name}\``,
        ...sets.map(([, set]) => set.packages[name] ?? set.integrations[name] ?? "-"),
      ]),
    ),
    "",
    `Integrations (${integrations.map((name) => `\`${name}\``).join(", ")}) are installed in every`,
    "app, so npm's peer resolution of each set is proven, and the shared checks exercise each one in",
    "every app, in both error formats: the throttler's `X-RateLimit-*` headers mirrored into",
    "`meta.rateLimit`, then its 429 as an error with `meta.rateLimit.retryAfter` (4.x is configured",
    "with its own `forRoot` signature), and the throttler over the package's rate-limit store",
    "(`createThrottlerStorage` over the memory store, given the installed `throttlerMajor`, tracked",
    "by `apiKeyThrottlerTracker`: the `getTracker` option from 5.1, the guard's `getTracker`",
    "override on 4.x and 5.0) counting exact hits to",
    "its 429, by key id across two client IPs, else by client IP; nestjs-cls store values copied",
    "into `meta` on successes and",
    "errors, guard errors included, never overriding the module's own fields; nestjs-i18n",
    "translating `ResponseMessage` keys and error messages in the language of `?lang=` or",
    "`Accept-Language`, guard errors included.",
    "",
    "Platforms: " +
    Object.entries(matrix.platforms).map(([key, platform]) =>
      `${key} (\`${platform.adapter}\`) brings ${platform.server} ` +
      Object.entries(platform.majors).map(([nest, major]) => `${major} on Nest ${nest}`).join(
        ", ",
      )
    ).join("; ") + ". Each app checks the server major it got.",
    "",
    "Why a version is where it is:",
    "",
    ...sets.flatMap(([key, set]) =>
      Object.entries(set.why ?? {}).map(([name, why]) => `- ${key}, \`${name}\`: ${why}.`)
    ),
    "",
    "## Consumer apps",
    "",
    ...table(
      ["app", "Nest", "module", "platform", "versions", "@nestjs/swagger", "status"],
      matrix.apps.map((app) => {
        const set = matrix.sets[app.set];
        return [
          `\`${appId(matrix, app)}\``,
          String(set.nest),
          app.module === "esm" ? "ESM" : "CommonJS",
          app.platform,
          [
            app.set,
            ...Object.entries(app.packages ?? {}).filter(([name]) => name !== "@nestjs/swagger")
              .map(([name, version]) => `\`${name}\` ${version}`),
          ].join(", "),
          app.swagger ? (appPackages(matrix, app)["@nestjs/swagger"] ?? "-") : "not installed",
          app.pending === undefined ? "runs" : `pending: ${app.pending}`,
        ];
      }),
    ),
    "",
    "## TypeScript",
    "",
    "The declarations use `Uint8Array<ArrayBuffer>` (TypeScript 5.7) and `NoInfer` (5.4): an app",
    "needs TypeScript 5.7 or later, or `skipLibCheck: true`. The server-side entry points need no DOM",
    'types: a Node app with `"lib": ["es2022"]` and `@types/node` compiles them with `skipLibCheck: false`',
    '(the npm build checks it; `./client` and `./client/elements` are for browsers and need `"dom"`).',
    "A CommonJS app on Nest 12 (ESM only)",
    'compiled with `"module": "nodenext"` needs 5.8, or `skipLibCheck: true`: 5.7 refuses a',
    "CommonJS declaration importing an ESM package (TS1479). The consumer apps compile with",
    `\`typescript\` ${matrix.devDependencies.typescript} and \`skipLibCheck: true\`; the other rows were`,
    "checked by hand (not in CI) with Nest 12.5.1, a file importing every entry point, under",
    "`moduleResolution` bundler, node10 and nodenext (ESM and CommonJS).",
    "",
    ...table(["TypeScript", "skipLibCheck", "result"], [
      [matrix.devDependencies.typescript, "`true`", "every consumer app compiles (CI)"],
      ["5.8.3, 6.0.3", "`false`", "compiles"],
      ["5.7.3", "`false`", "compiles, but for nodenext CommonJS on Nest 12 (TS1479)"],
      ["5.0.4, 5.4.5", "`false`", "TS2315 `Type 'Uint8Array' is not generic` (5.0: `NoInfer` too)"],
      ["5.0.4, 5.4.5", "`true`", "compiles"],
    ]),
    "",
    "## Bundling",
    "",
    "The package's files load the optional peers with plain `import` and `require` and resolve",
    "nothing on disk first, and no file has a top-level `await`: an app bundled with its peers runs",
    "without a `node_modules` beside it, and ESM sources bundle to CommonJS (serverless-esbuild's",
    "default). `tests/scripts/npm_build/peer_guards_test.ts` checks it with esbuild (an ESM app",
    "bundled to CommonJS and to ESM, a CommonJS app bundled, each run where no `node_modules` is);",
    "other bundlers are not tested. `package.json`'s `sideEffects` lists the files whose loading acts",
    "(`./client/elements` defines `<api-keys-manager>`): Rollup and Vite, which read it at the package",
    "root, keep a bare `import` of them (`tests/scripts/npm_build/package_json_test.ts` bundles one with",
    "esbuild reading the root the same way).",
    "",
    "An optional peer missing at run time: loaded by `require` (CommonJS), the entry point throws",
    "an error naming the install command (``@saferoute/api-kit/api-keys/postgres needs pg, not",
    "installed: run `npm install pg` ``, Node's error as its `cause`); loaded by `import` (ESM), it",
    "is Node's own `ERR_MODULE_NOT_FOUND` (`Cannot find package 'pg' imported from …`), since a",
    "static import fails before any of the package's code runs, and catching it would take a",
    "top-level `await`, which a CommonJS bundle refuses.",
    "",
    "## Known incompatibilities",
    "",
    ...(matrix.known.length === 0 ? ["None known."] : table(
      ["where", "what", "error"],
      matrix.known.map((issue) => [issue.where, issue.what, `\`${issue.error}\``]),
    )),
    "",
    "## Not tested",
    "",
    ...table(
      ["package", "versions", "why"],
      matrix.untested.map((entry) => [`\`${entry.package}\``, entry.versions, entry.why]),
    ),
    "",
    "## Prisma",
    "",
    "`PrismaApiKeyStorage` imports nothing from Prisma. Each major was tried against real",
    "PostgreSQL on this machine, which cannot reach Prisma's engine host:",
    "",
    ...(matrix.prisma.length === 0 ? ["Not tried yet."] : table(
      ["versions", "status", "notes"],
      matrix.prisma.map((entry) => [entry.version, entry.status, entry.notes]),
    )),
    "",
  ];
  return lines.join("\n");
}
