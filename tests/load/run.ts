/**
 * Bounded load run against the demo app on 127.0.0.1 (Express, then Fastify):
 * mixed valid, invalid, revoked, missing-key and rate-limited requests with
 * autocannon. Asserts zero 5xx, zero errors and timeouts, statuses expected per
 * request kind, well-formed error bodies (sampled), throttling per API key,
 * and RSS under a stated bound. Prints a node-test-style summary
 * (`# pass N` / `# fail N`) and exits non-zero on failure.
 *
 * Run: `deno task test:load` (`LOAD_SECONDS`, default 20, split over both adapters).
 *
 * @module
 */
import process from "node:process";
import autocannon from "autocannon";
import { ApiKeysService } from "../../api_keys/mod.ts";
import { loadPeppers } from "../../demo/peppers.ts";
import { startDemoServer } from "../../demo/server.ts";
import type { DemoAdapter } from "../../demo/cli.ts";
import { errorBodyProblems } from "../reliability/nest_app.ts";

const SECONDS = Math.max(2, Number(process.env.LOAD_SECONDS ?? 20));
const CONNECTIONS = Number(process.env.LOAD_CONNECTIONS ?? 32);
/** Generous bound on the resident set of this process (server and load generator together). */
const RSS_LIMIT_MB = Number(process.env.LOAD_RSS_LIMIT_MB ?? 1024);
const VALID_KEYS = 200;
const BODY_SAMPLE_EVERY = 25;

type Kind = "valid" | "invalid" | "revoked" | "missing" | "throttled";
/** Request mix, repeated: 4 valid, 2 invalid, 1 revoked, 1 missing, 2 rate-limited. */
const MIX: Kind[] = [
  "valid",
  "invalid",
  "throttled",
  "valid",
  "revoked",
  "valid",
  "missing",
  "throttled",
  "valid",
  "invalid",
];
/** Statuses each kind may get (valid keys may be throttled too: 100 a minute per key). */
const EXPECTED: Record<Kind, number[]> = {
  valid: [200, 429],
  invalid: [401],
  revoked: [401],
  missing: [401],
  throttled: [200, 429],
};

interface Tally {
  byKind: Record<Kind, Record<number, number>>;
  unexpected: string[];
  badBodies: string[];
  sampledBodies: number;
}

const results: { name: string; ok: boolean; detail?: string }[] = [];
function check(name: string, ok: boolean, detail?: string): void {
  results.push({ name, ok, detail });
  console.log(
    `${ok ? "ok" : "not ok"} ${results.length} - ${name}${ok || !detail ? "" : `\n  # ${detail}`}`,
  );
}

async function runAdapter(adapter: DemoAdapter, seconds: number): Promise<void> {
  const server = await startDemoServer({
    port: 0,
    host: "127.0.0.1",
    adapter,
    peppers: loadPeppers(undefined, false).peppers,
  });
  let peakRssMb = 0;
  const rssTimer = setInterval(() => {
    peakRssMb = Math.max(peakRssMb, process.memoryUsage().rss / 2 ** 20);
  }, 250);
  try {
    const service = server.app.get(ApiKeysService);
    const scopes = [{ resource: "feed", level: "read" as const }];
    const valid: string[] = [];
    for (let i = 0; i < VALID_KEYS; i++) {
      valid.push((await service.create({ tenantId: "load", name: `k${i}`, scopes })).key);
    }
    const revoked = await service.create({ tenantId: "load", name: "revoked", scopes });
    await service.revoke(revoked.id);
    const throttled = (await service.create({ tenantId: "load", name: "hot", scopes })).key;
    const invalid = [
      valid[0].slice(0, -6) + "AAAAAA", // bad checksum
      "ak_live_" + "x".repeat(50),
      "not a key at all",
    ];

    const tally: Tally = {
      byKind: { valid: {}, invalid: {}, revoked: {}, missing: {}, throttled: {} },
      unexpected: [],
      badBodies: [],
      sampledBodies: 0,
    };
    let sequence = 0;
    const request = {
      method: "GET" as const,
      path: "/api/whoami",
      setupRequest(req: Record<string, unknown>, context: Record<string, unknown>) {
        const n = sequence++;
        const kind = MIX[n % MIX.length];
        context.kind = kind;
        const headers: Record<string, string> = {};
        let path = "/api/whoami";
        if (kind === "valid") headers["x-api-key"] = valid[n % valid.length];
        if (kind === "invalid") headers.authorization = `Bearer ${invalid[n % invalid.length]}`;
        if (kind === "revoked") headers["x-api-key"] = revoked.key;
        if (kind === "throttled") {
          headers["x-api-key"] = throttled;
          path = "/api/ping";
        }
        return { ...req, path, headers };
      },
      onResponse(
        status: number,
        body: string,
        context: Record<string, unknown>,
        headers: Record<string, string>,
      ) {
        const kind = context.kind as Kind;
        const counts = tally.byKind[kind];
        counts[status] = (counts[status] ?? 0) + 1;
        if (!EXPECTED[kind].includes(status) && tally.unexpected.length < 20) {
          tally.unexpected.push(`${kind}: ${status} ${body.slice(0, 120)}`);
        }
        if (status >= 400 && sequence % BODY_SAMPLE_EVERY < 3) {
          tally.sampledBodies++;
          const contentType = headers["content-type"] ?? headers["Content-Type"] ?? "";
          const problems = errorBodyProblems(status, contentType, body);
          if (problems.length > 0 && tally.badBodies.length < 20) {
            tally.badBodies.push(`${kind} ${status}: ${problems.join("; ")}`);
          }
        }
      },
    };

    const result = await autocannon({
      url: server.url,
      connections: CONNECTIONS,
      duration: seconds,
      timeout: 10,
      requests: [request],
    });

    const total = result.requests.total;
    const perKind = Object.entries(tally.byKind).map(([k, v]) => `${k} ${JSON.stringify(v)}`);
    console.log(
      `# ${adapter}: ${total} requests in ${seconds} s (${
        Math.round(result.requests.average)
      }/s), ` +
        `latency p50 ${result.latency.p50} ms p99 ${result.latency.p99} ms, peak RSS ${
          peakRssMb.toFixed(0)
        } MB`,
    );
    console.log(`# ${adapter}: statuses by kind: ${perKind.join(", ")}`);
    const answered = Object.values(tally.byKind).flatMap((c) => Object.values(c)).reduce(
      (a, b) => a + b,
      0,
    );

    check(`${adapter}: load ran (>= 100 requests answered)`, answered >= 100, `${answered}`);
    check(`${adapter}: zero 5xx`, result["5xx"] === 0, `${result["5xx"]} responses were 5xx`);
    check(
      `${adapter}: zero errors, timeouts and dropped connections`,
      result.errors === 0 && result.timeouts === 0 && result.resets === 0,
      `errors ${result.errors}, timeouts ${result.timeouts}, resets ${result.resets}`,
    );
    check(
      `${adapter}: every status expected for its request kind`,
      tally.unexpected.length === 0,
      tally.unexpected.join(" | "),
    );
    check(
      `${adapter}: sampled error bodies well-formed (${tally.sampledBodies} sampled)`,
      tally.sampledBodies > 0 && tally.badBodies.length === 0,
      tally.badBodies.join(" | "),
    );
    check(
      `${adapter}: one hot key is throttled (429) while other keys still pass (200)`,
      (tally.byKind.throttled[429] ?? 0) > 0 && (tally.byKind.valid[200] ?? 0) > 0,
      JSON.stringify({ throttled: tally.byKind.throttled, valid: tally.byKind.valid }),
    );
    check(
      `${adapter}: peak RSS ${peakRssMb.toFixed(0)} MB under ${RSS_LIMIT_MB} MB`,
      peakRssMb < RSS_LIMIT_MB,
    );
  } finally {
    clearInterval(rssTimer);
    await server.close();
  }
}

const adapters: DemoAdapter[] = ["express", "fastify"];
for (const adapter of adapters) {
  try {
    await runAdapter(adapter, Math.max(1, Math.round(SECONDS / adapters.length)));
  } catch (error) {
    check(`${adapter}: load run completed`, false, String((error as Error)?.stack ?? error));
  }
}
const failed = results.filter((r) => !r.ok).length;
console.log(`1..${results.length}`);
console.log(`# pass ${results.length - failed}`);
console.log(`# fail ${failed}`);
process.exit(failed === 0 ? 0 : 1);
