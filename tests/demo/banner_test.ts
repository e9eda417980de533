/**
 * The start banner: the Swagger UI and OpenAPI addresses only where the demo
 * serves them (the Nest demo, not the Fetch one).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { curlLines, formatBanner } from "../../demo/banner.ts";
import { startTestDemo, startTestFetchDemo } from "./_demo.ts";

const nest = {
  url: "http://127.0.0.1:3000",
  adapter: "express",
  storageKind: "memory" as const,
  problemDetails: false,
  keys: undefined,
  pepperSource: "random" as const,
  openapi: true,
};
const fetchDemo = { ...nest, adapter: "Deno.serve (Fetch bindings)", openapi: false };

describe("formatBanner", () => {
  it("names the Swagger UI and OpenAPI addresses with openapi", () => {
    const banner = formatBanner(nest);
    assert.match(banner, /web page: http:\/\/127\.0\.0\.1:3000\/ /);
    assert.match(banner, /Swagger UI: http:\/\/127\.0\.0\.1:3000\/docs/);
    assert.match(banner, /OpenAPI: http:\/\/127\.0\.0\.1:3000\/openapi\.json/);
  });

  it("names only the web page without openapi", () => {
    const banner = formatBanner(fetchDemo);
    assert.match(banner, /^ {2}web page: http:\/\/127\.0\.0\.1:3000\/$/m);
    assert.doesNotMatch(banner, /Swagger|OpenAPI|\/docs|openapi\.json/);
  });
});

/** A printed `curl` line as a request: its URL, method, headers and body. */
function requestOf(line: string): { url: string; init: RequestInit } {
  const words = [...line.matchAll(/'((?:[^']|'\\'')*)'|(\S+)/g)].map((m) =>
    m[1] === undefined ? m[2] : m[1].replaceAll(`'\\''`, "'")
  );
  const headers: Record<string, string> = {};
  const init: RequestInit = { headers };
  let url = "";
  for (let i = 1; i < words.length; i++) {
    const word = words[i];
    if (word === "-H") {
      const [name, ...value] = words[++i].split(": ");
      headers[name] = value.join(": ");
    } else if (word === "-d") {
      init.body = words[++i];
      init.method ??= "POST";
    } else if (word === "-X") init.method = words[++i];
    else if (word.startsWith("http")) url = word;
  }
  return { url, init };
}

/**
 * The status each printed step answers, in order: a refusal where its comment
 * promises one (environment, scope, IP, typed 404, another tenant's key), else
 * success.
 */
const TOUR_STATUSES = [200, 200, 403, 403, 200, 403, 200, 404, 200, 200, 201, 200, 201, 200, 404];

describe("the banner's curl lines", () => {
  for (const kind of ["nest", "fetch"] as const) {
    it(`each step of the ${kind} demo answers as its comment says (the rotation of the test key succeeds)`, async () => {
      const server = kind === "nest" ? await startTestDemo() : await startTestFetchDemo();
      try {
        const steps = curlLines(server.url, server.keys!).filter((line) => line.startsWith("curl"));
        const answers: string[] = [];
        for (const line of steps) {
          const { url, init } = requestOf(line);
          const response = await fetch(url, init);
          const text = await response.text();
          answers.push(
            `${response.status} ${init.method ?? "GET"} ${new URL(url).pathname} ${
              response.status >= 400 ? text.slice(0, 160) : ""
            }`,
          );
        }
        assert.deepEqual(
          answers.map((answer) => Number(answer.slice(0, 3))),
          TOUR_STATUSES,
          answers.join("\n"),
        );
      } finally {
        await server.close();
      }
    });
  }
});
