import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { CAUSE_SECRET, FaultyStorage } from "./faulty_storage.ts";
import { PEPPER_1 } from "./harness.ts";
import { hostileString, SEED, wellFormedKey } from "./hostile_inputs.ts";
import {
  bootApp,
  errorBodyProblems,
  getRequest,
  PLATFORMS,
  rawRequest,
  type RawResponse,
  type RunningApp,
} from "./nest_app.ts";

const SCOPES = [{ resource: "orders", level: "read" as const }];

/** Statuses a hostile request may get: the app's 200/401/403, or the HTTP layer's 400/431. */
const ALLOWED = new Set([200, 400, 401, 403, 431]);

function assertAnswered(response: RawResponse | null, what: string): RawResponse {
  assert.ok(response !== null, `no answer (hang) for ${what}`);
  assert.ok(response.status !== 0, `connection closed without a response for ${what}`);
  assert.ok(ALLOWED.has(response.status), `status ${response.status} for ${what}`);
  if (response.status === 401 || response.status === 403) {
    const problems = errorBodyProblems(
      response.status,
      response.headers["content-type"] ?? "",
      response.body,
    );
    assert.deepEqual(problems, [], what);
  }
  return response;
}

/** Header-safe text: what a client can put on the wire (no CR, LF or NUL; bytes as latin1). */
function wire(value: string): string {
  return [...value].map((c) => c.charCodeAt(0) > 0xff || /[\r\n\0]/.test(c) ? "?" : c).join("");
}

for (const platform of PLATFORMS) {
  describe(`hostile HTTP requests to a guarded route (${platform})`, () => {
    let running: RunningApp;
    let key = "";
    let other = "";
    const faulty = new FaultyStorage();
    before(async () => {
      running = await bootApp(platform, {
        apiKeys: { peppers: { 1: PEPPER_1 }, storage: faulty.storage, storageTimeoutMs: 50 },
      });
      key = (await running.service.create({ tenantId: "t", name: "k", scopes: SCOPES })).key;
      other = (await running.service.create({ tenantId: "t", name: "o", scopes: SCOPES })).key;
    });
    after(() => running.close());

    const send = (headers: [string, string][]) =>
      rawRequest(running.port, getRequest("/keyed", headers));

    it("a valid key passes; the same key twice passes", async () => {
      assert.equal(assertAnswered(await send([["X-API-Key", key]]), "valid").status, 200);
      const twice = await send([["X-API-Key", key], ["X-API-Key", key]]);
      assert.equal(assertAnswered(twice, "same key twice").status, 200);
    });

    it("duplicate or conflicting key headers are refused as 401, not 5xx", async () => {
      for (
        const headers of [
          [["Authorization", `Bearer ${key}`], ["Authorization", `Bearer ${other}`]],
          [["X-API-Key", key], ["X-API-Key", other]],
          [["X-API-Key", key], ["Authorization", `Bearer ${other}`]],
          [["X-API-Key", `${key}, ${other}`]],
          [["Authorization", `Bearer ${key}, Bearer ${other}`]],
        ] as [string, string][][]
      ) {
        const response = assertAnswered(await send(headers), JSON.stringify(headers));
        assert.equal(response.status, 401);
        assert.ok(!response.raw.includes(key) && !response.raw.includes(other));
      }
    });

    it("oversized headers get 431 (or 400) from the HTTP layer, never a hang or 5xx", async () => {
      for (
        const headers of [
          [["X-API-Key", "A".repeat(100_000)]],
          [["Authorization", `Bearer ${"A".repeat(64_000)}`]],
          Array.from({ length: 3_000 }, (_, i) => [`X-Junk-${i}`, "x"]),
          [["X-API-Key", key + "A".repeat(10_000)]],
        ] as [string, string][][]
      ) {
        assertAnswered(await send(headers), `${headers.length} headers`);
      }
    });

    it("garbage bytes in headers: refused by the HTTP layer or 401, never 5xx", async () => {
      const cases: (string | Uint8Array)[] = [
        getRequest("/keyed", [["X-API-Key", "ak_live_\0abc"]]),
        getRequest("/keyed", [["X-API-Key", "ak\rlive"]]),
        `GET /keyed HTTP/1.1\r\nHost: x\r\nX-API-Key: ak\r\n continued\r\nConnection: close\r\n\r\n`,
        `GET /keyed HTTP/1.1\r\nHost: x\r\nX-API-Key\r\nConnection: close\r\n\r\n`,
        `GET /keyed HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\nConnection: close\r\n\r\n`,
        new Uint8Array([
          ...new TextEncoder().encode("GET /keyed HTTP/1.1\r\nHost: x\r\nX-API-Key: "),
          0xff,
          0xfe,
          0x80,
          ...new TextEncoder().encode("\r\nConnection: close\r\n\r\n"),
        ]),
        getRequest("/keyed", [["Authorization", "Bearer"]]),
        getRequest("/keyed", [["Authorization", "Basic dXNlcjpwYXNz"]]),
        getRequest("/keyed", [["X-API-Key", ""]]),
        getRequest("/keyed", [["X-API-Key", ",,,"]]),
        getRequest("/keyed", [["Authorization", `Bearer ${key}\t`]]),
      ];
      for (const request of cases) {
        const label = typeof request === "string" ? JSON.stringify(request.slice(0, 70)) : "bytes";
        assertAnswered(await rawRequest(running.port, request), label);
      }
    });

    it("generated header values (300 requests): 200 only for the real key, else 4xx", async () => {
      const value = fc.oneof(
        hostileString.filter((s) => s.length < 2_000),
        wellFormedKey,
        fc.constant(key),
        fc.tuple(fc.constantFrom("Bearer ", "bearer  ", "Token "), hostileString).map(
          ([scheme, token]) => scheme + token.slice(0, 200),
        ),
      ).map(wire);
      const header = fc.tuple(fc.constantFrom("X-API-Key", "Authorization", "x-api-key"), value);
      await fc.assert(
        fc.asyncProperty(fc.array(header, { minLength: 0, maxLength: 3 }), async (headers) => {
          const response = assertAnswered(
            await send(headers),
            JSON.stringify(headers).slice(0, 200),
          );
          if (response.status === 200) {
            assert.ok(headers.some(([, v]) => v.includes(key)), "authorized without the key");
          }
        }),
        { seed: SEED + 40, numRuns: 300 },
      );
    });

    for (const mode of ["reject", "hang", "malformed"] as const) {
      it(`storage ${mode}: 503 with a generic body, then recovers`, async () => {
        faulty.fail("findByPrefix", mode);
        try {
          const response = await send([["X-API-Key", key]]);
          assert.ok(response !== null);
          assert.equal(response.status, 503);
          const contentType = response.headers["content-type"] ?? "";
          assert.deepEqual(errorBodyProblems(503, contentType, response.body), []);
          assert.ok(!response.raw.includes(CAUSE_SECRET), "the storage cause leaked");
          assert.ok(!response.raw.includes(key), "the key leaked");
          assert.equal(JSON.parse(response.body).error.code, "api_key_storage_unavailable");
        } finally {
          faulty.clear();
        }
        assert.equal(assertAnswered(await send([["X-API-Key", key]]), "after").status, 200);
      });
    }
  });
}
