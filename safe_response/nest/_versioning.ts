/**
 * The route's version under Nest versioning (`enableVersioning`, `@Version`,
 * `@Controller({ version })`), the default of `meta.apiVersion`, and the one
 * a request chose when the route has several.
 *
 * @module
 */
import { type VersioningOptions, VersioningType } from "@nestjs/common";
import { originForm } from "../../telemetry/_fetch_target.ts";
import type { HttpExchange } from "../responder.ts";

/** Nest's `VERSION_METADATA` key of `@Version` and `@Controller({ version })` (Nest 10 to 12). */
const NEST_VERSION_METADATA = "__version__";

/** A route's Nest version: one, several (chosen per request), or none. */
export type RouteVersion = string | readonly string[] | undefined;

/**
 * `@Version` of the handler, else of the controller, else the versioning
 * `defaultVersion`; `VERSION_NEUTRAL` counts as none. `undefined` when the
 * app does not use versioning (Nest then ignores `@Version` too).
 */
export function readRouteVersion(
  controller: object,
  handler: object,
  versioning: VersioningOptions | undefined,
): RouteVersion {
  if (versioning === undefined) return undefined;
  const value = Reflect.getMetadata(NEST_VERSION_METADATA, handler) ??
    Reflect.getMetadata(NEST_VERSION_METADATA, controller) ?? versioning.defaultVersion;
  const versions = (Array.isArray(value) ? value : [value])
    .filter((version): version is string => typeof version === "string");
  return versions.length <= 1 ? versions[0] : versions;
}

function header(exchange: HttpExchange, name: string): string[] {
  const value = exchange.requestHeader(name);
  return value === undefined ? [] : [value];
}

/** `text` split at each `separator` outside a quoted string (a `\\` escaping the next character). */
function splitOutsideQuotes(text: string, separator: string): string[] {
  const parts: string[] = [];
  let quoted = false;
  let from = 0;
  for (let index = 0; index < text.length; index++) {
    const char = text[index];
    if (quoted && char === "\\") index++;
    else if (char === '"') quoted = !quoted;
    else if (char === separator && !quoted) {
      parts.push(text.slice(from, index));
      from = index + 1;
    }
  }
  parts.push(text.slice(from));
  return parts;
}

/**
 * The version an `Accept` value names under media-type versioning, as Nest 12 reads it: its
 * ranges and their parameters split outside quoted strings, each range's type skipped, the first
 * parameter starting with `key` taken (a quoted one unquoted).
 */
function mediaTypeVersion(accept: string | undefined, key: string): string | undefined {
  if (accept === undefined) return undefined;
  for (const range of splitOutsideQuotes(accept, ",")) {
    for (const parameter of splitOutsideQuotes(range, ";").slice(1)) {
      const trimmed = parameter.trim();
      if (!trimmed.startsWith(key)) continue;
      const version = trimmed.slice(key.length);
      return version.length >= 2 && version.startsWith('"') && version.endsWith('"')
        ? version.slice(1, -1).replace(/\\([\s\S])/g, "$1")
        : version;
    }
  }
  return undefined;
}

function candidates(exchange: HttpExchange, versioning: VersioningOptions): string[] {
  switch (versioning.type) {
    case VersioningType.URI: {
      const prefix = versioning.prefix === false ? "" : versioning.prefix ?? "v";
      return originForm(exchange.target).split("?")[0].split("/")
        .filter((segment) => segment.startsWith(prefix))
        .map((segment) => segment.slice(prefix.length));
    }
    case VersioningType.HEADER:
      return header(exchange, versioning.header).map((value) => value.trim());
    case VersioningType.MEDIA_TYPE: {
      const version = mediaTypeVersion(header(exchange, "accept")[0], versioning.key);
      return version === undefined ? [] : [version];
    }
    default: {
      const extracted = versioning.extractor(exchange.request);
      return Array.isArray(extracted) ? extracted : [extracted];
    }
  }
}

/** Which of a route's `versions` the request asked for, when it names one. */
export function requestVersion(
  versions: readonly string[],
  exchange: HttpExchange,
  versioning: VersioningOptions,
): string | undefined {
  try {
    return candidates(exchange, versioning).find((version) => versions.includes(version));
  } catch {
    return undefined; // a custom extractor that throws
  }
}
