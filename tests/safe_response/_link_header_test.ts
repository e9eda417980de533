import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { appendLinks, linkValue, resolveLinkHeader } from "../../safe_response/_link_header.ts";

describe("Link header values", () => {
  it("quote the relation name and keep the URI reference header-safe", () => {
    assert.equal(linkValue("/a?b=1", "next"), '</a?b=1>; rel="next"');
    assert.equal(linkValue("/a>\n", "next"), '</a%3E%0A>; rel="next"');
  });

  it("are appended to a Link already set (a value or lines), never replacing it", () => {
    assert.equal(appendLinks(undefined, ["<a>; rel=x"]), "<a>; rel=x");
    assert.equal(appendLinks("<o>; rel=o", ["<a>; rel=x"]), "<o>; rel=o, <a>; rel=x");
    assert.equal(
      appendLinks(["<o>; rel=o", "<p>; rel=p"], ["<a>; rel=x"]),
      "<o>; rel=o, <p>; rel=p, <a>; rel=x",
    );
    assert.equal(appendLinks("<a>; rel=x", ["<a>; rel=x", "<b>; rel=y"]), "<a>; rel=x, <b>; rel=y");
    assert.equal(appendLinks(42, ["<a>; rel=x"]), "<a>; rel=x");
    assert.equal(appendLinks("<o>; rel=o", []), undefined);
  });

  it("percent-encode what an RFC 3986 URI reference cannot hold, a stray % too", () => {
    assert.equal(
      linkValue("/a|^[1]\\{}`%zz%41%4", "next"),
      '</a%7C%5E%5B1%5D%5C%7B%7D%60%25zz%41%254>; rel="next"',
    );
    assert.equal(linkValue("http://[::1]:8080/x[", "help"), '<http://[::1]:8080/x%5B>; rel="help"');
  });

  it("encode in one linear pass, runs copied whole: three million characters to encode in far under a second; non-ASCII and a lone surrogate as UTF-8", () => {
    assert.equal(
      linkValue("/é|x\ud83d\ude00\ud800", "next"),
      '</%C3%A9%7Cx%F0%9F%98%80%EF%BF%BD>; rel="next"',
    );
    for (const char of ["|", "é"]) {
      const uri = `/${char.repeat(3_000_000)}`;
      const started = performance.now();
      const value = linkValue(uri, "next");
      const ms = performance.now() - started;
      assert.ok(ms < 1_000, `${char}: ${ms.toFixed(0)} ms`);
      assert.equal(value.length, 3_000_000 * (char === "|" ? 3 : 6) + 1 + '<>; rel="next"'.length);
    }
  });

  it("skip a link whose relation the response's Link already has (the handler wins)", () => {
    const own = '</items?page=2&limit=20>; rel="next"';
    assert.equal(
      appendLinks(own, [
        '</items?page=1&limit=2>; rel="first"',
        '</items?page=2&limit=2>; rel="next"',
      ]),
      `${own}, </items?page=1&limit=2>; rel="first"`,
    );
    assert.equal(appendLinks("</n>; rel=NEXT", ['</x>; rel="next"']), "</n>; rel=NEXT");
    assert.equal(
      appendLinks('</n>; rel="prev next"', ['</x>; rel="next"']),
      '</n>; rel="prev next"',
    );
    // A rel inside another parameter's quoted string is not one
    assert.equal(
      appendLinks('</a>; title="x, <b>; rel=next"', ['</x>; rel="next"']),
      '</a>; title="x, <b>; rel=next", </x>; rel="next"',
    );
  });

  it("skip a deprecation or sunset link only when the same URI has that relation", () => {
    assert.equal(
      appendLinks("<https://d/m>; rel=deprecation", ['<https://d/m>; rel="deprecation"']),
      "<https://d/m>; rel=deprecation",
    );
    assert.equal(
      appendLinks('<https://d/old>; rel="Deprecation"', ['<https://d/m>; rel="deprecation"']),
      '<https://d/old>; rel="Deprecation", <https://d/m>; rel="deprecation"',
    );
  });

  it('validate the linkHeader option: true, false or "only"', () => {
    const where = "Paginated: `linkHeader`";
    assert.equal(resolveLinkHeader(undefined, where), false);
    assert.equal(resolveLinkHeader("only", where), "only");
    assert.throws(
      () => resolveLinkHeader("yes", where),
      /Paginated: `linkHeader` must be true, false or "only"/,
    );
  });
});
