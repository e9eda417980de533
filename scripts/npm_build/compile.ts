/**
 * TypeScript compiler API wrapper: emits the package sources as ESM or
 * CommonJS with declarations, rewriting `.ts` import extensions to `.js`.
 *
 * @module
 */

import ts from "typescript";
import { existsSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { ROOT } from "./config.ts";

/** Output module format. */
export type ModuleFormat = "esm" | "cjs";

/** Folder holding `@types/node` (Deno keeps it under `node_modules/.deno`). */
export function nodeTypesRoot(): string[] {
  const direct = join(ROOT, "node_modules", "@types");
  if (existsSync(join(direct, "node"))) return [direct];
  const denoDir = join(ROOT, "node_modules", ".deno");
  const candidates = existsSync(denoDir)
    ? readdirSync(denoDir).filter((name) => name.startsWith("@types+node@")).sort()
    : [];
  const latest = candidates.at(-1);
  if (latest === undefined) {
    throw new Error("@types/node not found under node_modules; run `deno install` first");
  }
  return [join(denoDir, latest, "node_modules", "@types")];
}

/** Compiler options shared by every emit: ES2022, legacy decorators with metadata. */
export function compilerOptions(
  format: ModuleFormat,
  outDir: string,
  declaration: boolean,
): ts.CompilerOptions {
  return {
    target: ts.ScriptTarget.ES2022,
    lib: ["lib.es2023.d.ts", "lib.dom.d.ts", "lib.dom.iterable.d.ts"],
    module: format === "esm" ? ts.ModuleKind.ES2022 : ts.ModuleKind.CommonJS,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    rewriteRelativeImportExtensions: true,
    allowImportingTsExtensions: false,
    experimentalDecorators: true,
    emitDecoratorMetadata: true,
    useDefineForClassFields: true,
    esModuleInterop: true,
    strict: true,
    skipLibCheck: true,
    isolatedModules: true,
    resolveJsonModule: false,
    declaration,
    sourceMap: false,
    removeComments: false,
    newLine: ts.NewLineKind.LineFeed,
    rootDir: ROOT,
    outDir,
    typeRoots: nodeTypesRoot(),
    types: ["node"],
    noEmitOnError: false,
  };
}

/** `./x.ts` → `./x.js` for relative specifiers; others unchanged. */
export function rewriteSpecifier(specifier: string): string {
  if (!specifier.startsWith("./") && !specifier.startsWith("../")) return specifier;
  return specifier.replace(/\.ts$/, ".js").replace(/\.mts$/, ".mjs").replace(/\.cts$/, ".cjs");
}

/**
 * Declaration transformer: `rewriteRelativeImportExtensions` rewrites `.ts`
 * specifiers in JavaScript only, so `.d.ts` files would still say
 * `from "./types.ts"`; this makes them say `./types.js`, which every
 * TypeScript version and resolution mode understands.
 */
function rewriteDeclarationSpecifiers(
  context: ts.TransformationContext,
): (node: ts.SourceFile | ts.Bundle) => ts.SourceFile | ts.Bundle {
  const { factory } = context;
  const literal = (node: ts.Expression | undefined): ts.StringLiteral | undefined => {
    if (node === undefined || !ts.isStringLiteral(node)) return undefined;
    const rewritten = rewriteSpecifier(node.text);
    return rewritten === node.text ? undefined : factory.createStringLiteral(rewritten);
  };
  const visit = (node: ts.Node): ts.Node => {
    if (ts.isImportDeclaration(node)) {
      const specifier = literal(node.moduleSpecifier);
      if (specifier) {
        return factory.updateImportDeclaration(
          node,
          node.modifiers,
          node.importClause,
          specifier,
          node.attributes,
        );
      }
    } else if (ts.isExportDeclaration(node)) {
      const specifier = literal(node.moduleSpecifier);
      if (specifier) {
        return factory.updateExportDeclaration(
          node,
          node.modifiers,
          node.isTypeOnly,
          node.exportClause,
          specifier,
          node.attributes,
        );
      }
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      const specifier = literal(node.argument.literal as ts.Expression);
      if (specifier) {
        return factory.updateImportTypeNode(
          node,
          factory.createLiteralTypeNode(specifier),
          node.attributes,
          node.qualifier,
          node.typeArguments,
          node.isTypeOf,
        );
      }
    }
    return ts.visitEachChild(node, visit, context);
  };
  return (node) => ts.visitNode(node, visit) as ts.SourceFile | ts.Bundle;
}

/** Result of one compilation. */
export interface CompileResult {
  /** Files written, relative to `outDir`, sorted. */
  written: string[];
  /** Formatted diagnostics (empty when clean). */
  errors: string[];
}

const formatHost: ts.FormatDiagnosticsHost = {
  getCanonicalFileName: (fileName) => fileName,
  getCurrentDirectory: () => ROOT,
  getNewLine: () => "\n",
};

/**
 * Compiles `rootFiles` (absolute paths) and everything they import from the
 * repository into `options.outDir`, mirroring the repository layout.
 * `writeFilter` may skip files (it receives the path relative to `outDir`).
 */
export function compile(
  rootFiles: string[],
  options: ts.CompilerOptions,
  writeFilter: (relPath: string) => boolean = () => true,
): CompileResult {
  const host = ts.createCompilerHost(options, true);
  const written: string[] = [];
  const outDir = options.outDir!;
  const writeFile: ts.WriteFileCallback = (fileName, text, bom, onError, sources, data) => {
    const rel = relative(outDir, fileName);
    if (!writeFilter(rel)) return;
    written.push(rel);
    host.writeFile(fileName, text, bom, onError, sources, data);
  };
  const program = ts.createProgram({ rootNames: rootFiles, options, host });
  const emit = program.emit(undefined, writeFile, undefined, false, {
    afterDeclarations: [rewriteDeclarationSpecifiers],
  });
  const diagnostics = [...ts.getPreEmitDiagnostics(program), ...emit.diagnostics];
  const errors = diagnostics
    .filter((d) => d.category === ts.DiagnosticCategory.Error)
    .map((d) => ts.formatDiagnostic(d, formatHost).trimEnd());
  return { written: written.sort(), errors };
}
