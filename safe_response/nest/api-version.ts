/**
 * The route's version under Nest versioning (`enableVersioning`, `@Version`,
 * `@Controller({ version })`), the default of `meta.apiVersion`.
 *
 * @module
 */
import { type VersioningOptions, VersioningType } from "@nestjs/common";
import type { Reflector } from "@nestjs/core";
import { pathOf, type RequestLike, requestTarget } from "./http-exchange.ts";
import { NEST_VERSION_METADATA } from "./safe-response.constants.ts";

/** A route's Nest version: one, several (chosen per request), or none. */
export type RouteVersion = string | readonly string[] | undefined;

/**
 * `@Version` of the handler, else of the controller, else the versioning
 * `defaultVersion`; `VERSION_NEUTRAL` counts as none. `undefined` when the
 * app does not use versioning (Nest then ignores `@Version` too).
 */
export function readRouteVersion(
  reflector: Reflector,
  targets: Parameters<Reflector["getAllAndOverride"]>[1],
  versioning: VersioningOptions | undefined,
): RouteVersion {
  if (versioning === undefined) return undefined;
  const value = reflector.getAllAndOverride<VersioningOptions["defaultVersion"]>(
    NEST_VERSION_METADATA,
    targets,
  ) ?? versioning.defaultVersion;
  const versions = (Array.isArray(value) ? value : [value])
    .filter((version): version is string => typeof version === "string");
  return versions.length <= 1 ? versions[0] : versions;
}

function header(request: RequestLike, name: string): string[] {
  const value = request.headers?.[name.toLowerCase()];
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

function candidates(request: RequestLike, versioning: VersioningOptions): string[] {
  switch (versioning.type) {
    case VersioningType.URI: {
      const prefix = versioning.prefix === false ? "" : versioning.prefix ?? "v";
      return pathOf(requestTarget(request)).split("/")
        .filter((segment) => segment.startsWith(prefix))
        .map((segment) => segment.slice(prefix.length));
    }
    case VersioningType.HEADER:
      return header(request, versioning.header).map((value) => value.trim());
    case VersioningType.MEDIA_TYPE:
      return header(request, "accept").flatMap((value) => value.split(/[,;]/))
        .map((part) => part.trim())
        .filter((part) => part.startsWith(versioning.key))
        .map((part) => part.slice(versioning.key.length));
    default: {
      const extracted = versioning.extractor(request);
      return Array.isArray(extracted) ? extracted : [extracted];
    }
  }
}

/** Which of a route's `versions` the request asked for, when it names one. */
export function requestVersion(
  versions: readonly string[],
  request: RequestLike,
  versioning: VersioningOptions,
): string | undefined {
  try {
    return candidates(request, versioning).find((version) => versions.includes(version));
  } catch {
    return undefined; // a custom extractor that throws
  }
}
