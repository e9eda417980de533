/**
 * client/ stands alone: it type-checks with the DOM library and no Deno or
 * Node types (under strict user settings), and imports nothing outside itself.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const clientDir = fileURLToPath(new URL("../../client/", import.meta.url));
const entry = fileURLToPath(new URL("../../client/mod.ts", import.meta.url));
const elements = fileURLToPath(new URL("../../client/elements/mod.ts", import.meta.url));
const expectErrors = fileURLToPath(new URL("./types_errors.ts", import.meta.url));

/** A browser project's settings: DOM library, no ambient types, strict flags. */
const options: ts.CompilerOptions = {
  lib: ["lib.es2022.d.ts", "lib.dom.d.ts"],
  types: [],
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  allowImportingTsExtensions: true,
  noEmit: true,
  strict: true,
  exactOptionalPropertyTypes: true,
  noUncheckedIndexedAccess: true,
  noImplicitReturns: true,
  noUnusedLocals: true,
  noUnusedParameters: true,
  verbatimModuleSyntax: true,
};

/** Diagnostics of a program over `files`, plus in-memory `extra` files. */
function diagnostics(files: string[], extra: Record<string, string> = {}): string[] {
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile;
  host.getSourceFile = (name, version, ...rest) =>
    name in extra
      ? ts.createSourceFile(name, extra[name], version)
      : getSourceFile.call(host, name, version, ...rest);
  const fileExists = host.fileExists;
  host.fileExists = (name) => name in extra || fileExists.call(host, name);
  const program = ts.createProgram([...files, ...Object.keys(extra)], options, host);
  return ts.getPreEmitDiagnostics(program).map((diagnostic) =>
    `${diagnostic.file?.fileName ?? ""}: TS${diagnostic.code} ${
      ts.flattenDiagnosticMessageText(diagnostic.messageText, " ")
    }`
  );
}

describe("client/ stands alone", () => {
  it("type-checks (client/elements/ too) with lib es2022 + dom and types: [], expected errors included", () => {
    // types_errors.ts holds @ts-expect-error lines: an unused one is reported here too.
    assert.deepEqual(diagnostics([entry, elements, expectErrors]), []);
  });

  it("that compile really has no Deno or Node globals", () => {
    const probe = "/virtual/probe.ts";
    const found = diagnostics([], {
      [probe]: "export const v = [Deno.version, process.env, Buffer.from('')];\n",
    });
    assert.equal(
      found.filter((line) => line.includes("Cannot find name")).length,
      3,
      found.join("\n"),
    );
  });

  it("imports only sibling modules, and only types from types.ts", () => {
    const files = readdirSync(clientDir).filter((name) => name.endsWith(".ts"));
    assert.ok(files.length >= 5, files.join());
    for (const name of files) {
      const source = readFileSync(clientDir + name, "utf8");
      const specifiers = [...source.matchAll(/^(?:import|export)[^;]*?from\s+"([^"]+)"/gms)].map(
        (match) => match[1],
      );
      for (const specifier of specifiers) {
        assert.match(specifier, /^\.\/[a-z_]+\.ts$/, `${name} imports ${specifier}`);
        assert.ok(files.includes(specifier.slice(2)), `${name} imports ${specifier}`);
      }
      assert.doesNotMatch(source, /\bimport\s*\(|\brequire\s*\(/, `${name}: dynamic import`);
    }
    assert.doesNotMatch(readFileSync(clientDir + "types.ts", "utf8"), /^import /m);
  });
});
