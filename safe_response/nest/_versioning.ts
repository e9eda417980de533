/**
 * The route's version under Nest versioning (`enableVersioning`, `@Version`,
 * `@Controller({ version })`), the default of `meta.apiVersion`, and the one
 * a request chose when the route has several.
 *
 * @module
 */
import { type VersioningOptions, VersioningType } from "@nestjs/common";
import { originForm } from "../_request_target.ts";
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
    case VersioningType.MEDIA_TYPE:
      return header(exchange, "accept").flatMap((value) => value.split(/[,;]/))
        .map((part) => part.trim())
        .filter((part) => part.startsWith(versioning.key))
        .map((part) => part.slice(versioning.key.length));
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
