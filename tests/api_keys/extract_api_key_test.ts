import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { extractApiKey } from "../../api_keys/extract_api_key.ts";
import { ApiKeyError } from "../../api_keys/errors.ts";
import { generateKey, MAX_API_KEY_LENGTH } from "../../api_keys/key_format.ts";
import { nestarcKey } from "./verify/nestarc.ts";

const KEY = generateKey({ environment: "live" }).raw;
const OTHER = generateKey({ environment: "live" }).raw;
const JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c2VyLTEifQ.c2lnbmF0dXJlLW9mLXRoZS10b2tlbg";

function extract(headers: Record<string, string | string[]>): string | undefined {
  return extractApiKey((name) => headers[name]);
}

function assertMalformed(headers: Record<string, string | string[]>, secrets: string[] = []) {
  assert.throws(
    () => extract(headers),
    (error: unknown) => {
      assert.ok(error instanceof ApiKeyError);
      assert.equal(error.code, "api_key_malformed");
      assert.equal(error.httpStatus, 401);
      for (const secret of secrets) {
        assert.ok(!error.message.includes(secret), "message leaks a key");
        assert.ok(!String(error.reason).includes(secret), "reason leaks a key");
      }
      return true;
    },
  );
}

describe("extractApiKey", () => {
  it("returns undefined when no key is present", () => {
    assert.equal(extract({}), undefined);
    assert.equal(extract({ "x-api-key": "   " }), undefined);
    assert.equal(extract({ authorization: `Bearer ${JWT}` }), undefined);
    assert.equal(extract({ authorization: "Basic dXNlcjpwYXNz" }), undefined);
  });

  it("reads X-API-Key, trimmed", () => {
    assert.equal(extract({ "x-api-key": KEY }), KEY);
    assert.equal(extract({ "x-api-key": `  ${KEY}\t` }), KEY);
  });

  it("passes a non-key X-API-Key value on so verification reports it malformed", () => {
    assert.equal(extract({ "x-api-key": "not-a-key" }), "not-a-key");
  });

  it("reads a key-shaped Bearer token, scheme case-insensitive", () => {
    assert.equal(extract({ authorization: `Bearer ${KEY}` }), KEY);
    assert.equal(extract({ authorization: `bearer   ${KEY}` }), KEY);
  });

  it("ignores a JWT in Authorization beside a key in X-API-Key", () => {
    assert.equal(extract({ authorization: `Bearer ${JWT}`, "x-api-key": KEY }), KEY);
  });

  it("accepts the same key in both headers", () => {
    assert.equal(extract({ authorization: `Bearer ${KEY}`, "x-api-key": KEY }), KEY);
  });

  it("rejects two different keys without naming either", () => {
    assertMalformed({ authorization: `Bearer ${OTHER}`, "x-api-key": KEY }, [KEY, OTHER]);
  });

  it("rejects differing values of one header, as lines or joined with commas", () => {
    assertMalformed({ "x-api-key": [KEY, OTHER] }, [KEY, OTHER]);
    assertMalformed({ "x-api-key": `${KEY}, ${OTHER}` }, [KEY, OTHER]);
    assertMalformed({ authorization: [`Bearer ${KEY}`, `Bearer ${OTHER}`] }, [KEY, OTHER]);
    assertMalformed({ authorization: `Bearer ${KEY}, Bearer ${OTHER}` }, [KEY, OTHER]);
  });

  it("accepts repeated identical values", () => {
    assert.equal(extract({ "x-api-key": [KEY, KEY] }), KEY);
    assert.equal(extract({ "x-api-key": `${KEY}, ${KEY}` }), KEY);
  });

  it("rejects an over-long X-API-Key before any other work", () => {
    assertMalformed({ "x-api-key": "a".repeat(MAX_API_KEY_LENGTH + 1) });
    const longest = "a".repeat(MAX_API_KEY_LENGTH);
    assert.equal(extract({ "x-api-key": longest }), longest);
  });

  it("treats an over-long Bearer token as no key", () => {
    assert.equal(extract({ authorization: `Bearer ${"a".repeat(10_000)}` }), undefined);
    assert.equal(extract({ authorization: `Bearer ${"b".repeat(500)}`, "x-api-key": KEY }), KEY);
  });

  it("a bare key in Authorization (no scheme) is malformed, saying how to send it, never echoing it", () => {
    for (const authorization of [KEY, ` ${KEY}\t`, [KEY]]) {
      assert.throws(() => extract({ authorization }), (error: unknown) => {
        assert.ok(error instanceof ApiKeyError);
        assert.equal(error.code, "api_key_malformed");
        assert.equal(
          error.reason,
          "Authorization carries a key without a scheme: send `Authorization: Bearer <key>` or " +
            "`X-API-Key: <key>`",
        );
        assert.ok(!`${error.message} ${error.reason} ${JSON.stringify(error)}`.includes(KEY));
        return true;
      });
    }
  });

  it("a bare Authorization value that is no key, or beside a key sent as the rules say, changes nothing", () => {
    assert.equal(extract({ authorization: "Basic dXNlcjpwYXNz" }), undefined);
    assert.equal(extract({ authorization: "not-a-key" }), undefined);
    assert.equal(extract({ authorization: JWT }), undefined);
    assert.equal(extract({ authorization: KEY, "x-api-key": KEY }), KEY);
    assert.equal(extract({ authorization: OTHER, "x-api-key": KEY }), KEY);
    assert.equal(extract({ authorization: [KEY, `Bearer ${KEY}`] }), KEY);
  });

  it("reads headers only by their lower-case names", () => {
    const asked: string[] = [];
    extractApiKey((name) => {
      asked.push(name);
      return undefined;
    });
    assert.deepEqual(asked.sort(), ["authorization", "x-api-key"]);
  });
});

const LONG = {
  separator: "_",
  namespace: "N".repeat(32),
  environments: { live: "live", test: "test" },
  prefixLength: 12,
  secretLength: 64,
  alphabet: "base62",
  checksum: false,
} as const;

describe("extractApiKey with legacy layouts", () => {
  const legacy = { legacyKeyLayouts: ["nestarc-v0" as const] };
  const long = { legacyKeyLayouts: [{ name: "long", ...LONG }] };

  it("reads a Bearer token of an enabled layout, and only then", () => {
    const { raw } = nestarcKey("ak");
    const headers: Record<string, string> = { authorization: `Bearer ${raw}` };
    assert.equal(extractApiKey((name) => headers[name]), undefined);
    assert.equal(extractApiKey((name) => headers[name], legacy), raw);
  });

  it("a bare key of an enabled layout in Authorization is malformed, of another layout no key", () => {
    const { raw } = nestarcKey("nk");
    const headers: Record<string, string> = { authorization: raw };
    assert.equal(extractApiKey((name) => headers[name]), undefined);
    assert.throws(
      () => extractApiKey((name) => headers[name], legacy),
      (error: unknown) =>
        error instanceof ApiKeyError && error.code === "api_key_malformed" &&
        /without a scheme: send `Authorization: Bearer <key>`/.test(String(error.reason)) &&
        !String(error.reason).includes(raw),
    );
  });

  it("raises the length limit to the longest key of the enabled layouts", () => {
    const raw = `${"N".repeat(32)}_live_${"p".repeat(12)}_${"s".repeat(64)}`;
    assert.ok(raw.length > MAX_API_KEY_LENGTH);
    const headers: Record<string, string> = { "x-api-key": raw };
    assert.throws(() => extractApiKey((name) => headers[name]), /API key is malformed/);
    assert.equal(extractApiKey((name) => headers[name], long), raw);
    assert.throws(
      () =>
        extractApiKey((name) => ({ "x-api-key": raw + "s" } as Record<string, string>)[name], long),
      /API key is malformed/,
    );
    const bearer: Record<string, string> = { authorization: `Bearer ${raw}` };
    assert.equal(extractApiKey((name) => bearer[name], long), raw);
  });
});
