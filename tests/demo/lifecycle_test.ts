/**
 * The demo process: flags, the start banner (keys printed once, peppers
 * never), clean shutdown on SIGTERM and SIGINT, and the port-taken message.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { DemoCliError, parseDemoArgs, USAGE } from "../../demo/cli.ts";
import { loadPeppers } from "../../demo/peppers.ts";
import { PortInUseError } from "../../demo/server.ts";
import { runDemo, spawnDemo, startTestDemo } from "./_demo.ts";

describe("demo command line", () => {
  it("defaults to 127.0.0.1:3000 on Express, and reads PORT", () => {
    const options = parseDemoArgs([], {});
    assert.equal(options.port, 3000);
    assert.equal(options.host, "127.0.0.1");
    assert.equal(options.adapter, "express");
    assert.equal(parseDemoArgs([], { PORT: "8080" }).port, 8080);
    assert.equal(parseDemoArgs(["--port", "9090"], { PORT: "8080" }).port, 9090);
  });

  it("--smoke listens on an ephemeral port unless --port or PORT names one", () => {
    assert.equal(parseDemoArgs(["--smoke"], {}).port, 0);
    assert.equal(parseDemoArgs(["--smoke", "--port", "4567"], {}).port, 4567);
    assert.equal(parseDemoArgs(["--smoke"], { PORT: "4568" }).port, 4568);
  });

  it("rejects bad values with a DemoCliError", () => {
    assert.throws(() => parseDemoArgs(["--port", "70000"], {}), DemoCliError);
    assert.throws(() => parseDemoArgs(["--adapter", "koa"], {}), DemoCliError);
    assert.throws(() => parseDemoArgs(["--bogus"], {}), DemoCliError);
    assert.throws(() => parseDemoArgs([], { PORT: "http" }), DemoCliError);
  });

  it("exits 2 with the usage on a bad flag", async () => {
    const { code, stderr } = await runDemo(["--adapter", "koa"]);
    assert.equal(code, 2);
    assert.match(stderr, /--adapter must be "express" or "fastify"/);
    assert.match(stderr, /Usage: npm start -- \[options\]/);
  });

  it("names both ways to start it: `npm start --` (Node only) and `deno task demo`", () => {
    assert.match(USAGE, /^Usage: npm start -- \[options\]\n {3}or: deno task demo \[options\]\n/);
  });
});

describe("demo peppers", () => {
  it("makes a random 32-byte pepper without API_KEY_PEPPERS", () => {
    const { peppers, source } = loadPeppers(undefined, false);
    assert.equal(source, "random");
    assert.equal(atob(peppers[1]).length, 32);
    assert.notEqual(loadPeppers(undefined, false).peppers[1], peppers[1]);
  });

  it("reads API_KEY_PEPPERS and requires it with DATABASE_URL, never echoing it", () => {
    const secret = "s".repeat(40);
    assert.deepEqual(loadPeppers(JSON.stringify({ 2: secret }), true).peppers, { 2: secret });
    assert.throws(() => loadPeppers(undefined, true), /DATABASE_URL needs API_KEY_PEPPERS/);
    assert.throws(() => loadPeppers(`{"x":"${secret}"}`, false), (error: Error) => {
      assert.ok(!error.message.includes(secret));
      return true;
    });
  });

  it("never echoes a pepper written where its version goes (the map the wrong way round)", () => {
    const pepper = "q3V8nZ0rJ5mX2bC7tL9wK4yH1sD6fG0a";
    for (const env of [`{"${pepper}":"1"}`, `{"${pepper}":1}`, `{"1":"${pepper}","v2":"x"}`]) {
      assert.throws(() => loadPeppers(env, true), (error: Error) => {
        assert.ok(error instanceof DemoCliError, env);
        assert.ok(!error.message.includes(pepper), error.message);
        assert.match(error.message, /^API_KEY_PEPPERS has a key that is not a version/, env);
        return true;
      });
    }
  });
});

describe("demo process", () => {
  it("prints the keys once with curl lines, never the pepper, and stops on SIGTERM", async () => {
    const pepper = "p".repeat(48);
    const demo = spawnDemo(["--port", "0"], { API_KEY_PEPPERS: JSON.stringify({ 1: pepper }) });
    const banner = await demo.waitFor("Ctrl+C stops the server.");
    const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(banner)?.[1];
    assert.ok(url, banner);
    const reader = /^ {2}reader +live .* (ak_live_\S+)$/m.exec(banner)?.[1];
    assert.ok(reader, banner);
    assert.equal(banner.split(reader).length - 1 > 1, true, "the reader key is in curl lines");
    assert.match(banner, /curl -s '.*\/api\/projects\?page=2/);
    assert.match(banner, /Swagger UI: http:\/\/127\.0\.0\.1:\d+\/docs/);
    const trial = /^ {2}trial +live +projects:read, 20 credits in all +(ak_live_\S+)$/m.exec(banner)
      ?.[1];
    assert.ok(trial, banner);
    assert.match(banner, new RegExp(`# the trial key: .*\n.*'X-API-Key: ${trial}'`));
    const response = await fetch(`${url}/api/projects`, { headers: { "X-API-Key": reader } });
    assert.equal(response.status, 200);
    await response.body?.cancel();
    demo.kill("SIGTERM");
    const { code, stdout } = await demo.exited;
    assert.equal(code, 0);
    assert.match(stdout, /SIGTERM: shutting down/);
    assert.match(stdout, /Stopped\./);
    assert.ok(!stdout.includes(pepper), "the pepper was printed");
    assert.equal(stdout.indexOf("Demo keys"), stdout.lastIndexOf("Demo keys"));
  });

  it("stops on SIGINT too", async () => {
    const demo = spawnDemo(["--port", "0", "--adapter", "fastify"]);
    await demo.waitFor("Ctrl+C stops the server.");
    demo.kill("SIGINT");
    const { code, stdout } = await demo.exited;
    assert.equal(code, 0);
    assert.match(stdout, /SIGINT: shutting down[\s\S]*Stopped\./);
  });

  it("stops cleanly on a terminal's Ctrl+C: a second SIGINT ~10 ms later (the wrapper's) is ignored", async () => {
    const demo = spawnDemo(["--port", "0"]);
    await demo.waitFor("Ctrl+C stops the server.");
    demo.kill("SIGINT");
    await new Promise((resolve) => setTimeout(resolve, 10));
    demo.kill("SIGINT");
    const { code, stdout, stderr } = await demo.exited;
    assert.equal(code, 0, stderr);
    assert.equal(stdout.split("shutting down").length - 1, 1, "one shutdown");
    assert.match(stdout, /SIGINT: shutting down[\s\S]*Stopped\./);
  });
});

describe("port already taken", () => {
  async function occupyPort(): Promise<{ port: number; close: () => Promise<void> }> {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    return {
      port: (blocker.address() as AddressInfo).port,
      close: () => new Promise((resolve) => blocker.close(() => resolve())),
    };
  }

  it("rejects startDemoServer with PortInUseError", async () => {
    const blocker = await occupyPort();
    try {
      await assert.rejects(startTestDemo({ port: blocker.port }), (error: Error) => {
        assert.ok(error instanceof PortInUseError);
        assert.match(error.message, new RegExp(`Port ${blocker.port} on 127\\.0\\.0\\.1`));
        const next = blocker.port + 1;
        assert.match(
          error.message,
          new RegExp(`npm start -- --port ${next} or deno task demo --port ${next}`),
        );
        return true;
      });
    } finally {
      await blocker.close();
    }
  });

  it("exits 1 with a clear message from the command line", async () => {
    const blocker = await occupyPort();
    try {
      const { code, stdout, stderr } = await runDemo(["--port", String(blocker.port)]);
      assert.equal(code, 1);
      assert.match(stderr, new RegExp(`Port ${blocker.port} on 127\\.0\\.0\\.1 is already in use`));
      assert.match(stderr, /--port \d+/);
      assert.doesNotMatch(stdout, /Demo keys/, "no keys printed when the server cannot start");
    } finally {
      await blocker.close();
    }
  });
});
