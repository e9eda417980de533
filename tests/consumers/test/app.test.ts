// Every consumer app's test entry: first what the install must be (the tarball just packed, the
// Node and server majors the matrix names, @nestjs/swagger exactly when the matrix says), then the
// suite's checks (../shared/suite.ts, copied in by run.ts) against apps created by ../src/app.ts.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import process from "node:process";
import { consumerSuite } from "../shared/suite.ts";
import { createApp } from "../src/app.ts";

/** The installed `package.json` of `name`, nested under `parent` first, as Node resolves it. */
function installed(name: string, parent?: string): Record<string, unknown> {
  const candidates = [
    ...(parent ? [join("node_modules", parent, "node_modules", name)] : []),
    join("node_modules", name),
  ];
  const dir = candidates.find((path) => existsSync(join(path, "package.json")));
  assert.ok(dir, `${name} is installed`);
  return JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
}

describe(`${process.env.CONSUMER_APP} install`, () => {
  it("has the tarball just packed (its build id)", () => {
    assert.equal(installed("@saferoute/api-kit").buildId, process.env.API_KIT_BUILD_ID);
  });

  it("runs on the Node major of the matrix", () => {
    assert.equal(process.versions.node.split(".")[0], process.env.CONSUMER_NODE);
  });

  it("runs on the server major of the matrix", () => {
    const server = installed(`${process.env.CONSUMER_SERVER}`, process.env.CONSUMER_ADAPTER);
    assert.equal(String(server.version).split(".")[0], process.env.CONSUMER_SERVER_MAJOR);
  });

  it("has @nestjs/swagger exactly when the matrix says", () => {
    const resolve = () =>
      createRequire(join(process.cwd(), "package.json")).resolve("@nestjs/swagger");
    if (process.env.CONSUMER_SWAGGER === "1") assert.ok(resolve());
    else assert.throws(resolve, { code: "MODULE_NOT_FOUND" });
  });
});

consumerSuite(`${process.env.CONSUMER_APP} consumer`, createApp);
