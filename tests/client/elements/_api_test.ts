import { after, before, describe, it, mock } from "node:test";
import assert from "node:assert/strict";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  type AdminApiError,
  call,
  CSRF_HEADER,
  MAX_RESPONSE_CHARS,
} from "../../../client/elements/_api.ts";
import { answerLost } from "../../../client/elements/_errors.ts";

/** Lets `ms` of real time pass with `setTimeout` mocked (turns of the event loop, I/O included). */
async function pause(ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) await new Promise((resolve) => setImmediate(resolve));
}
/** The deadline of every request, as docs/settings-page.md documents it. */
const DEADLINE_MS = 30_000;

describe("client/elements/_api.ts", () => {
  let server: Server;
  let base = "";
  const seen: { method: string; url: string; headers: IncomingHttpHeaders; body: string }[] = [];
  const auth = { credentials: "same-origin" as const };
  /** Whether the connection of `/a/flood` closed before its body was all written. */
  const flood = { cut: false };
  /** `/a/stall` (headers and the body's start, then nothing) and `/a/silent` (nothing at all). */
  const stalled = {
    open: [] as { path: string; closed: boolean; end: () => void }[],
    /** Resolves once the next stalled reply's request came in (and its start, if any, was sent). */
    started: Promise.resolve(),
    start: () => {},
  };
  const expectStall = () => stalled.started = new Promise<void>((done) => stalled.start = done);

  before(async () => {
    server = createServer(async (request, response) => {
      let body = "";
      for await (const chunk of request) body += chunk;
      seen.push({ method: request.method!, url: request.url!, headers: request.headers, body });
      const answers: Record<string, [number, string]> = {
        "/a/keys": [200, JSON.stringify({ success: true, data: [{ id: "1" }] })],
        "/a/plain": [200, JSON.stringify({ ok: true })],
        "/a/empty": [204, ""],
        "/a/denied": [
          403,
          JSON.stringify({ success: false, error: { code: "FORBIDDEN", message: "No." } }),
        ],
        "/a/html": [502, "<html>bad gateway</html>"],
        "/a/problem": [
          401,
          JSON.stringify({ status: 401, code: "unauthorized", detail: "Sign in." }),
        ],
        "/a/garbled": [200, "{not json"],
        "/a/huge": [200, JSON.stringify({ data: "x".repeat(MAX_RESPONSE_CHARS) })],
      };
      if (request.url === "/a/flood") {
        // 32 MB of body, written as the client reads it: a bounded reader stops it early.
        response.writeHead(200, { "Content-Type": "application/json" });
        const chunk = "x".repeat(64 * 1024);
        let left = 512;
        response.once("close", () => flood.cut = left > 0);
        const more = () => {
          while (left > 0 && !response.destroyed) {
            left--;
            if (!response.write(left === 511 ? `{"data":"${chunk}` : chunk)) {
              return response.once("drain", more);
            }
          }
          if (!response.destroyed) response.end('"}');
        };
        more();
        return;
      }
      if (request.url === "/a/stall" || request.url === "/a/silent") {
        const held = { path: request.url, closed: false, end: () => response.destroy() };
        stalled.open.push(held);
        response.once("close", () => held.closed = true);
        if (request.url === "/a/stall") {
          response.writeHead(200, { "Content-Type": "application/json" });
          response.write('{"data":[');
        }
        stalled.start();
        return;
      }
      const limited = new URL(request.url!, "http://x");
      if (limited.pathname === "/a/limited") {
        const after = limited.searchParams.get("after");
        const body = JSON.stringify({ success: false, error: { code: "rate_limited" } });
        response.writeHead(429, { ...(after === null ? {} : { "Retry-After": after }) }).end(body);
        return;
      }
      const [status, text] = answers[request.url!] ?? [404, ""];
      response.writeHead(status, { "Content-Type": "application/json" }).end(text);
    });
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/a`;
  });
  after(() => new Promise<void>((done) => server.close(() => done())));

  it("returns the envelope's data, or the body without one; trims the base's slashes", async () => {
    assert.deepEqual(await call(`${base}//`, "/keys", auth), [{ id: "1" }]);
    assert.deepEqual(await call(base, "/plain", auth), { ok: true });
    assert.equal(await call(base, "/empty", auth, "POST", {}), undefined);
    assert.equal(seen.at(-3)!.url, "/a/keys");
  });

  it("sends the CSRF header and JSON on state-changing requests only", async () => {
    await call(base, "/plain", auth);
    assert.equal(seen.at(-1)!.headers["x-requested-with"], undefined);
    await call(base, "/plain", auth, "PATCH", { name: "n" });
    const patch = seen.at(-1)!;
    assert.equal(patch.headers[CSRF_HEADER[0].toLowerCase()], CSRF_HEADER[1]);
    assert.equal(patch.headers["content-type"], "application/json");
    assert.equal(patch.body, '{"name":"n"}');
    await call(base, "/plain", { ...auth, csrf: ["X-Intent", "keys"] }, "DELETE");
    assert.equal(seen.at(-1)!.headers["x-intent"], "keys");
    assert.equal(seen.at(-1)!.headers["x-requested-with"], undefined);
  });

  it("sends the token as a bearer; a throwing or rejecting getToken is TOKEN_ERROR", async () => {
    await call(base, "/plain", { ...auth, getToken: () => Promise.resolve("t1") });
    assert.equal(seen.at(-1)!.headers.authorization, "Bearer t1");
    const count = seen.length;
    for (
      const getToken of [() => {
        throw new Error("secret-ish detail");
      }, () => Promise.reject(new Error("x"))]
    ) {
      await assert.rejects(call(base, "/plain", { ...auth, getToken }), (error: AdminApiError) => {
        assert.equal(error.code, "TOKEN_ERROR");
        assert.doesNotMatch(error.message, /secret-ish/);
        return true;
      });
    }
    assert.equal(seen.length, count, "no request without a token");
  });

  it("no token, or a token (or a CSRF header) no header can carry, is TOKEN_ERROR, nothing sent, its answer not lost", async () => {
    const count = seen.length;
    const unsendable = [
      { ...auth, getToken: () => "<html>\n<body>Sign in</body></html>" },
      { ...auth, getToken: () => Promise.resolve("t\u0100") },
      // No token at all (a signed-out session's `undefined`, `null` or ""): not `Bearer undefined`.
      { ...auth, getToken: () => undefined as unknown as string },
      { ...auth, getToken: () => Promise.resolve(null as unknown as string) },
      { ...auth, getToken: () => "" },
      { ...auth, getToken: () => 42 as unknown as string },
      { ...auth, csrf: ["bad header", "v"] as const },
      { ...auth, csrf: ["X-Intent", "a\nb"] as const },
    ];
    for (const bad of unsendable) {
      await assert.rejects(call(base, "/plain", bad, "POST", { name: "x" }), (error) => {
        assert.equal((error as AdminApiError).code, "TOKEN_ERROR");
        assert.equal(answerLost(error), false, "nothing was sent");
        return true;
      });
    }
    assert.equal(seen.length, count, "no request sent");
  });

  it("throws the envelope's (or problem details') code, message and status; else HTTP_<status>", async () => {
    await assert.rejects(call(base, "/denied", auth), {
      name: "AdminApiError",
      code: "FORBIDDEN",
      message: "No.",
      status: 403,
    });
    await assert.rejects(call(base, "/html", auth), { code: "HTTP_502", status: 502 });
    await assert.rejects(call(base, "/problem", auth), {
      code: "unauthorized",
      message: "Sign in.",
      status: 401,
    });
  });

  it("an unreadable or oversized body is BAD_RESPONSE; an unreachable server NETWORK_ERROR", async () => {
    await assert.rejects(call(base, "/garbled", auth), { code: "BAD_RESPONSE" });
    await assert.rejects(call(base, "/huge", auth), { code: "BAD_RESPONSE" });
    await assert.rejects(call("http://127.0.0.1:1", "/x", auth), { code: "NETWORK_ERROR" });
  });

  it("reads a body no further than MAX_RESPONSE_CHARS: a longer one is BAD_RESPONSE, the rest never read", async () => {
    await assert.rejects(call(base, "/flood", auth), { code: "BAD_RESPONSE" });
    for (let i = 0; i < 100 && !flood.cut; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.ok(flood.cut, "the client gave the connection up before the body's end");
  });

  describe("the 30 s deadline of a call, its token included", () => {
    // Enabled once: Node 20 mocks nothing after a re-enable. The connections of the tests above
    // close first, with real timers: on Node, undici's timer of a connection made before the mock
    // ran under it (ticked along) for a parser already collected (an uncaught TypeError).
    before(async () => {
      server.closeAllConnections();
      await new Promise((resolve) => setTimeout(resolve, 100));
      mock.timers.enable({ apis: ["setTimeout"] });
    });
    after(async () => {
      // The connections made under the mock close while it is on: on Node, undici clears their
      // timers through the mocked clearTimeout, and a timer left behind fired after the reset for
      // a parser already gone (an uncaught TypeError in the test run).
      for (const held of stalled.open.splice(0)) held.end();
      server.closeAllConnections();
      await new Promise((resolve) => setImmediate(resolve));
      mock.timers.reset();
      await pause(200);
    });
    /** A call's outcome so far: `pending`, `resolved`, or the failure's code. */
    const watch = (pending: Promise<unknown>) => {
      let outcome = "pending";
      const done = pending.then(
        () => outcome = "resolved",
        (error: AdminApiError) => outcome = error.code,
      );
      return { done, outcome: () => outcome };
    };

    it("a getToken that never settles is TOKEN_ERROR after 30 s, nothing sent", async () => {
      const count = seen.length;
      const getToken = () => new Promise<string>(() => {});
      const { done, outcome } = watch(call(base, "/plain", { ...auth, getToken }, "POST", {}));
      await pause(100);
      mock.timers.tick(DEADLINE_MS - 1);
      await pause(100);
      assert.equal(outcome(), "pending", "still waiting just before the deadline");
      mock.timers.tick(1);
      await Promise.race([done, pause(2_000)]);
      assert.equal(outcome(), "TOKEN_ERROR");
      assert.equal(seen.length, count, "no request sent");
    });

    it("the time getToken took counts: a token after 20 s leaves the request 10 s", async () => {
      expectStall();
      const getToken = () =>
        new Promise<string>((resolve) => setTimeout(() => resolve("t"), 20_000));
      const { done, outcome } = watch(call(base, "/silent", { ...auth, getToken }));
      await pause(100);
      mock.timers.tick(20_000);
      await stalled.started;
      await pause(100);
      mock.timers.tick(DEADLINE_MS - 20_000 - 1);
      await pause(100);
      assert.equal(outcome(), "pending", "still waiting just before the deadline");
      mock.timers.tick(1);
      await Promise.race([done, pause(2_000)]);
      assert.equal(outcome(), "NETWORK_ERROR");
    });

    it("a reply that stalls (before its headers, or in its body) is NETWORK_ERROR after 30 s, its connection given up", async () => {
      for (const path of ["/stall", "/silent"]) {
        expectStall();
        const { done, outcome } = watch(call(base, path, auth));
        await stalled.started;
        await pause(100); // the stalled body's start is read: the client waits for the rest
        mock.timers.tick(DEADLINE_MS - 1);
        await pause(100);
        assert.equal(outcome(), "pending", `${path}: still waiting just before the deadline`);
        mock.timers.tick(1);
        await Promise.race([done, pause(2_000)]);
        assert.equal(outcome(), "NETWORK_ERROR", path);
        const held = stalled.open.find((held) => held.path === `/a${path}`)!;
        for (let i = 0; i < 100 && !held.closed; i++) await pause(20);
        assert.ok(held.closed, `${path}: the client gave the connection up`);
      }
    });
  });

  it("a 429's Retry-After in seconds (delta-seconds or an HTTP date, bounded), null without a readable one", async () => {
    const retryAfter = async (after: string | null) => {
      const query = after === null ? "" : `?after=${encodeURIComponent(after)}`;
      const error = await call(base, `/limited${query}`, auth).then(
        () => assert.fail("resolved"),
        (error: AdminApiError) => error,
      );
      assert.equal(error.status, 429);
      return error.retryAfter;
    };
    assert.equal(await retryAfter("30"), 30);
    assert.equal(await retryAfter("0"), 0);
    const soon = await retryAfter(new Date(Date.now() + 90_000).toUTCString());
    assert.ok(soon !== null && soon >= 88 && soon <= 90, String(soon));
    assert.equal(await retryAfter(new Date(Date.now() - 90_000).toUTCString()), 0);
    assert.equal(await retryAfter(null), null);
    assert.equal(await retryAfter("soon"), null);
    assert.equal(await retryAfter("-5"), null);
    assert.equal(await retryAfter("1".repeat(12)), null);
    assert.equal(await retryAfter(`Wed, 21 Oct 2099 07:28:00 GMT${" ".repeat(100)}x`), null);
  });
});
