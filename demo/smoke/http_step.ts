/**
 * One step of the smoke tour: a request, the status and code it must
 * answer, optional extra checks, and a printed line. A step never throws: a
 * network error or a failed check is a failed step.
 *
 * @module
 */

/** A request and what it must answer. */
export interface StepSpec {
  /** What the step shows, printed after the status and code. */
  title: string;
  /** HTTP method (default GET). */
  method?: string;
  /** Path and query. */
  path: string;
  /** Raw API key for `X-API-Key`. */
  key?: string;
  /** Extra request headers. */
  headers?: Record<string, string>;
  /** JSON body. */
  body?: unknown;
  /** Expected status. */
  status: number;
  /** Expected code (`code`, `error.code` or problem `code`), when it matters. */
  code?: string;
  /** Further checks: return a problem description, or undefined when fine. */
  check?: (answer: StepAnswer) => string | undefined;
}

/** What the server answered. */
export interface StepAnswer {
  /** Status. */
  status: number;
  /** Response headers. */
  headers: Headers;
  /** Parsed JSON body, or the text when not JSON. */
  body: unknown;
  /** The code found in the body, if any. */
  code: string | undefined;
}

/** The outcome of a step. */
export interface StepResult {
  /** The step. */
  spec: StepSpec;
  /** The answer, unless the request failed. */
  answer?: StepAnswer;
  /** Why the step failed; undefined when it passed. */
  failure?: string;
}

/** A JSON object read loosely: any property may be missing. */
export type Bag = Record<string, unknown>;
const isBag = (value: unknown): value is Bag => typeof value === "object" && value !== null;

/** `value` as a `Bag` (`{}` when it is not an object), for reading nested bodies without throwing. */
export const bag = (value: unknown): Bag => isBag(value) ? value : {};

/** A step check's verdict: `undefined` when `ok`, else `problem`. */
export const expect = (ok: boolean, problem: string): string | undefined =>
  ok ? undefined : problem;

/** The machine-readable code of any safe-response body. */
export function codeOf(body: unknown): string | undefined {
  if (!isBag(body)) return undefined;
  if (isBag(body.error) && typeof body.error.code === "string") return body.error.code;
  return typeof body.code === "string" ? body.code : undefined;
}

/** Sends the request of `spec` to `baseUrl` and checks the answer. */
export async function runStep(baseUrl: string, spec: StepSpec): Promise<StepResult> {
  const headers: Record<string, string> = { Accept: "application/json", ...spec.headers };
  if (spec.key !== undefined) headers["X-API-Key"] = spec.key;
  const init: RequestInit = { method: spec.method ?? "GET", headers };
  if (spec.body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(spec.body);
  }
  let answer: StepAnswer;
  try {
    const response = await fetch(baseUrl + spec.path, init);
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: kept as text
    }
    answer = { status: response.status, headers: response.headers, body, code: codeOf(body) };
  } catch (error) {
    return { spec, failure: `request failed: ${(error as Error).message}` };
  }
  const problems: string[] = [];
  if (answer.status !== spec.status) problems.push(`expected status ${spec.status}`);
  if (spec.code !== undefined && answer.code !== spec.code) {
    problems.push(`expected code ${spec.code}`);
  }
  if (problems.length === 0 && spec.check !== undefined) {
    try {
      const problem = spec.check(answer);
      if (problem !== undefined) problems.push(problem);
    } catch (error) {
      problems.push(`check threw: ${(error as Error).message}`);
    }
  }
  return problems.length === 0 ? { spec, answer } : { spec, answer, failure: problems.join("; ") };
}

/** The printed line of a result: verdict, status, code, method, path, title. */
export function formatStep(result: StepResult): string {
  const { spec, answer, failure } = result;
  const verdict = failure === undefined ? "ok  " : "FAIL";
  const status = answer === undefined ? "---" : String(answer.status);
  const code = (answer?.code ?? "-").padEnd(30);
  const request = `${spec.method ?? "GET"} ${spec.path}`;
  const line = `${verdict} ${status} ${code} ${spec.title} (${request})`;
  return failure === undefined ? line : `${line}\n       ${failure}`;
}
