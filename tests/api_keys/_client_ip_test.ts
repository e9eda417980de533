import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { isThenable, resolveClientIp } from "../../api_keys/_client_ip.ts";
import { generateKey } from "../../api_keys/key_format.ts";

describe("resolveClientIp", () => {
  it("answers a synchronous resolver synchronously, with its arguments", () => {
    const lines: string[] = [];
    const ip = resolveClientIp(
      (a: string, b: number) => `${a}.${b}`,
      ["203.0.113", 7],
      "x",
      (l) => lines.push(l),
    );
    assert.equal(ip, "203.0.113.7");
    assert.deepEqual(lines, []);
  });

  it("awaits an async resolver", async () => {
    const answer = resolveClientIp(() => Promise.resolve("::1"), [], "x", () => {});
    assert.ok(isThenable(answer));
    assert.equal(await answer, "::1");
  });

  it("a throw or rejection is unknown and logged by the error's name only", async () => {
    const key = generateKey({ environment: "live" }).raw;
    const lines: string[] = [];
    const log = (line: string) => lines.push(line);
    const thrown = resolveClientIp(
      () => {
        throw new RangeError(key);
      },
      [],
      "clientIpResolver",
      log,
    );
    assert.equal(thrown, undefined);
    assert.equal(
      await resolveClientIp(() => Promise.reject(new SyntaxError(key)), [], "clientIp", log),
      undefined,
    );
    assert.deepEqual(lines, [
      "api-keys: clientIpResolver failed (RangeError); client IP treated as unknown",
      "api-keys: clientIp failed (SyntaxError); client IP treated as unknown",
    ]);
  });

  it("an answer other than a string is unknown, not logged", async () => {
    const lines: string[] = [];
    const log = (line: string) => lines.push(line);
    assert.equal(resolveClientIp(() => 42, [], "x", log), undefined);
    assert.equal(resolveClientIp(() => ({ ip: "1.2.3.4" }), [], "x", log), undefined);
    assert.equal(await resolveClientIp(() => Promise.resolve(null), [], "x", log), undefined);
    assert.deepEqual(lines, []);
  });
});
