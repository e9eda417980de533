/** Runs the import-keys CLI (scripts/import_keys.ts) on JSON Lines exports made for the test. */
import { nestarcHash, nestarcKey } from "../api_keys/verify/nestarc.ts";

/** The CLI's path. */
export const SCRIPT = new URL("../../scripts/import_keys.ts", import.meta.url).pathname;

/** Runs the CLI with `args` and `env`; its exit code, stdout and stderr. */
export async function runImport(args: string[], env: Record<string, string>) {
  const output = await new Deno.Command(Deno.execPath(), {
    // --quiet: no `Download …` line of a fresh cache in the stderr a test compares.
    args: ["run", "--quiet", "-A", SCRIPT, ...args],
    env: { ...env, NO_COLOR: "1" },
    clearEnv: false,
  }).output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: output.code, stdout: decode(output.stdout), stderr: decode(output.stderr) };
}

/** A JSONL export of `count` nestarc keys hashed with `pepper`, plus the lines given. */
export function exportFile(count: number, pepper: string, extra: string[] = []) {
  const keys = Array.from({ length: count }, () => nestarcKey("ak"));
  const lines = keys.map((key, i) =>
    JSON.stringify({
      id: `cli-${i}-${key.prefix}`,
      tenantId: "t-cli",
      name: `cli ${i}`,
      environment: "live",
      prefix: key.prefix,
      hash: nestarcHash(key.secret, pepper),
      hashScheme: "sha256-pepper",
      pepperVersion: 1,
      scopes: ["orders:read"],
      createdAt: "2029-01-01T00:00:00.000Z",
    })
  );
  const path = Deno.makeTempFileSync({ suffix: ".jsonl" });
  Deno.writeTextFileSync(path, [...lines, ...extra].join("\n") + "\n");
  return { keys, path };
}
