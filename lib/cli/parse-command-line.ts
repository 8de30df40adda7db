/**
 * The command line, parsed with node:util's parseArgs (strict): global options may come before or
 * after the command; every unknown option, missing value or stray positional is a UsageError
 * (exit 2). The command table (commands.ts) says what each command accepts.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from '../common/errors.js';

export type OptionSpecs = NonNullable<ParseArgsConfig['options']>;
export type OptionValues = Record<string, string | boolean | string[] | undefined>;

export interface GlobalOptions {
  readonly dataDir?: string;
  readonly config?: string;
  readonly json: boolean;
  /** Adopt live drives the journal lost (Driver.open's adoptOrphans). */
  readonly adoptOrphans: boolean;
}

export const GLOBAL_OPTIONS = {
  'data-dir': { type: 'string' },
  config: { type: 'string' },
  json: { type: 'boolean' },
  'adopt-orphans': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies OptionSpecs;

/** The options accepted before the command, and how many words each takes. */
const LEADING: Readonly<Record<string, number>> = { '--data-dir': 2, '--config': 2, '--json': 1, '--adopt-orphans': 1, '--help': 1, '-h': 1, '--version': 1 };

export interface CommandShape {
  readonly options: OptionSpecs;
  /** Minimum and maximum positionals (after the command name). */
  readonly positionals: readonly [min: number, max: number];
  /** Words after `--` are passed through (the program's argv), not taken as positionals. */
  readonly passThrough?: boolean;
}

export interface ParsedCommandLine {
  readonly command: string | undefined;
  readonly global: GlobalOptions;
  readonly help: boolean;
  readonly version: boolean;
  readonly values: OptionValues;
  readonly positionals: readonly string[];
  /** Words after `--` for a passThrough command. */
  readonly rest: readonly string[];
}

export function usageError(message: string, context: Record<string, unknown> = {}): UsageError {
  return new UsageError('BAD_ARGUMENT', message, context);
}

/** Splits off the command name: the first word that is not a leading global option. */
export function findCommand(argv: readonly string[]): { command: string | undefined; index: number; version: boolean } {
  let i = 0;
  let version = false;
  while (i < argv.length) {
    const word = argv[i] as string;
    if (!word.startsWith('-') || word === '-') return { command: word, index: i, version };
    if (word === '--') throw usageError('"--" must come after a command (tmux-drive create --allow ID -- ARGS…)');
    const name = word.includes('=') ? word.slice(0, word.indexOf('=')) : word;
    const words = LEADING[name];
    if (words === undefined) throw usageError(`unknown option ${name} before the command (see tmux-drive --help)`, { option: name });
    if (name === '--version') version = true;
    i += word.includes('=') ? 1 : words;
    if (i > argv.length) throw usageError(`option ${name} needs a value`, { option: name });
  }
  return { command: undefined, index: argv.length, version };
}

function rethrowParseError(err: unknown, command: string): never {
  const code = (err as { code?: string }).code;
  if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS')) {
    const first = String((err as Error).message).split('\n')[0]?.replace(/\. To specify a positional argument.*$/, '') ?? 'bad arguments';
    throw usageError(`${command}: ${first} (see tmux-drive ${command} --help)`, { command });
  }
  throw err;
}

export function parseCommandLine(argv: readonly string[], shapeOf: (command: string) => CommandShape | undefined): ParsedCommandLine {
  const { command, index, version } = findCommand(argv);
  const leading = argv.slice(0, index);
  if (command === undefined) {
    const { values } = parseLeading(leading);
    return { command, global: globalsOf(values), help: values.help === true, version, values, positionals: [], rest: [] };
  }
  const shape = shapeOf(command);
  if (!shape) throw usageError(`unknown command "${command}" (see tmux-drive --help)`, { command });
  const words = [...leading.filter((w) => w !== '--version'), ...argv.slice(index + 1)];
  const parsed = strictParse(words, { ...shape.options, ...GLOBAL_OPTIONS }, command);
  const values = parsed.values as OptionValues;
  const help = values.help === true;
  let positionals = parsed.positionals;
  let rest: string[] = [];
  if (shape.passThrough) {
    // Words before `--` are the command's positionals, words after it the program's argv.
    const terminator = parsed.tokens.find((t) => t.kind === 'option-terminator')?.index ?? Number.POSITIVE_INFINITY;
    const words = parsed.tokens.flatMap((t) => (t.kind === 'positional' ? [t] : []));
    positionals = words.filter((t) => t.index < terminator).map((t) => t.value);
    rest = words.filter((t) => t.index > terminator).map((t) => t.value);
  }
  if (!help) {
    const [min, max] = shape.positionals;
    if (positionals.length < min) throw usageError(`${command}: missing argument(s) (see tmux-drive ${command} --help)`, { command });
    if (positionals.length > max) {
      const hint = shape.passThrough ? '; program arguments go after "--"' : '';
      throw usageError(`${command}: unexpected argument "${positionals[max] ?? ''}"${hint} (see tmux-drive ${command} --help)`, { command });
    }
  }
  return { command, global: globalsOf(values), help, version, values, positionals, rest };
}

function strictParse(args: string[], options: OptionSpecs, command: string) {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: true, tokens: true });
  } catch (err) {
    return rethrowParseError(err, command);
  }
}

function parseLeading(words: readonly string[]): { values: OptionValues } {
  try {
    const { values } = parseArgs({ args: words.filter((w) => w !== '--version'), options: GLOBAL_OPTIONS, strict: true, allowPositionals: false });
    return { values: values as OptionValues };
  } catch (err) {
    rethrowParseError(err, '(global)');
  }
}

function globalsOf(values: OptionValues): GlobalOptions {
  const dataDir = values['data-dir'];
  const config = values.config;
  return {
    ...(typeof dataDir === 'string' ? { dataDir } : {}),
    ...(typeof config === 'string' ? { config } : {}),
    json: values.json === true,
    adoptOrphans: values['adopt-orphans'] === true,
  };
}

/** A whole number option or argument within [min, max]; anything else is a usage error. */
export function intArg(label: string, raw: string | undefined, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^-?\d+$/.test(raw)) throw usageError(`${label} must be a whole number (got "${raw}")`, { label });
  const n = Number(raw);
  if (n < min || n > max) throw usageError(`${label} must be from ${min} to ${max} (got ${raw})`, { label });
  return n;
}

/** One of `choices`, or a usage error naming them. */
export function choiceArg<T extends string>(label: string, raw: string | undefined, choices: readonly T[]): T | undefined {
  if (raw === undefined) return undefined;
  if (!(choices as readonly string[]).includes(raw)) throw usageError(`${label} must be one of ${choices.join(', ')} (got "${raw}")`, { label });
  return raw as T;
}
