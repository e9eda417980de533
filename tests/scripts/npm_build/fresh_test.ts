import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";

// The build scripts run on Deno only (they read deno.json with Deno APIs).
const onDeno = "Deno" in globalThis;
const fresh = "../../../scripts/npm_build/fresh.ts"; // computed: Deno only
const config = "../../../scripts/npm_build/config.ts";
const { isFresh, librarySources } = onDeno ? await import(fresh) : {} as never;
const { OUT_DIR, readDenoJson, ROOT } = onDeno ? await import(config) : {} as never;

describe("npm build freshness", { skip: !onDeno && "the build runs on Deno" }, () => {
  it("the library sources are each deno.json export's top folder or file", () => {
    const sources = librarySources();
    for (const file of Object.values(readDenoJson().exports) as string[]) {
      const top = file.replace(/^\.\//, "").split("/")[0];
      assert.ok(sources.includes(join(ROOT, top)), top);
    }
    assert.ok(sources.includes(join(ROOT, "rate_limits")));
  });

  it("a build is fresh only when its esm/mod.js is newer than every library source", async () => {
    const dir = await Deno.makeTempDir();
    try {
      assert.equal(isFresh(dir), false, "no build");
      await Deno.mkdir(join(dir, "esm"));
      const marker = join(dir, "esm", "mod.js");
      await Deno.writeTextFile(marker, "");
      await Deno.utime(marker, 0, 0);
      assert.equal(isFresh(dir), false, "older than the sources");
      const later = Date.now() / 1000 + 60;
      await Deno.utime(marker, later, later);
      assert.equal(isFresh(dir), true);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });

  it("builds into API_KIT_NPM_OUT when set (a private build), else npm/", async () => {
    assert.equal(OUT_DIR, join(ROOT, "npm"));
    const { stdout } = await new Deno.Command(Deno.execPath(), {
      args: [
        "eval",
        `import { OUT_DIR } from "${new URL(
          "../../../scripts/npm_build/config.ts",
          import.meta.url,
        )}"; console.log(OUT_DIR);`,
      ],
      env: { API_KIT_NPM_OUT: "/tmp/elsewhere" },
    }).output();
    assert.equal(new TextDecoder().decode(stdout).trim(), "/tmp/elsewhere");
  });
});
