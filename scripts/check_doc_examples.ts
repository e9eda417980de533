/**
 * Fails when an exported symbol of an entry point has no `@example` in its doc
 * comment (JSR scores this; `deno doc --lint` checks only that docs exist).
 * Run by `deno task doc:lint`.
 *
 * @module
 */
const config = JSON.parse(await Deno.readTextFile(new URL("../deno.json", import.meta.url)));
const entries = Object.values(config.exports as Record<string, string>);

interface DocSymbol {
  name: string;
  declarations: { jsDoc?: { tags?: { kind: string }[] } }[];
}

/** Names of the exported symbols of `entry` whose docs carry no `@example`. */
async function withoutExample(entry: string): Promise<string[]> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["doc", "--json", entry],
    stderr: "inherit",
  }).output();
  if (!output.success) throw new Error(`deno doc failed for ${entry}`);
  const doc = JSON.parse(new TextDecoder().decode(output.stdout));
  const names: string[] = [];
  for (const module of Object.values(doc.nodes) as { symbols?: DocSymbol[] }[]) {
    for (const symbol of module.symbols ?? []) {
      const hasExample = symbol.declarations.some((declaration) =>
        declaration.jsDoc?.tags?.some((tag) => tag.kind === "example")
      );
      if (!hasExample) names.push(symbol.name);
    }
  }
  return names;
}

const missing = new Set((await Promise.all(entries.map(withoutExample))).flat());
if (missing.size > 0) {
  console.error(`Exports without an @example: ${[...missing].sort().join(", ")}`);
  Deno.exit(1);
}
console.log(`Every export of ${entries.length} entry points has an @example.`);
