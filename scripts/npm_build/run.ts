/**
 * Runs a subprocess with inherited or captured output.
 *
 * @module
 */

/** Output of a captured run. */
export interface RunResult {
  /** Exit code. */
  code: number;
  /** Standard output. */
  stdout: string;
  /** Standard error. */
  stderr: string;
}

/** Runs `cmd` with `args` in `cwd`, capturing output. */
export async function capture(
  cmd: string,
  args: string[],
  cwd: string,
  env?: Record<string, string>,
): Promise<RunResult> {
  const output = await new Deno.Command(cmd, { args, cwd, env, stdout: "piped", stderr: "piped" })
    .output();
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}

/** Runs `cmd` with `args` in `cwd`, output inherited; returns the exit code. */
export async function inherit(
  cmd: string,
  args: string[],
  cwd: string,
  env?: Record<string, string>,
): Promise<number> {
  const status = await new Deno.Command(cmd, {
    args,
    cwd,
    env,
    stdin: "null",
    stdout: "inherit",
    stderr: "inherit",
  }).spawn().status;
  return status.code;
}
