/**
 * The web page's files: the HTML and script from `demo/page/`, and the
 * library's `./client` and `./client/elements` modules, each bundled at start
 * with esbuild into one ES module.
 *
 * @module
 */
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

/** What the page controller serves. */
export interface PageAssets {
  /** `/`. */
  html: string;
  /** `/page.js`. */
  script: string;
  /** `/client.js`: `client/mod.ts` as a browser ES module. */
  client: string;
  /** `/elements.js`: `client/elements/mod.ts` (`<api-keys-manager>`) as a browser ES module. */
  elements: string;
}

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

/** Bundles a library entry point for browsers (ES2022, minified). */
async function bundle(entry: string): Promise<string> {
  try {
    const result = await esbuild.build({
      entryPoints: [here(entry)],
      bundle: true,
      format: "esm",
      platform: "browser",
      target: "es2022",
      minify: true,
      write: false,
      logLevel: "silent",
    });
    return result.outputFiles[0].text;
  } finally {
    // The esbuild service would otherwise keep the process alive.
    await esbuild.stop();
  }
}

/** Bundles `client/mod.ts` for browsers (ES2022, minified). */
export function bundleClient(): Promise<string> {
  return bundle("../client/mod.ts");
}

/** Bundles `client/elements/mod.ts` (`<api-keys-manager>`) for browsers (ES2022, minified). */
export function bundleElements(): Promise<string> {
  return bundle("../client/elements/mod.ts");
}

/** Reads the page and builds both bundles (one after the other: each stops esbuild). */
export async function loadPageAssets(): Promise<PageAssets> {
  const [html, script] = await Promise.all([
    readFile(here("./page/index.html"), "utf8"),
    readFile(here("./page/page.js"), "utf8"),
  ]);
  const client = await bundleClient();
  return { html, script, client, elements: await bundleElements() };
}
