/**
 * Fails when an exported function or class of an entry point has no `@example`
 * in its doc comment (JSR scores this; `deno doc --lint` checks only that docs
 * exist), or when an exported constant (an upper-case name) has one (examples teach calls, not
 * values). Run by `deno task doc:lint`.
 *
 * @module
 */
const config = JSON.parse(await Deno.readTextFile(new URL("../deno.json", import.meta.url)));
const entries = Object.values(config.exports as Record<string, string>);

interface DocSymbol {
  name: string;
  declarations: { kind: string; jsDoc?: { tags?: { kind: string }[] } }[];
}

/** The exported functions and classes of `entry` without an `@example`, and its constants with one. */
async function misplacedExamples(entry: string): Promise<{ missing: string[]; extra: string[] }> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["doc", "--json", entry],
    stderr: "inherit",
  }).output();
  if (!output.success) throw new Error(`deno doc failed for ${entry}`);
  const doc = JSON.parse(new TextDecoder().decode(output.stdout));
  const missing: string[] = [];
  const extra: string[] = [];
  for (const module of Object.values(doc.nodes) as { symbols?: DocSymbol[] }[]) {
    for (const symbol of module.symbols ?? []) {
      const kinds = symbol.declarations.map((declaration) => declaration.kind);
      const hasExample = symbol.declarations.some((declaration) =>
        declaration.jsDoc?.tags?.some((tag) => tag.kind === "example")
      );
      const callable = kinds.includes("function") || kinds.includes("class");
      if (callable && !hasExample) missing.push(symbol.name);
      const constant = kinds.includes("variable") && /^[A-Z][A-Z0-9_]*$/.test(symbol.name);
      if (!callable && constant && hasExample) extra.push(symbol.name);
    }
  }
  return { missing, extra };
}

const results = await Promise.all(entries.map(misplacedExamples));
const missing = new Set(results.flatMap((result) => result.missing));
const extra = new Set(results.flatMap((result) => result.extra));
if (missing.size > 0) {
  console.error(`Functions and classes without an @example: ${[...missing].sort().join(", ")}`);
}
if (extra.size > 0) console.error(`Constants with an @example: ${[...extra].sort().join(", ")}`);
if (missing.size + extra.size > 0) Deno.exit(1);
console.log(`Every function and class of ${entries.length} entry points has an @example.`);
