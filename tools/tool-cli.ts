/**
 * What the kill-loop tools share at their command line: flags read with node's own
 * `util.parseArgs` (strict: an unknown flag or a missing value is an error naming the known ones),
 * non-negative integer values, and a main that prints the violations and sets the exit code
 * (0 clean, 1 violations, 2 the tool itself failed).
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

type Flags = Readonly<Record<string, 'integer' | 'string' | 'boolean'>>;
type Values<F extends Flags> = { [K in keyof F]?: F[K] extends 'integer' ? number : F[K] extends 'string' ? string : boolean };

/** Reads `argv` against `flags`; integer flags must be non-negative integers. */
export function readFlags<F extends Flags>(argv: readonly string[], flags: F): Values<F> {
  const known = Object.entries(flags).map(([name, kind]) => `--${name}${kind === 'boolean' ? '' : kind === 'integer' ? ' N' : ' VALUE'}`).join(' ');
  let parsed: ReturnType<typeof parseArgs>['values'];
  try {
    parsed = parseArgs({
      args: [...argv],
      options: Object.fromEntries(Object.entries(flags).map(([name, kind]) => [name, { type: kind === 'boolean' ? 'boolean' : 'string' }])),
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (err) {
    throw new Error(`${err instanceof Error ? err.message : String(err)} (known: ${known})`);
  }
  const out: Record<string, number | string | boolean> = {};
  for (const [name, value] of Object.entries(parsed)) {
    if (value === undefined) continue;
    if (flags[name] === 'integer') {
      const n = Number(value);
      if (typeof value !== 'string' || !/^\d+$/.test(value) || !Number.isSafeInteger(n)) throw new Error(`--${name} needs a non-negative integer`);
      out[name] = n;
    } else out[name] = value as string | boolean;
  }
  return out as Values<F>;
}

/** Runs `run` when `moduleUrl` is the program node started; prints its violations, sets the exit code. */
export async function mainOf(moduleUrl: string, run: () => Promise<{ readonly violations: readonly string[] }>): Promise<void> {
  if (process.argv[1] === undefined || resolve(process.argv[1]) !== fileURLToPath(moduleUrl)) return;
  try {
    const report = await run();
    if (report.violations.length > 0) {
      console.log('violations:');
      for (const v of report.violations) console.log(`  ${v}`);
      process.exitCode = 1;
    }
  } catch (err) {
    console.error(err);
    process.exitCode = 2;
  }
}
