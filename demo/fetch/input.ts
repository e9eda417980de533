/**
 * Reading requests in the Fetch demo, which has no `ValidationPipe`: query
 * parameters are read leniently (a value of the wrong form is ignored), and
 * a JSON body (at most 100 KiB, as Express's default: 413 past it, unread) has
 * its fields checked for their types; a wrong type is a 400 `BAD_REQUEST` listing the problems (at
 * most 10 unknown properties), before anything is written. The library
 * refuses the rest itself (an empty name, a bad CIDR, a past expiry: 400
 * `api_key_invalid_input`).
 *
 * @module
 */
import { readJsonBody, RequestBodyError } from "../../safe_response/fetch/mod.ts";
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
type Kind = "string" | "number" | "string[]";

function hasKind(value: unknown, kind: Kind): boolean {
  switch (kind) {
    case "string":
      return typeof value === "string";
    case "number":
      return typeof value === "number";
    case "string[]":
      return Array.isArray(value) && value.every((item) => typeof item === "string");
  }
}

/** Largest body the demo reads, in bytes. */
const MAX_BODY_BYTES = 102_400;
/** Unknown properties named at most, and characters of each name shown. */
const MAX_LISTED_UNKNOWN = 10;
const MAX_SHOWN_NAME = 64;

/** The problems of unknown properties in `names`: at most `MAX_LISTED_UNKNOWN`, then a count. */
function unknownProperties(names: readonly string[]): string[] {
  const listed = names.slice(0, MAX_LISTED_UNKNOWN).map((name) =>
    `property ${name.length > MAX_SHOWN_NAME ? `${name.slice(0, MAX_SHOWN_NAME)}…` : name} ` +
    "should not exist"
  );
  const more = names.length - listed.length;
  return more > 0 ? [...listed, `and ${more} more unknown properties`] : listed;
}

/**
 * The JSON object body of `request` with `fields` (name to kind; a `?`
 * suffix makes it optional) checked; unknown fields are refused. Throws the
 * 400 `DemoHttpError`, or `RequestBodyError` (413 past 100 KiB).
 */
export async function jsonBody<T>(request: Request, fields: Record<string, string>): Promise<T> {
  let body: unknown;
  try {
    body = await readJsonBody(request, { maxBytes: MAX_BODY_BYTES });
  } catch (error) {
    if (!(error instanceof RequestBodyError) || error.status !== 400) throw error;
  }
  const problems: string[] = [];
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    problems.push("the body must be a JSON object");
  } else {
    for (const [name, spec] of Object.entries(fields)) {
      const optional = spec.endsWith("?");
      const kind = (optional ? spec.slice(0, -1) : spec) as Kind;
      const value = Object.hasOwn(body, name) ? (body as Bag)[name] : undefined;
      if (value === undefined ? !optional : !hasKind(value, kind)) {
        problems.push(`${name} must be a ${kind}`);
      }
    }
    problems.push(
      ...unknownProperties(Object.keys(body).filter((name) => !Object.hasOwn(fields, name))),
    );
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
