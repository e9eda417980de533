/**
 * Finds a provider of an optional peer package in the application's
 * container, without ever bundling or pinning the package: the class is
 * imported lazily through a runtime specifier (the bare name, resolved like
 * the application's own imports on Node and in a Deno workspace; then
 * `npm:<name>`, which Deno resolves to the copy already installed), then
 * looked up with `ModuleRef.get(..., { strict: false })`. A second copy of
 * the package would hold a different class and never match the app's provider.
 *
 * @module
 */
import type { ModuleRef } from "@nestjs/core";

async function importExport(packageName: string, exportName: string): Promise<unknown> {
  for (const specifier of [packageName, `npm:${packageName}`]) {
    try {
      return (await import(specifier))[exportName]; // a runtime value: not a static dependency
    } catch {
      // not resolvable this way: try the next specifier
    }
  }
  return undefined;
}

/** The provider, or `undefined` when the package or the provider is absent. */
export async function findOptionalProvider(
  moduleRef: ModuleRef,
  packageName: string,
  exportName: string,
): Promise<unknown> {
  const token = await importExport(packageName, exportName);
  if (typeof token !== "function") return undefined;
  try {
    return moduleRef.get(token as new () => unknown, { strict: false });
  } catch {
    return undefined;
  }
}
