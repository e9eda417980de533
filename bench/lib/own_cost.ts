/**
 * The in-process benchmarks' common frame (bench/in_process.ts for the Nest
 * bindings, bench/fetch.ts for the Fetch ones): the CPU cost of one request to
 * a bare server, the two API-key services a guard is measured with, and the
 * table of each case's own cost (case minus its floor, from alternating rounds)
 * as a share of that bare request.
 *
 * @module
 */
import { ApiKeysService, InMemoryApiKeyStorage } from "../../api_keys/mod.ts";
import { BENCH_PATH, BENCH_PEPPER } from "../http/apps.ts";
import { type Case, fmt, median, QUICK, verdict } from "./harness.ts";
import { measure, startServer } from "./servers.ts";

/** CPU microseconds per response of a bare server, and the rounds behind the median. */
export interface BareCost {
  /** Median of the rounds. */
  us: number;
  /** One value per round. */
  samples: number[];
}

/**
 * CPU time per request of the bare app of `platform` (`express`, `fastify`,
 * `deno-serve`), measured in its own process under a fixed local load: a
 * warm-up, then the median of 3 rounds (2 with `--quick`).
 */
export async function bareCpuPerRequest(platform: string): Promise<BareCost> {
  const server = await startServer(platform, "bare");
  try {
    const duration = QUICK ? 1 : 2;
    await measure(server, { duration: QUICK ? 0.5 : 1 }, BENCH_PATH);
    const samples: number[] = [];
    for (let i = 0; i < (QUICK ? 2 : 3); i++) {
      samples.push((await measure(server, { duration }, BENCH_PATH)).cpuUsPerRequest);
    }
    return { us: median(samples), samples };
  } finally {
    await server.close();
  }
}

/** `12.3 µs (rounds 12.1, 12.3, 12.9)`. */
export function describeBare(bare: BareCost): string {
  return `${fmt(bare.us, 1)} µs (rounds ${bare.samples.map((s) => fmt(s, 1)).join(", ")})`;
}

/**
 * A service with the verification cache and one without, over one in-memory
 * storage holding `key` (scope `items:read`, which `requirements` asks for).
 */
export async function guardServices(): Promise<{
  warm: ApiKeysService;
  cold: ApiKeysService;
  key: string;
  requirements: { requiredScope: { resource: string; level: "read" } };
}> {
  const storage = new InMemoryApiKeyStorage();
  const scopes = [{ resource: "items", level: "read" as const }];
  const warm = new ApiKeysService({ peppers: { 1: BENCH_PEPPER }, storage });
  const cold = new ApiKeysService({ peppers: { 1: BENCH_PEPPER }, storage, cache: false });
  const { key } = await warm.create({ tenantId: "t", name: "k", scopes });
  return { warm, cold, key, requirements: { requiredScope: scopes[0] } };
}

/**
 * Rows of own cost: a case against its floor, in µs and as a share of each
 * bare request; the target (a percentage) is checked against the first.
 */
export class OwnCostTable {
  /** Table rows, in the order added. */
  readonly rows: string[][] = [];
  /** `group: case` of each row that missed its target. */
  readonly missed: string[] = [];

  /** `bares`: the bare requests the shares are taken of, one column each. */
  constructor(readonly bares: readonly BareCost[]) {}

  /** Adds `cases[index]` against `cases[floorIndex]` (timings `t`, from `alternate`). */
  add(
    group: string,
    cases: readonly Case[],
    t: readonly { us: number }[],
    index: number,
    floorIndex: number,
    target?: number,
  ): void {
    const own = t[index].us - t[floorIndex].us;
    const shares = this.bares.map((bare) => (own / bare.us) * 100);
    const pass = target === undefined ? undefined : shares[0] <= target;
    if (pass === false) this.missed.push(`${group}: ${cases[index].name}`);
    this.rows.push([
      group,
      cases[index].name,
      fmt(t[index].us),
      cases[floorIndex].name,
      fmt(t[floorIndex].us),
      fmt(own),
      ...shares.map((share) => `${fmt(share, 1)}%`),
      target === undefined ? "" : `<= ${target}%`,
      pass === undefined ? "" : verdict(pass),
    ]);
  }
}
