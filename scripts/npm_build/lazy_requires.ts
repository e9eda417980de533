/**
 * CommonJS detail of the npm build: in a file that is not an entry point, a
 * `const x = require("./y.js")` of the package's own file becomes a function
 * that requires it on first use (`(x()).name`), so `require("./api-keys/nest")`
 * runs the files a class definition needs (a base class, a decorator's
 * injection token) and leaves the rest (the service's settings, limits,
 * storage checks) to the first call that reaches them. Node caches each file
 * once, so a class stays one class across entry points.
 *
 * Only a file whose top level declares and nothing else (no loop, `if` or
 * call filling a table or a global) is loaded late: its evaluation changes
 * nothing another file could see before a value of it is read. A file used
 * other than as `x.name` keeps its eager `require`. The ESM build is left
 * as is (an `import` cannot wait).
 *
 * The same test names the files a bundler must keep when they are imported
 * for nothing ({@link effectfulFiles}: `package.json`'s `sideEffects`).
 *
 * @module
 */

import ts from "typescript";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";

/** Top-level statements `tsc` emits around the declarations of a CommonJS file. */
const PREAMBLE =
  /^("use strict";|Object\.defineProperty\(exports, |exports\.[\w$]+ = |[\w$]+ = __decorate\(|__exportStar\()/;

function parse(code: string): ts.SourceFile {
  return ts.createSourceFile("x.js", code, ts.ScriptTarget.Latest, true, ts.ScriptKind.JS);
}

/**
 * Whether the top level of emitted CommonJS `code` only declares (functions,
 * classes, variables, exports, decorations), so loading it late is unseen.
 */
export function isDeclarative(code: string): boolean {
  const file = parse(code);
  return file.statements.every((statement) =>
    ts.isFunctionDeclaration(statement) || ts.isClassDeclaration(statement) ||
    ts.isVariableStatement(statement) || PREAMBLE.test(statement.getText(file))
  );
}

/** `const|var name = require("./relative")`: the name and the specifier. */
function relativeRequire(statement: ts.Statement): { name: string; specifier: string } | undefined {
  if (!ts.isVariableStatement(statement)) return undefined;
  const [declaration, ...more] = statement.declarationList.declarations;
  if (more.length > 0 || !ts.isIdentifier(declaration.name)) return undefined;
  const call = declaration.initializer;
  if (
    call === undefined || !ts.isCallExpression(call) || !ts.isIdentifier(call.expression) ||
    call.expression.text !== "require" || call.arguments.length !== 1
  ) return undefined;
  const [argument] = call.arguments;
  if (!ts.isStringLiteral(argument) || !argument.text.startsWith(".")) return undefined;
  return { name: declaration.name.text, specifier: argument.text };
}

/**
 * Rewrites the relative requires of CommonJS `code` that `lateOk(specifier)`
 * allows and whose every use reads a property: `x.name` → `(x()).name`.
 */
export function lazyRequires(code: string, lateOk: (specifier: string) => boolean): string {
  const file = parse(code);
  const candidates = new Map<string, { statement: ts.Statement; specifier: string }>();
  for (const statement of file.statements) {
    const found = relativeRequire(statement);
    if (found && lateOk(found.specifier)) candidates.set(found.name, { statement, ...found });
  }
  if (candidates.size === 0) return code;
  const uses = new Map<string, ts.Identifier[]>();
  const eager = new Set<string>();
  const visit = (node: ts.Node): void => {
    if (ts.isIdentifier(node) && candidates.has(node.text)) {
      const { parent } = node;
      if (ts.isVariableDeclaration(parent) && parent.name === node) return;
      if (ts.isPropertyAccessExpression(parent) && parent.expression === node) {
        uses.set(node.text, [...uses.get(node.text) ?? [], node]);
      } else if (!(ts.isPropertyAccessExpression(parent) && parent.name === node)) {
        eager.add(node.text);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  const edits: { start: number; end: number; text: string }[] = [];
  for (const [name, { statement, specifier }] of candidates) {
    if (eager.has(name)) continue;
    edits.push({
      start: statement.getStart(file),
      end: statement.end,
      text: `var ${name}$; function ${name}() { return ${name}$ ??= require(${
        JSON.stringify(specifier)
      }); }`,
    });
    for (const use of uses.get(name) ?? []) {
      // Parenthesised: `new (x()).Name()` constructs `Name`, `new x().Name()` would call `x`.
      edits.push({ start: use.getStart(file), end: use.end, text: `(${name}())` });
    }
  }
  edits.sort((a, b) => b.start - a.start);
  let out = code;
  for (const { start, end, text } of edits) out = out.slice(0, start) + text + out.slice(end);
  return out;
}

/** The `.js` files under `dir`, absolute. */
function jsFiles(dir: string): string[] {
  return readdirSync(dir).sort().flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return jsFiles(path);
    return name.endsWith(".js") ? [path] : [];
  });
}

/**
 * The `.js` files under `dir` (relative to it) whose top level does more than
 * declare, e.g. `customElements.define(...)`: a bundler must not drop one that
 * is imported for no value. Run on `tsc`'s CommonJS output, before the entries
 * are wrapped (./peer_guards.ts).
 */
export function effectfulFiles(dir: string): string[] {
  return jsFiles(dir).filter((path) => !isDeclarative(readFileSync(path, "utf8")))
    .map((path) => relative(dir, path));
}

/**
 * Applies {@link lazyRequires} to every CommonJS file under `dir` but the
 * `entries` (paths relative to `dir`); answers how many files changed.
 */
export function lazyRequiresIn(dir: string, entries: ReadonlySet<string>): number {
  const files = jsFiles(dir);
  const code = new Map(files.map((path) => [path, readFileSync(path, "utf8")]));
  const declarative = new Set(files.filter((path) => isDeclarative(code.get(path)!)));
  let changed = 0;
  for (const path of files) {
    if (entries.has(relative(dir, path))) continue;
    const before = code.get(path)!;
    const after = lazyRequires(
      before,
      (specifier) => declarative.has(join(dirname(path), specifier)),
    );
    if (after === before) continue;
    writeFileSync(path, after);
    changed++;
  }
  return changed;
}
