import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { durationOf, Format, formatFor, overridesOf } from "../../../client/elements/_format.ts";
import { API_KEYS_MANAGER_STRINGS } from "../../../client/elements/strings.ts";

describe("client/elements/_format.ts", () => {
  const f = new Format("en-US");
  const now = Date.parse("2026-01-01T12:00:00Z");

  it("form: the number's plural category in the language, other when the forms lack it; a string for every number", () => {
    const requests = { one: "{count} request", other: "{count} requests" };
    assert.equal(f.form(requests, 1), "{count} request");
    assert.equal(f.form(requests, 0), "{count} requests");
    assert.equal(f.form(requests, 2), "{count} requests");
    const polish = {
      one: "{count} klucz",
      few: "{count} klucze",
      many: "{count} kluczy",
      other: "-",
    };
    const pl = new Format("pl");
    assert.deepEqual([1, 3, 5, 22, 1.5].map((n) => pl.form(polish, n)), [
      "{count} klucz",
      "{count} klucze",
      "{count} kluczy",
      "{count} klucze",
      "-",
    ]);
    assert.equal(pl.form(requests, 3), "{count} requests", "few: no form, other");
    assert.equal(f.form("{count} left", 1), "{count} left");
    // The English defaults take English rules on any page: "0 requests", "21 requests".
    const { usageTotal } = API_KEYS_MANAGER_STRINGS;
    assert.equal(new Format("fr").form(usageTotal, 0), "{count} requests");
    assert.equal(new Format("ru").form(usageTotal, 21), "{count} requests");
    assert.equal(new Format("fr").form(usageTotal, 1), "{count} request");
    // A page's own forms take its language's rules (French: 0 is "one").
    const french = { one: "{count} appel", other: "{count} appels" };
    assert.equal(new Format("fr").form(french, 0), "{count} appel");
    assert.equal(
      f.form(Object.assign(Object.create({ one: "inherited" }), { other: "o" }), 1),
      "o",
    );
  });

  it("overridesOf: known names only; a string for any, plural forms (own, by category, other among them) for a string with a number in it; copies, frozen", () => {
    const forms = { one: "{count} zostało", few: "{count} zostały", other: "{count} zostało" };
    const kept = overridesOf({
      title: "Klucze",
      creditsLeft: forms,
      pool: { other: "pula: {count}" },
      creditsRefill: { one: "+{amount}", other: "+{amount} {when}" },
      creditsRefillEvery: { other: "{amount} {every}" },
      usageTotal: { other: "{count}" },
      policy: { other: "{limit} / {window}" },
    });
    assert.deepEqual(Object.keys(kept), [
      "title",
      "creditsLeft",
      "pool",
      "creditsRefill",
      "creditsRefillEvery",
      "usageTotal",
      "policy",
    ]);
    assert.deepEqual(kept.creditsLeft, forms);
    assert.notEqual(kept.creditsLeft, forms);
    assert.ok(Object.isFrozen(kept.creditsLeft));
    class Inherited {
      get other() {
        return "from a getter";
      }
    }
    const dropped = overridesOf({
      title: { other: "a label takes no forms" },
      errorNotFound: { other: "nor a message" },
      unknownName: "x",
      usageTotal: { one: "no other" },
      usageHour: { other: 2 },
      usageLabel: { other: "b", several: "c" },
      creditsLeft: Object.create({ other: "inherited" }),
      pool: new Inherited(),
      creditsStart: ["a"],
      creditsStartShared: null,
      policy: 7,
    } as never);
    assert.deepEqual(dropped, {});
    assert.deepEqual(overridesOf(undefined as never), {});
  });

  it("durationOf reads m, h, d, w and y; anything else is null", () => {
    assert.deepEqual(durationOf("24h"), { unit: "hour", count: 24, ms: 86_400_000 });
    assert.equal(durationOf("30d")?.ms, 30 * 86_400_000);
    assert.equal(durationOf("never"), null);
    assert.equal(durationOf("12345d"), null);
  });

  it("relative picks the largest unit, rounded to the minute (59:59.9 is 1 hour)", () => {
    assert.equal(f.relative(new Date(now + 3 * 86_400_000 - 5), now), "in 3 days");
    assert.equal(f.relative(new Date(now + 3_600_000 - 100), now), "in 1 hour");
    assert.equal(f.relative(new Date(now - 2 * 3_600_000), now), "2 hours ago");
    assert.equal(f.relative(new Date(now + 10_000), now), "in 10 seconds");
  });

  it("wait: seconds under a minute (a Retry-After of 30 is not 1 minute), else as relative", () => {
    assert.equal(f.wait(30, now), "in 30 seconds");
    assert.equal(f.wait(1, now), "in 1 second");
    assert.equal(f.wait(0, now), "now");
    assert.equal(f.wait(120, now), "in 2 minutes");
    assert.equal(f.wait(7_200, now), "in 2 hours");
  });

  it("numbers, durations, windows and dates in the language", () => {
    assert.equal(f.number(10_000), "10,000");
    assert.equal(f.duration("7d"), "7 days");
    assert.equal(f.duration("soon"), "soon");
    assert.equal(f.window(60_000), "1 minute");
    assert.equal(f.window(86_400_000), "1 day");
    assert.equal(f.window(1_500), "1,500 ms");
    assert.match(new Format("fr").duration("24h"), /^24\s+heures$/u);
    assert.match(f.dateTime(new Date(now)), /2026/);
  });
  it("a language tag Intl refuses (en_US, <html lang> as some pages write it) formats in the browser's", () => {
    const f = new Format("en_US"); // Intl's constructors throw a RangeError on it
    assert.equal(f.number(12_345.5), new Intl.NumberFormat().format(12_345.5));
    assert.equal(f.dateTime(new Date(now)), new Format(undefined).dateTime(new Date(now)));
    assert.equal(f.duration("7d"), new Format(undefined).duration("7d"));
  });

  it("formatFor makes the formatters once per language, again when it changes", () => {
    const fr = formatFor("fr");
    assert.equal(formatFor("fr"), fr);
    assert.notEqual(formatFor("de"), fr);
    assert.match(formatFor("fr").duration("24h"), /^24\s+heures$/u);
    assert.equal(formatFor("en_US").number(1_000), new Intl.NumberFormat().format(1_000));
  });
});
