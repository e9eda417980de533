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
