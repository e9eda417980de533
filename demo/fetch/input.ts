/**
 * Reading requests in the Fetch demo, which has no `ValidationPipe`: query
 * parameters are read leniently (a value of the wrong form is ignored), and
 * a JSON body's fields are checked for their types only; a wrong type is a
 * 400 `BAD_REQUEST` listing every problem, before anything is written. The
 * library refuses the rest itself (an empty name, a bad CIDR, a past expiry:
 * 400 `api_key_invalid_input`).
 *
 * @module
 */
import { DemoHttpError } from "../http_error.ts";

/** A query parameter, or `undefined`. */
export type Query = (name: string) => string | undefined;

/** The query of `request`. */
export function queryOf(request: Request): Query {
  const params = new URL(request.url).searchParams;
  return (name) => params.get(name) ?? undefined;
}

/** `value` when it is one of `allowed`, else `undefined`. */
export function oneOf<T extends string>(
  value: string | undefined,
  allowed: readonly T[],
): T | undefined {
  return allowed.includes(value as T) ? value as T : undefined;
}

type Bag = Record<string, unknown>;

/** What a JSON field must be. */
type Kind = "string" | "number" | "string[]" | "scopes";

function hasKind(value: unknown, kind: Kind): boolean {
  switch (kind) {
    case "string":
      return typeof value === "string";
    case "number":
      return typeof value === "number";
    case "string[]":
      return Array.isArray(value) && value.every((item) => typeof item === "string");
    case "scopes":
      return Array.isArray(value) && value.length > 0 &&
        value.every((item) =>
          typeof item === "object" && item !== null && typeof (item as Bag).resource === "string" &&
          ((item as Bag).level === "read" || (item as Bag).level === "write")
        );
  }
}

/**
 * The JSON object body of `request` with `fields` (name to kind; a `?`
 * suffix makes it optional) checked; unknown fields are refused.
 */
export async function jsonBody<T>(request: Request, fields: Record<string, string>): Promise<T> {
  let body: unknown;
  try {
    body = await request.json();
  } catch {
    body = undefined;
  }
  const problems: string[] = [];
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    problems.push("the body must be a JSON object");
  } else {
    for (const [name, spec] of Object.entries(fields)) {
      const optional = spec.endsWith("?");
      const kind = (optional ? spec.slice(0, -1) : spec) as Kind;
      const value = (body as Bag)[name];
      if (value === undefined ? !optional : !hasKind(value, kind)) {
        problems.push(`${name} must be ${kind === "scopes" ? "a list of scopes" : `a ${kind}`}`);
      }
    }
    for (const name of Object.keys(body)) {
      if (!(name in fields)) problems.push(`property ${name} should not exist`);
    }
  }
  if (problems.length > 0) {
    throw new DemoHttpError(400, {
      code: "BAD_REQUEST",
      message: "Validation failed",
      details: problems,
    });
  }
  return body as T;
}
