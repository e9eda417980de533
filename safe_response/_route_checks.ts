/**
 * Checks of single route options, shared by the bindings that declare routes:
 * the Nest decorators (`./safe-response/nest`, `./safe-response/openapi`) and
 * the Fetch binding's route options. A bad value throws a `TypeError` naming
 * where it was given, when the route is declared.
 *
 * @module
 */
import { URI_PARTS } from "./_link_header.ts";
import { isHttpStatus } from "./http_status.ts";
import type { ErrorFormat } from "./options.ts";

/**
 * `status` when it is an HTTP status from `min` (default 100; the Fetch binding's 200) to 599;
 * else throws naming `decorator`.
 */
export function httpStatusOption(status: unknown, decorator: string, min = 100): number {
  if (!isHttpStatus(status, min)) {
    throw new TypeError(`${decorator}: \`statusCode\` must be an HTTP status (${min}-599)`);
  }
  return status;
}

/** `value` when it is a non-empty string; else throws `<what> must be a non-empty string`. */
export function nonEmptyOption(value: unknown, what: string): string {
  if (typeof value !== "string" || value === "") {
    throw new TypeError(`${what} must be a non-empty string`);
  }
  return value;
}

/** A character of a path, query or fragment (`pchar`, `/`, `?`), or a percent-encoded octet. */
const PCHARS = /^(?:[\w\-.~!$&'()*+,;=:@/?]|%[\dA-Fa-f]{2})*$/;
/** An authority: `pchar`s without `/` and `?`, and an IP literal in brackets. */
const AUTHORITY = /^(?:[\w\-.~!$&'()*+,;=:@]|%[\dA-Fa-f]{2}|\[[\dA-Fa-f:.vV\w\-~!$&'()*+,;=]*\])*$/;

/**
 * Whether `value` is an RFC 3986 URI reference (what OpenAPI's `format: uri-reference` accepts):
 * ASCII only, other characters percent-encoded.
 */
export function isUriReference(value: string): boolean {
  const [, scheme, authority, path, query, fragment] = URI_PARTS.exec(value)!;
  return (scheme === undefined || /^[A-Za-z][A-Za-z\d+.-]*$/.test(scheme)) &&
    (authority === undefined || AUTHORITY.test(authority)) &&
    [path, query ?? "", fragment ?? ""].every((part) => PCHARS.test(part)) &&
    // A relative reference's first segment holds no `:` (it would read as a scheme).
    (scheme !== undefined || authority !== undefined || !/^[^/]*:/.test(path));
}

/**
 * `value` when it can be a problem type URI (a non-empty RFC 3986 URI
 * reference); else throws `<what> must be a URI`.
 */
export function problemTypeOption(value: unknown, what: string): string {
  if (typeof value !== "string" || value === "" || !isUriReference(value)) {
    throw new TypeError(`${what} must be a URI`);
  }
  return value;
}

/**
 * Whether a route's errors are problem details, from `errorFormat` or its
 * alias `problemDetails` (`undefined` when neither is given); throws naming
 * `who` on a bad value. When the two disagree `errorFormat` wins, with a
 * warning (seed 0.15).
 */
export function errorFormatOption(
  errorFormat: ErrorFormat | undefined,
  problemDetails: unknown,
  who: string,
): boolean | undefined {
  if (errorFormat !== undefined && errorFormat !== "safe" && errorFormat !== "problem") {
    throw new TypeError(`${who}: \`errorFormat\` must be "safe" or "problem"`);
  }
  if (problemDetails !== undefined && typeof problemDetails !== "boolean") {
    throw new TypeError(`${who}: \`problemDetails\` must be a boolean`);
  }
  const problem = errorFormat === undefined ? problemDetails : errorFormat === "problem";
  if (problemDetails !== undefined && problem !== problemDetails) {
    console.warn(
      `${who}: \`errorFormat\` (${JSON.stringify(errorFormat)}) and \`problemDetails\` ` +
        `(${problemDetails}) disagree; \`errorFormat\` wins`,
    );
  }
  return problem;
}
