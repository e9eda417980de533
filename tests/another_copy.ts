/**
 * A second instance of a source module, as an app loading both the ESM and
 * the CommonJS build of the library holds two copies of it: the module at
 * `path` (relative to the test file `from`, written with `.ts`) imported
 * under another URL, with the extension the running tests have (`.js` once
 * compiled for Node).
 */
export function anotherCopy<T>(path: string, from: string): Promise<T> {
  const extension = new URL(import.meta.url).pathname.endsWith(".js") ? ".js" : ".ts";
  return import(new URL(`${path.replace(/\.ts$/, extension)}?another-copy`, from).href);
}
