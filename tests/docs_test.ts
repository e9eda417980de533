/**
 * The manual stays in shape: README.md is a landing page of at most 300 lines
 * whose first two commands are `npm start` (the demo) and `npm test` (the
 * suite), whose entry-point table lists every subpath of `deno.json`, and every
 * relative link of README.md, docs/*.md and demo/README.md reaches an existing
 * file and, with an `#anchor`, a heading of that file; docs/settings-page.md
 * lists every i18n key and CSS custom property of `<api-keys-manager>`; every
 * code block is true: TypeScript blocks type-check as printed (one `deno check`,
 * fragments after the example or reader context they continue), `run` blocks run
 * under `deno run`, JSON blocks parse, install commands are marked
 * (docs/development.md, "Code blocks in the docs").
 *
 * Repository documentation, not the package: the Node run of the built package
 * leaves this file out (`scripts/npm_build/node_tests.ts`).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, normalize } from "node:path";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { type AddressInfo, createServer } from "node:net";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { STYLES } from "../client/elements/_styles.ts";
import { API_KEYS_MANAGER_STRINGS } from "../client/elements/strings.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const README_MAX_LINES = 300;

function read(path: string): string {
  return readFileSync(join(ROOT, path), "utf8");
}

/** The checked pages, repository-relative. */
function pages(): string[] {
  const docs = readdirSync(join(ROOT, "docs")).filter((name) => name.endsWith(".md")).sort();
  return ["README.md", ...docs.map((name) => `docs/${name}`), "demo/README.md"];
}

/** `text` without fenced code blocks, so nothing inside them counts as a heading or link. */
function withoutFences(text: string): string {
  let fenced = false;
  return text.split("\n").filter((line) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      return false;
    }
    return !fenced;
  }).join("\n");
}

/** `text` without code spans and HTML comments. */
function withoutInlineCode(text: string): string {
  return text.replace(/<!--[\s\S]*?-->/g, "").replace(/(`+)[\s\S]*?\1/g, "");
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as `-`. */
function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/ /g, "-");
}

/** The anchors of a page's headings, with GitHub's `-1`, `-2` suffixes for repeats. */
function anchorsOf(path: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of withoutFences(read(path)).split("\n")) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading === null) continue;
    const base = slug(heading[1]);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** The link targets of a page (inline links outside code). */
function linksOf(path: string): string[] {
  const text = withoutInlineCode(withoutFences(read(path)));
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]);
}

/** What is wrong with `target` as a link of `page`, or `undefined`. */
function linkProblem(page: string, target: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined; // https:, mailto:
  const [pathPart, anchor] = target.split("#", 2);
  const file = pathPart === ""
    ? page
    : normalize(join(dirname(page), decodeURIComponent(pathPart))).replaceAll("\\", "/");
  if (!existsSync(join(ROOT, file))) {
    return `${file} does not exist`;
  }
  if (anchor === undefined || !file.endsWith(".md")) return undefined;
  return anchorsOf(file).has(anchor) ? undefined : `${file} has no heading #${anchor}`;
}

/**
 * A fenced code block: its page, fence line, language, text (the list indent removed) and the
 * directives of the HTML comment on the nearest non-blank line before the fence (the convention
 * is in docs/development.md, "Code blocks in the docs"):
 * `<!-- example: NAME -->` names a block, `<!-- continues: NAME -->` checks a fragment after the
 * example (or the reader's context in {@link CONTEXTS}) it continues, `<!-- run -->` also runs
 * it, `<!-- serve -->` starts it on a free `PORT` until it answers HTTP, `<!-- install -->` exempts an install command while the package is unpublished; `;` joins
 * several.
 */
interface CodeBlock {
  page: string;
  line: number;
  lang: string;
  code: string;
  example?: string;
  continues?: string;
  run: boolean;
  serve: boolean;
  install: boolean;
  problems: string[];
}

/** The languages whose blocks are checked: TypeScript type-checks (and may run), JSON parses. */
const TYPESCRIPT = new Set(["ts", "typescript"]);

/**
 * The reader's own code a fragment may continue instead of an example: what the guides name
 * without defining (a Prisma client, the module options, a session lookup, a mailer).
 */
const PRISMA_CONTEXT = `
import { PrismaApiKeyStorage } from "@saferoute/api-kit/api-keys";
import type { PrismaClient } from "./generated/prisma/client.ts";
declare const prisma: PrismaClient;
`;
const KEYS_CONTEXT = `${PRISMA_CONTEXT}
import { ApiKeyError, ApiKeysService, type ApiKeyStorage } from "@saferoute/api-kit/api-keys";
declare const peppers: Record<number, string>;
declare const storage: ApiKeyStorage;
declare const OLD_PEPPER_V1: string, OLD_PEPPER_V2: string, NEW_PEPPER: string;
declare function mailOwner(tenantId: string, text: string): void;
`;
const NEST_OPTIONS_CONTEXT = `
import type { ApiKeysModuleOptions } from "@saferoute/api-kit/api-keys/nest";
declare const options: ApiKeysModuleOptions;
`;
const NEST_CONTEXT = `${KEYS_CONTEXT}
import "reflect-metadata";
import { Controller, Get, Module, Post, Req, Res } from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
import {
  ApiKeysGuard,
  ApiKeysModule,
} from "@saferoute/api-kit/api-keys/nest";
${NEST_OPTIONS_CONTEXT}
declare function notifyOwner(event: unknown): void;
`;
const CONTEXTS: Record<string, string> = {
  /** The reader's Prisma Client (generated by `prisma generate`) and the Prisma storage. */
  prisma: PRISMA_CONTEXT,
  /** The API-key core's imports; the reader's peppers, storage, Prisma client, mailer. */
  keys: KEYS_CONTEXT,
  /** `keys` and a service made from them. */
  service: `${KEYS_CONTEXT}declare const service: ApiKeysService;\ndeclare const oldId: string;\n`,
  /** `keys`, Nest's imports and the reader's `ApiKeysModule` options. */
  nest: NEST_CONTEXT,
  /** The reader's `ApiKeysModule` options alone. */
  "nest-options": NEST_OPTIONS_CONTEXT,
  /** `nest` and the reader's root module. */
  "nest-app": `${NEST_CONTEXT}declare class AppModule {}\n`,
  /** The Nest safe-response imports. */
  "safe-nest": `
import { Controller, Get, Module } from "@nestjs/common";
import { Paginated, SafeResponseModule } from "@saferoute/api-kit/safe-response/nest";
`,
  /** An app on Nest with Swagger: its app, document config and module options. */
  "swagger-app": `
import type { INestApplication } from "@nestjs/common";
import { type OpenAPIObject, SwaggerModule } from "@nestjs/swagger";
import type { SafeResponseModuleOptions } from "@saferoute/api-kit/safe-response/nest";
import { applyGlobalErrors, applySchemaNames } from "@saferoute/api-kit/safe-response/openapi";
declare const app: INestApplication;
declare const config: Omit<OpenAPIObject, "paths">;
declare const options: SafeResponseModuleOptions;
`,
  /** A Fetch server's own session lookup and app. */
  web: `
declare function sessionOf(request: Request): { tenantId: string; role: string } | null;
declare function app(request: Request): Response | Promise<Response>;
`,
  /** A browser page's own rendering functions. */
  "client-ui": `
declare function render(items: unknown[]): void;
declare function showPager(page: number, totalPages: number, next: string | null): void;
declare function showError(code: string | undefined, message: string | undefined): void;
declare function retryIn(seconds: number): void;
`,
};

/**
 * The Prisma Client's constructor and the delegates the storage reads, as the library types them:
 * the unit run has no generated client. `DOCS_REAL_PRISMA_CLIENT=1` checks against the one
 * `prisma generate` wrote to generated/prisma (the PostgreSQL suite generates it); today that
 * fails on `expiryNotices: prisma.apiKeyExpiryNotice` (the library's delegate type is narrower
 * than Prisma 7's generated one: a library bug, open).
 */
const PRISMA_CLIENT_STANDIN =
  `import type { PrismaApiKeyStorage } from "@saferoute/api-kit/api-keys";
type Options = NonNullable<ConstructorParameters<typeof PrismaApiKeyStorage>[1]>;
type Client = ConstructorParameters<typeof PrismaApiKeyStorage>[0];
export interface PrismaClient extends Client {
  apiKeyExpiryNotice: NonNullable<Options["expiryNotices"]>;
  apiKeyRotationWait: NonNullable<Options["rotationWaits"]>;
}
export declare class PrismaClient {
  constructor(options: {
    adapter: unknown;
    transactionOptions?: { maxWait?: number; timeout?: number };
  });
}
`;

/** Files beside the blocks that a block imports by a relative path (the reader's own modules). */
const FILES: Record<string, string> = {
  "generated/prisma/client.ts": process.env.DOCS_REAL_PRISMA_CLIENT === "1"
    ? `export * from "${new URL("../generated/prisma/client.ts", import.meta.url).href}";\n`
    : PRISMA_CLIENT_STANDIN,
  "my_storage.ts": `import { InMemoryApiKeyStorage } from "@saferoute/api-kit/api-keys";
export class MyStorage extends InMemoryApiKeyStorage {}
`,
};

function directivesOf(
  comment: string,
): Pick<CodeBlock, "example" | "continues" | "run" | "serve" | "install" | "problems"> {
  const found: ReturnType<typeof directivesOf> = {
    run: false,
    serve: false,
    install: false,
    problems: [],
  };
  const inner = /^<!--([\s\S]*)-->$/.exec(comment.trim());
  if (inner === null) return found;
  for (const part of inner[1].split(";").map((text) => text.trim())) {
    const named = /^(example|continues):\s*([\w-]+)$/.exec(part);
    if (named !== null) found[named[1] as "example" | "continues"] = named[2];
    else if (part === "run" || part === "serve" || part === "install") found[part] = true;
    else found.problems.push(`unknown directive "${part}"`);
  }
  return found;
}

/** The fenced code blocks of `text` (the page `page`). */
function codeBlocks(page: string, text = read(page)): CodeBlock[] {
  const lines = text.split("\n");
  const blocks: CodeBlock[] = [];
  for (let index = 0; index < lines.length; index++) {
    const open = /^( *)(```|~~~)\s*([\w-]*)/.exec(lines[index]);
    if (open === null) continue;
    let end = index + 1;
    while (end < lines.length && !new RegExp(`^\\s*${open[2]}\\s*$`).test(lines[end])) end++;
    const indent = new RegExp(`^ {0,${open[1].length}}`);
    const code = lines.slice(index + 1, end).map((line) => line.replace(indent, "")).join("\n");
    let before = index - 1;
    while (before >= 0 && lines[before].trim() === "") before--;
    const directives = directivesOf(before >= 0 ? lines[before] : "");
    blocks.push({ page, line: index + 1, lang: open[3], code, ...directives });
    index = end;
  }
  return blocks;
}

/** A TypeScript block as a module: the examples it continues, then its own lines, each line's origin. */
function programOf(
  block: CodeBlock,
  examples: Map<string, CodeBlock>,
): { code: string; origins: string[] } {
  const lines: string[] = [];
  const origins: string[] = [];
  const chain: CodeBlock[] = [];
  const seen = new Set<string>();
  let name = block.continues;
  while (name !== undefined) {
    if (seen.has(name)) throw new Error(`${block.page}:${block.line}: "${name}" continues itself`);
    seen.add(name);
    const example = examples.get(name);
    if (example !== undefined) {
      chain.unshift(example);
      name = example.continues;
    } else if (name in CONTEXTS) {
      CONTEXTS[name].split("\n").forEach((line, index) => {
        lines.push(line);
        origins.push(`tests/docs_test.ts (context "${name}", line ${index + 1})`);
      });
      name = undefined;
    } else {
      throw new Error(`${block.page}:${block.line} continues "${name}", which no block names`);
    }
  }
  for (const part of [...chain, block]) {
    part.code.split("\n").forEach((line, index) => {
      lines.push(line);
      origins.push(`${part.page}:${part.line + 1 + index}`);
    });
  }
  return { code: lines.join("\n") + "\n", origins };
}

/** Every code block of the checked pages, and the named ones by name. */
function allBlocks(): { blocks: CodeBlock[]; examples: Map<string, CodeBlock> } {
  const blocks = pages().flatMap((page) => codeBlocks(page));
  const examples = new Map<string, CodeBlock>();
  for (const block of blocks) {
    if (block.example === undefined) continue;
    if (examples.has(block.example)) {
      block.problems.push(`example "${block.example}" is named twice`);
    }
    examples.set(block.example, block);
  }
  return { blocks, examples };
}

/** A generated file's name for a block: `docs_api-keys_md_14.ts`. */
function fileNameOf(block: CodeBlock): string {
  return `${block.page.replace(/[/.]/g, "_")}_${block.line}.ts`;
}

/** `output` with each generated file's `name.ts:line:column` replaced by the doc line it came from. */
function mapToDocs(output: string, origins: Map<string, string[]>): string {
  return output.replace(
    /(?:file:\/\/)?\S*?([\w.-]+\.ts):(\d+):(\d+)/g,
    (whole, file, line, column) => {
      const origin = origins.get(file)?.[Number(line) - 1];
      return origin === undefined ? whole : `${origin}:${column} (${file})`;
    },
  );
}

/** A TCP port free a moment ago on 127.0.0.1. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The status of the first HTTP answer of `url`, polled until `child` exits or `ms` pass. */
async function firstAnswer(
  url: string,
  child: ChildProcess,
  ms: number,
): Promise<number | undefined> {
  const deadline = performance.now() + ms;
  while (performance.now() < deadline && child.exitCode === null) {
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(5_000) });
      await response.body?.cancel();
      return response.status;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  return undefined;
}

/** The environment the run blocks see: the pepper the guides read (32 bytes), nothing secret. */
const RUN_ENV = { API_KEY_PEPPER_V1: "docs-test-pepper-0123456789abcdefghij" };

describe("the manual", () => {
  it(`README.md has at most ${README_MAX_LINES} lines`, () => {
    const lines = read("README.md").replace(/\n$/, "").split("\n").length;
    assert.ok(lines <= README_MAX_LINES, `README.md has ${lines} lines`);
  });

  it("README.md's first two commands are npm start (the demo) and npm test (the suite)", () => {
    const block = /```[a-z]*\n([\s\S]*?)```/.exec(read("README.md"));
    assert.ok(block, "README.md has no code block");
    const commands = block[1].split("\n").map((line) => line.replace(/#.*/, "").trim())
      .filter((line) => line !== "");
    assert.equal(commands[0], "npm start");
    assert.equal(commands[1], "npm test");
  });

  it("README.md's entry-point table lists every subpath of deno.json", () => {
    const readme = read("README.md");
    const exports = Object.keys(JSON.parse(read("deno.json")).exports as Record<string, string>);
    const missing = exports.filter((subpath) => !readme.includes(`\n| \`${subpath}\``));
    assert.deepEqual(missing, []);
  });

  it("docs/settings-page.md lists every i18n key and CSS custom property of the element", () => {
    const docs = read("docs/settings-page.md");
    const names = [
      ...Object.keys(API_KEYS_MANAGER_STRINGS),
      ...[...STYLES.matchAll(/--api-keys-manager-[a-z-]+/g)].map((match) => match[0]),
    ];
    assert.deepEqual(names.filter((name) => !docs.includes(`\`${name}\``)), []);
  });

  for (const page of pages()) {
    it(`every relative link of ${page} resolves`, () => {
      const problems = linksOf(page).map((target) => linkProblem(page, target))
        .filter((problem) => problem !== undefined);
      assert.deepEqual(problems, []);
    });
  }

  it("the link checker sees links, anchors and missing files", () => {
    assert.deepEqual(linksOf("docs/README.md").includes("api-keys.md"), true);
    assert.equal(slug("Client IP, proxies and trust"), "client-ip-proxies-and-trust");
    assert.equal(slug("`ApiKeysService` options"), "apikeysservice-options");
    assert.equal(linkProblem("README.md", "docs/nope.md"), "docs/nope.md does not exist");
    assert.equal(
      linkProblem("README.md", "docs/README.md#nope"),
      "docs/README.md has no heading #nope",
    );
    assert.equal(linkProblem("docs/README.md", "../README.md#install"), undefined);
  });
});

describe("the code blocks", () => {
  const { blocks, examples } = allBlocks();
  const typescript = blocks.filter((block) => TYPESCRIPT.has(block.lang));

  it("every directive is known, names an example that exists, and fits its block", () => {
    const problems: string[] = [];
    for (const block of blocks) {
      const at = `${block.page}:${block.line}`;
      problems.push(...block.problems.map((problem) => `${at}: ${problem}`));
      if (block.install && block.lang !== "sh") {
        problems.push(`${at}: install on a ${block.lang} block`);
      }
      if (block.install && !/^(npm install|deno add|npx|#)/m.test(block.code)) {
        problems.push(`${at}: install on a block that installs nothing`);
      }
      const typed = TYPESCRIPT.has(block.lang);
      if (!typed && (block.run || block.serve || block.example || block.continues)) {
        problems.push(`${at}: example, continues, run and serve are for TypeScript blocks`);
      }
      if (block.continues && !examples.has(block.continues) && !(block.continues in CONTEXTS)) {
        problems.push(`${at}: continues "${block.continues}", which no block or context names`);
      }
    }
    assert.deepEqual(problems, []);
  });

  it("every install command is marked (exempt while the package is unpublished)", () => {
    const unmarked = blocks.filter((block) =>
      !block.install && /^\s*(npm install|deno add)\b/m.test(block.code)
    ).map((block) => `${block.page}:${block.line}`);
    assert.deepEqual(unmarked, []);
  });

  it("every deno task, npm script and script file a shell block names exists", () => {
    const tasks = Object.keys(JSON.parse(read("deno.json")).tasks as Record<string, string>);
    const scripts = Object.keys(JSON.parse(read("package.json")).scripts as Record<string, string>);
    const problems: string[] = [];
    for (const block of blocks.filter((block) => block.lang === "sh" && !block.install)) {
      const at = `${block.page}:${block.line}`;
      for (const [, task] of block.code.matchAll(/\bdeno task ([\w:-]+)/g)) {
        if (!tasks.includes(task)) problems.push(`${at}: no deno task ${task}`);
      }
      for (const [, script] of block.code.matchAll(/\bnpm (?:run )?([\w:-]+)/g)) {
        if (!scripts.includes(script)) problems.push(`${at}: no npm script ${script}`);
      }
      for (const [, file] of block.code.matchAll(/\bbash (scripts\/[\w./-]+)/g)) {
        if (!existsSync(join(ROOT, file))) problems.push(`${at}: no ${file}`);
      }
    }
    assert.deepEqual(problems, []);
  });

  it("every JSON block parses", () => {
    const problems: string[] = [];
    for (const block of blocks.filter((block) => block.lang === "json")) {
      try {
        JSON.parse(block.code);
      } catch (error) {
        problems.push(`${block.page}:${block.line}: ${(error as Error).message}`);
      }
    }
    assert.deepEqual(problems, []);
  });

  it(`every TypeScript block type-checks as printed (${typescript.length} blocks, one deno check)`, () => {
    const dir = mkdtempSync(join(tmpdir(), "api-kit-docs-"));
    try {
      const origins = new Map<string, string[]>();
      for (const [name, text] of Object.entries(FILES)) {
        mkdirSync(dirname(join(dir, name)), { recursive: true });
        writeFileSync(join(dir, name), text);
      }
      for (const block of typescript) {
        const program = programOf(block, examples);
        writeFileSync(join(dir, fileNameOf(block)), program.code);
        origins.set(fileNameOf(block), program.origins);
      }
      const checked = spawnSync(process.execPath, [
        "check",
        "--quiet",
        "--config",
        join(ROOT, "deno.json"),
        ...typescript.map((block) => join(dir, fileNameOf(block))),
      ], { cwd: ROOT, encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } });
      assert.equal(checked.status, 0, mapToDocs(checked.stderr + checked.stdout, origins));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  for (const block of typescript.filter((block) => block.run)) {
    it(`${block.page}:${block.line} runs under deno run`, () => {
      const dir = mkdtempSync(join(tmpdir(), "api-kit-docs-"));
      try {
        const program = programOf(block, examples);
        const file = join(dir, fileNameOf(block));
        writeFileSync(file, program.code);
        const ran = spawnSync(process.execPath, [
          "run",
          "--quiet",
          "--no-check",
          "-A",
          "--config",
          join(ROOT, "deno.json"),
          file,
        ], {
          cwd: ROOT,
          encoding: "utf8",
          timeout: 60_000,
          env: { ...process.env, ...RUN_ENV, NO_COLOR: "1" },
        });
        const origins = new Map([[fileNameOf(block), program.origins]]);
        assert.equal(ran.status, 0, mapToDocs(ran.stderr + ran.stdout, origins));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }

  for (const block of typescript.filter((block) => block.serve)) {
    it(`${block.page}:${block.line} serves HTTP on PORT under deno run`, async () => {
      const dir = mkdtempSync(join(tmpdir(), "api-kit-docs-"));
      const port = await freePort();
      const file = join(dir, fileNameOf(block));
      writeFileSync(file, programOf(block, examples).code);
      const server = spawn(process.execPath, [
        "run",
        "--quiet",
        "--no-check",
        "-A",
        "--config",
        join(ROOT, "deno.json"),
        file,
      ], {
        cwd: ROOT,
        env: { ...process.env, ...RUN_ENV, PORT: String(port), NO_COLOR: "1" },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let output = "";
      server.stdout.on("data", (chunk) => (output += chunk));
      server.stderr.on("data", (chunk) => (output += chunk));
      const exited = new Promise<void>((resolve) => server.on("exit", () => resolve()));
      try {
        const status = await firstAnswer(`http://127.0.0.1:${port}/`, server, 60_000);
        assert.ok(status !== undefined, `no HTTP answer on port ${port}:\n${output}`);
      } finally {
        server.kill();
        await exited;
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }

  it("the block reader sees fences, list indents, directives and continued examples", () => {
    const page = [
      "<!-- example: first; run -->",
      "",
      "```ts",
      "const a = 1;",
      "```",
      "",
      "1. then",
      "   <!-- continues: first -->",
      "   ```ts",
      "   console.log(a);",
      "   ```",
      "<!-- nope -->",
      "```json",
      "{}",
      "```",
    ].join("\n");
    const [first, second, third] = codeBlocks("x.md", page);
    assert.deepEqual(
      [first.line, first.example, first.run, second.continues, second.code, third.problems],
      [3, "first", true, "first", "console.log(a);", ['unknown directive "nope"']],
    );
    const program = programOf(second, new Map([["first", first]]));
    assert.equal(program.code, "const a = 1;\nconsole.log(a);\n");
    assert.deepEqual(program.origins, ["x.md:4", "x.md:10"]);
    assert.equal(
      mapToDocs("at file:///tmp/d/x_md_9.ts:2:5", new Map([["x_md_9.ts", program.origins]])),
      "at x.md:10:5 (x_md_9.ts)",
    );
    assert.deepEqual(directivesOf("no comment"), {
      run: false,
      serve: false,
      install: false,
      problems: [],
    });
  });
});
