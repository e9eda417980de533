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
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, normalize } from "node:path";
import process from "node:process";
import { STYLES } from "../client/elements/_styles.ts";
import {
  allBlocks,
  answerProblem,
  codeBlocks,
  CONTEXTS,
  demoKeyVariables,
  denoRunArgs,
  directivesOf,
  fileNameOf,
  mapToDocs,
  pages,
  programOf,
  read,
  ROOT,
  runBlock,
  runTranscript,
  servesHttp,
  servingSettingsPage,
  SETTINGS_SESSION,
  transcriptSteps,
  typeCheckBlocks,
  TYPESCRIPT,
} from "./doc_blocks.ts";
import { API_KEYS_MANAGER_STRINGS } from "../client/elements/strings.ts";

const README_MAX_LINES = 300;

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

  it("docs/operations.md's example alerts name instruments and attributes as the Prometheus exporter does", () => {
    const page = read("docs/telemetry.md");
    const table = page.slice(page.indexOf("## Instruments"), page.indexOf("## Spans"));
    // `.` becomes `_`; a counter gets `_total` (what @opentelemetry/exporter-prometheus serves).
    const metrics = new Set(
      [...table.matchAll(/^\| `([a-z_.]+)` +\| (\w+) /gm)].map(([, name, kind]) =>
        name.replaceAll(".", "_") + (kind === "counter" ? "_total" : "")
      ),
    );
    const labels = new Set(
      [...table.matchAll(/`([a-z_]+(?:\.[a-z_]+)+)`/g)].map((m) => m[1].replaceAll(".", "_")),
    );
    const operations = read("docs/operations.md");
    const section = operations.slice(
      operations.indexOf("Example alerts"),
      operations.indexOf("## Peppers"),
    );
    const alerts = [...section.matchAll(/`([^`]*(?:\[\d+[mh]\]|[<>=]=? \d)[^`]*)`/g)]
      .map((m) => m[1]);
    assert.equal(alerts.length, 7);
    for (const alert of alerts) {
      assert.doesNotMatch(alert.replace(/"[^"]*"/g, ""), /\w\.\w/, `${alert}: a dot (PromQL)`);
      assert.ok(metrics.has(alert.replace(/^rate\(/, "").match(/^\w+/)![0]), alert);
      for (const [, label] of alert.matchAll(/(\w+)="/g)) assert.ok(labels.has(label), alert);
    }
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

  it("every `bench --only` list names each script of bench/run.ts", () => {
    const run = read("bench/run.ts");
    const scripts = [
      ...run.slice(run.indexOf("const SCRIPTS = ["), run.indexOf("];")).matchAll(
        /"([a-z_]+)"/g,
      ),
    ].map((match) => match[1]).sort();
    assert.ok(scripts.includes("unknown_prefix") && scripts.includes("element_size"));
    for (const page of ["docs/operations.md", "BENCHMARKS.md", "bench/run.ts"]) {
      const text = read(page).replace(/\n \*\s+# /g, " ");
      const list = text.match(/--only [a-z_,]+ +# any of ([a-z_, ]+)/)?.[1];
      assert.ok(list !== undefined, `${page} has a bench --only list`);
      assert.deepEqual(list.split(",").map((name) => name.trim()).sort(), scripts, page);
    }
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
      if (
        !typed &&
        (block.run || block.serve || block.node || block.services || block.example ||
          block.continues)
      ) {
        problems.push(
          `${at}: example, continues, run, serve, node and services are for TypeScript blocks`,
        );
      }
      if (block.curl !== undefined && block.lang !== "sh") {
        problems.push(`${at}: curl is for shell transcripts`);
      }
      if (
        block.curl !== undefined && block.curl !== "demo" &&
        examples.get(block.curl)?.serve !== true
      ) {
        problems.push(`${at}: curl names "${block.curl}", which is no serve example`);
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

  it("every install command of Nest's core also installs an HTTP platform (else Nest starts no server)", () => {
    const problems: string[] = [];
    for (const block of blocks.filter((block) => block.install)) {
      for (const line of block.code.split("\n")) {
        if (/@nestjs\/core\b/.test(line) && !/@nestjs\/platform-(express|fastify)\b/.test(line)) {
          problems.push(`${block.page}:${block.line}: ${line.trim()}`);
        }
      }
    }
    assert.deepEqual(problems, []);
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

  it("docs/api-keys.md prints prisma/schema.prisma's ApiKey model as it is", () => {
    const model = (text: string) => /^model ApiKey \{\n[\s\S]*?^\}$/m.exec(text)?.[0];
    const printed = blocks.filter((block) =>
      block.page === "docs/api-keys.md" && block.lang === "prisma" && model(block.code)
    );
    assert.equal(printed.length, 1, "docs/api-keys.md prints one ApiKey model");
    assert.equal(model(printed[0].code), model(read("prisma/schema.prisma")));
  });

  it("no block imports a builtin by default (undefined in CommonJS without esModuleInterop: a Deno block is copied into Nest apps too)", () => {
    const problems = blocks.flatMap((block) =>
      [...block.code.matchAll(/^import (\w+) from "node:[\w/]+";$/gm)].map((match) =>
        `${block.page}:${block.line}: ${match[0]}`
      )
    );
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
    const { status, output } = typeCheckBlocks(typescript, examples);
    assert.equal(status, 0, output);
  });

  for (const block of typescript.filter((block) => block.run)) {
    it(`${block.page}:${block.line} runs under deno run`, () => {
      const { status, output } = runBlock(block, examples);
      assert.equal(status, 0, output);
    });
  }

  it("docs/security.md's auditor script refuses an export edited and hashed again, cut, or stripped of its checkpoints", () => {
    const block = examples.get("audit-reverify");
    assert.ok(block, 'docs/security.md has no example "audit-reverify"');
    // Fed to the printed `reverify`, after the block verified the untouched export `lines`.
    const tampering = String.raw`
const last = lines.findLastIndex((line) => JSON.parse(line).type === "record");
const forged = JSON.parse(lines[last]);
forged.actor = "mallory";
const { type: _type, tenantId, seq, at, prevHash, hash: _hash, ...entry } = forged;
const text = prevHash + "\n" + tenantId + "\n" + seq + "\n" + at + "\n" + canonical(entry);
forged.hash = hex(await crypto.subtle.digest("SHA-256", utf8.encode(text)));
const tampered: [string, string[]][] = [
  ["the last record edited, hashed again", lines.with(last, JSON.stringify(forged) + "\n")],
  ["the last record dropped, its checkpoint kept", lines.toSpliced(last, 1)],
  ["the tail cut", lines.slice(0, last)],
  ["the checkpoint lines dropped", lines.filter((line) => JSON.parse(line).type === "record")],
];
for (const [name, variant] of tampered) {
  if (await reverify(variant, "acme").then(() => true, () => false)) {
    throw new Error("the auditor script passed: " + name);
  }
}
console.log("refused", tampered.length);
`;
    const { status, output } = runBlock({ ...block, code: block.code + tampering }, examples);
    assert.equal(status, 0, output);
    assert.match(output, /refused 4/);
  });

  for (const block of typescript.filter((block) => block.serve)) {
    it(`${block.page}:${block.line} serves HTTP on PORT under deno run`, async () => {
      const dir = mkdtempSync(join(tmpdir(), "api-kit-docs-"));
      try {
        const file = join(dir, fileNameOf(block));
        writeFileSync(file, programOf(block, examples).code);
        const { status, output } = await servesHttp(process.execPath, denoRunArgs(file), ROOT, {});
        assert.ok(status !== undefined, `no HTTP answer:\n${output}`);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }

  for (const block of blocks.filter((block) => block.curl !== undefined)) {
    it(`${block.page}:${block.line} (a transcript) answers as printed against ${block.curl}`, async () => {
      assert.deepEqual(await runTranscript(block, examples), []);
    });
  }

  it("the transcript reader splits commands from their answers and checks those", () => {
    assert.deepEqual(
      transcriptSteps(
        "# a comment line\ncurl -s 'x#y' -H \"a: #b\"  # 401 {\"code\":…}\ncurl a \\\n  -d '{}'",
      ),
      [
        { command: `curl -s 'x#y' -H "a: #b"`, expect: '401 {"code":…}' },
        { command: "curl a -d '{}'" },
      ],
    );
    const body = '{"statusCode":401,"code":"api_key_missing","message":"x"}';
    assert.equal(
      answerProblem(body, '401 {"statusCode":401,"code":"api_key_missing",…}'),
      undefined,
    );
    assert.match(answerProblem(body, "403 IP") ?? "", /expected status 403/);
    assert.match(answerProblem(body, '{"code":"api_key_revoked",…}') ?? "", /expected/);
    assert.equal(answerProblem("HTTP/1.1 200 OK\n", "200 Deprecation"), undefined);
    assert.equal(answerProblem("anything", "revoked at once"), undefined);
    assert.deepEqual(
      demoKeyVariables(
        "  admin      live  keys:write projects:write  ak_live_a\n  localhost  live  x, from 127.0.0.1 only   ak_live_l\n  limited    live  y   ak_live_m",
      ),
      { ADMIN: "ak_live_a", LOCAL: "ak_live_l" },
    );
  });

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
    const none = directivesOf("no comment");
    assert.deepEqual([none.example, none.continues, none.problems], [undefined, undefined, []]);
    assert.ok(!none.run && !none.serve && !none.node && !none.services && !none.install);
  });
});

describe("docs/spec.md", () => {
  /** SHA-256 of the specification's text with whitespace, `|`, `:` and `-` runs folded to one space. */
  const SPEC_DIGEST = "54de053179113cfd48008e756bdf15e102d93d9d0492b5cc259ec2a7bd9a702a";

  it("is the specification verbatim (formatting aside) below its list of departures", async () => {
    const text = read("docs/spec.md");
    const [title] = text.split("\n", 1);
    const body = text.slice(text.indexOf("\n---\n") + 5);
    const folded = `${title}\n${body}`.replace(/[\s|:-]+/g, " ").trim();
    const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(folded));
    const hex = [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
    assert.equal(hex, SPEC_DIGEST, "the text below the --- line differs from the specification");
    const preface = text.slice(0, text.indexOf("\n---\n"));
    assert.match(preface, /migration\.md#departures-from-the-specification/);
  });
});

describe("docs/settings-page.md's two apps work as printed", () => {
  const { examples } = allBlocks();

  for (const name of ["settings-deno", "settings-nest"]) {
    it(`${name}: the page, the bundle, 401 signed out, then config, create (createdBy), a page of keys`, async () => {
      const signedIn = { cookie: `${SETTINGS_SESSION.name}=${SETTINGS_SESSION.value}` };
      const csrf = { ...signedIn, "x-requested-with": "api-keys-manager" };
      const { status, output } = await servingSettingsPage(
        name,
        examples,
        async (origin) => {
          const page = await fetch(`${origin}/settings`);
          const html = await page.text();
          assert.equal(page.status, 200);
          assert.match(html, /base-url="\/account\/api-keys"/);
          assert.match(html, /src="\/assets\/api-keys-manager.js"/);
          const bundle = await fetch(`${origin}/assets/api-keys-manager.js`);
          assert.equal(bundle.status, 200);
          assert.match(bundle.headers.get("content-type") ?? "", /javascript/);
          assert.match(await bundle.text(), /api-keys-manager/);
          const routes = `${origin}/account/api-keys`;
          const out = await fetch(`${routes}/config`);
          assert.equal(out.status, 401, await out.text());
          const config = await fetch(`${routes}/config`, { headers: signedIn });
          assert.equal(config.status, 200);
          assert.equal((await config.json()).can.create, true);
          const created = await fetch(`${routes}/keys`, {
            method: "POST",
            headers: { ...csrf, "content-type": "application/json" },
            body: JSON.stringify({ name: "ci", scopes: ["projects:read"] }),
          });
          const issued = await created.json();
          assert.equal(created.status, 201, JSON.stringify(issued));
          assert.equal(issued.record.createdBy, "user:u_1");
          const list = await fetch(`${routes}/keys?limit=1&q=CI`, { headers: signedIn });
          const keys = await list.json();
          assert.deepEqual(keys.keys.map((key: { name: string }) => key.name), ["ci"]);
          assert.equal(keys.nextCursor, null);
        },
      );
      assert.ok(status !== undefined, `no HTTP answer:\n${output}`);
    });
  }

  /** The printed Nest app with `SafeResponseModule` imported, on `adapter`. */
  const withSafeResponse = (code: string, adapter: string): string => {
    const edits: Array<[string, string]> = [
      [
        'import { NestFactory } from "@nestjs/core";',
        'import { NestFactory } from "@nestjs/core";\n' +
        'import { FastifyAdapter } from "@nestjs/platform-fastify";\n' +
        'import { SafeResponseModule } from "@saferoute/api-kit/safe-response/nest";',
      ],
      ["  imports: [\n", "  imports: [\n    SafeResponseModule.register(),\n"],
      [
        "NestFactory.create(AppModule)",
        `NestFactory.create(AppModule${adapter === "fastify" ? ", new FastifyAdapter()" : ""})`,
      ],
    ];
    for (const [from, to] of edits) {
      assert.ok(code.includes(from), `settings-nest no longer holds ${from}`);
      code = code.replace(from, to);
    }
    return code;
  };

  for (const adapter of ["express", "fastify"]) {
    it(`settings-nest with SafeResponseModule (${adapter}): the page and the bundle as printed`, async () => {
      const printed = examples.get("settings-nest")!;
      const changed = new Map(examples).set("settings-nest", {
        ...printed,
        code: withSafeResponse(printed.code, adapter),
      });
      const { status, output } = await servingSettingsPage(
        "settings-nest",
        changed,
        async (origin) => {
          const page = await fetch(`${origin}/settings`);
          assert.equal(page.status, 200);
          assert.equal(page.headers.get("content-type"), "text/html; charset=utf-8");
          assert.match(await page.text(), /^<!doctype html>\n<html lang="en">/);
          const bundle = await fetch(`${origin}/assets/api-keys-manager.js`);
          assert.equal(bundle.status, 200);
          assert.match(bundle.headers.get("content-type") ?? "", /^text\/javascript/);
          const script = await bundle.text();
          assert.doesNotMatch(script, /^\{"success"/);
          assert.match(script, /api-keys-manager/);
        },
      );
      assert.ok(status !== undefined, `no HTTP answer:\n${output}`);
    });
  }
});

describe("the migrations the manual and the messages name", () => {
  const migrations = new Set(readdirSync(join(ROOT, "prisma", "migrations")));
  const name = JSON.parse(read("deno.json")).name as string;
  const exported = Object.values(JSON.parse(read("deno.json")).exports as Record<string, string>);
  const library = [...new Set(exported.map((file) => file.replace(/^\.\//, "").split("/")[0]))]
    .flatMap((top) =>
      top.endsWith(".ts") ? [top] : (readdirSync(join(ROOT, top), { recursive: true }) as string[])
        .filter((file) => file.endsWith(".ts")).map((file) => `${top}/${file}`)
    );

  it("each exists, and each path into a package names this package", () => {
    assert.ok(library.includes("rate_limits/postgres/mod.ts"), library.join(", "));
    const problems: string[] = [];
    for (const file of [...pages(), "CHANGELOG.md", ...library]) {
      const text = read(file);
      for (const [migration] of text.matchAll(/\b\d{4}_[a-z][a-z0-9_]*/g)) {
        if (!migrations.has(migration)) problems.push(`${file}: no migration ${migration}`);
      }
      const inPackages = text.matchAll(
        /(?:node_modules\/|jsr\.io\/)(@[\w-]+\/[\w-]+)\/(?:[^/\s`]+\/)?prisma\//g,
      );
      for (const [path, named] of inPackages) {
        if (named !== name) problems.push(`${file}: ${path} is not ${name}`);
      }
    }
    assert.deepEqual(problems, []);
  });

  it("docs/operations.md says where the npm and the JSR package hold them", () => {
    const page = read("docs/operations.md");
    const escaped = name.replace("/", "\\/");
    const npm = `node_modules\\/${escaped}\\/prisma\\/migrations\\/\\d{4}_\\w+\\/migration\\.sql`;
    const jsr = `https:\\/\\/jsr\\.io\\/${escaped}\\/[^/\\s]+\\/prisma\\/migrations\\/`;
    assert.ok(new RegExp(npm).test(page), `no ${npm}`);
    assert.ok(new RegExp(jsr).test(page), `no ${jsr}`);
  });
});
