#!/usr/bin/env node
/**
 * `tmux-drive`: the library on the command line. Each invocation is one call of the gate: through
 * the serving host of the data dir when one serves (`tmux-drive serve`; a thin client, no lease
 * of its own), else as its own host process: Driver.open (re-attaches the drive it names) → one
 * call → close (detaches; the drives keep running). Output is readable text, or one JSON document
 * on stdout with --json. Any error: exit 1 (2 for usage errors) and one line on stderr,
 * `tmux-drive: CODE: message`.
 */
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { GateAccess, OpenGateOptions } from '../client/open-gate.js';
import { TmuxDriveError, UsageError } from '../common/errors.js';
import { COMMANDS, DoctorFailed, type CommandResult, type CommandSpec } from './commands.js';
import { parseCommandLine } from './parse-command-line.js';

export const USAGE_EXIT = 2;

export interface CliIo {
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown };
  readonly stdinIsTty: boolean;
  /** TMUX_DRIVE_TOKEN and TMUX_DRIVE_SOCKET are read from it (default process.env). */
  readonly env?: NodeJS.ProcessEnv;
}

const GLOBAL_HELP = [
  'global options (before or after the command):',
  '  --data-dir DIR  where drives, sockets and the journal live (default: $XDG_STATE_HOME/tmux-drive)',
  "  --config FILE   the operator's config (YAML or JSON); without it only `shell` is allowed",
  '  --json          machine output: one JSON document on stdout (errors too)',
  '  --adopt-orphans re-attach live drives the journal lost (emptied or deleted), instead of refusing',
  'environment: TMUX_DRIVE_TOKEN (a capability token: calls go only through the serving host),',
  '  TMUX_DRIVE_SOCKET (the serving host\'s socket, when it is not under the data dir: an ssh forward)',
  '  -h, --help      help (tmux-drive COMMAND --help for one command)',
  '  --version',
];

function commandOf(name: string): CommandSpec | undefined {
  return COMMANDS.find((c) => c.name === name);
}

function version(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg)) return String((JSON.parse(readFileSync(pkg, 'utf8')) as { version?: unknown }).version ?? 'unknown');
    const up = dirname(dir);
    if (up === dir) return 'unknown';
    dir = up;
  }
}

export function helpText(command?: CommandSpec): string {
  if (command) {
    return [`usage: tmux-drive ${command.usage}`, '', command.summary, ...(command.help ? ['', ...command.help.map((l) => `  ${l}`)] : []), '', ...GLOBAL_HELP].join('\n');
  }
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    'usage: tmux-drive [--data-dir DIR] [--config FILE] [--json] COMMAND [ARGS…]',
    '',
    'Drive interactive terminal programs in sandboxed per-drive tmux servers. Each command is one',
    'library call; drives keep running between commands and are found again by name.',
    '',
    'commands:',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    ...GLOBAL_HELP,
    '',
    'exit status: 0 done; 1 error; 2 usage error; 124 wait timed out',
  ].join('\n');
}

/** One line: newlines in a message would break "one line on stderr". */
function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}

interface ErrorReport {
  readonly code: string;
  readonly message: string;
  readonly exitCode: number;
  readonly details?: Record<string, unknown>;
}

export function errorReport(err: unknown): ErrorReport {
  if (err instanceof UsageError) return { code: err.code, message: err.message, exitCode: USAGE_EXIT };
  if (err instanceof TmuxDriveError) {
    const issues = (err.context as { issues?: unknown }).issues;
    return { code: err.code, message: err.message, exitCode: 1, ...(Array.isArray(issues) && issues.length > 0 ? { details: { issues } } : {}) };
  }
  if (err instanceof DoctorFailed) return { code: err.code, message: err.message, exitCode: 1 };
  const e = err as { code?: unknown; message?: unknown };
  return { code: typeof e?.code === 'string' ? e.code : 'INTERNAL', message: typeof e?.message === 'string' ? e.message : String(err), exitCode: 1 };
}

/** Runs one command line; resolves with the exit status (the caller exits). */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  let json = argv.includes('--json');
  const controller = new AbortController();
  let interrupted = 0;
  const onSignal = (): void => {
    interrupted += 1;
    // The first signal aborts a wait and lets the driver close (releasing the lease); a second one quits.
    if (interrupted > 1) process.exit(130);
    controller.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  let gate: GateAccess | undefined;
  try {
    const parsed = parseCommandLine(argv, commandOf);
    json = parsed.global.json;
    if (parsed.version) {
      io.stdout.write(json ? `${JSON.stringify({ version: version() })}\n` : `tmux-drive ${version()}\n`);
      return 0;
    }
    const spec = parsed.command === undefined ? undefined : commandOf(parsed.command);
    if (parsed.help || !spec) {
      if (!spec && !parsed.help) {
        io.stderr.write(`${helpText()}\n`);
        return USAGE_EXIT;
      }
      io.stdout.write(`${helpText(spec)}\n`);
      return 0;
    }
    if (spec.name === 'mcp') {
      // stdout is the MCP channel from here on: nothing else may be written to it.
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
    if (spec.name === 'serve') {
      // A foreground host: SIGTERM/SIGINT stop it cleanly (the drives keep running), every time.
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      const stop = (): void => controller.abort();
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
    }
    const env = io.env ?? process.env;
    const token = env.TMUX_DRIVE_TOKEN && env.TMUX_DRIVE_TOKEN.length > 0 ? env.TMUX_DRIVE_TOKEN : undefined;
    const socket = env.TMUX_DRIVE_SOCKET && env.TMUX_DRIVE_SOCKET.length > 0 ? env.TMUX_DRIVE_SOCKET : undefined;
    const gateOptions: OpenGateOptions = {
      ...(parsed.global.dataDir ? { dataDir: parsed.global.dataDir } : {}),
      ...(parsed.global.config ? { config: parsed.global.config } : {}),
      ...(token !== undefined ? { token } : {}),
      ...(socket !== undefined ? { socket } : {}),
      owner: `tmux-drive ${spec.name} (pid ${process.pid})`,
      // attach lasts as long as the person's terminal does: its client follows a standby that
      // takes over, and takes the person's hold again there (lib/client/README.md).
      ...(spec.name === 'attach' ? { persistent: true } : {}),
      ...(parsed.global.adoptOrphans ? { adoptOrphans: true } : {}),
      // In-process, only the drive this command names: other invocations may be driving other drives now.
      reattach: spec.name === 'list' ? 'all' : spec.name === 'create' || parsed.positionals[0] === undefined ? [] : [parsed.positionals[0]],
      logger: { warn: (message) => io.stderr.write(`tmux-drive: warning: ${oneLine(message)}\n`) },
    };
    let opening: Promise<GateAccess> | undefined;
    const openGate = (): Promise<GateAccess> => {
      // Loaded on demand: help, usage errors and doctor stay quick.
      opening ??= import('../client/open-gate.js').then((m) => m.openGate(gateOptions)).then((g) => (gate = g));
      return opening;
    };
    const result: CommandResult = await spec.run({
      values: parsed.values,
      positionals: parsed.positionals,
      rest: parsed.rest,
      global: parsed.global,
      signal: controller.signal,
      gate: openGate,
      gateOptions,
      stdinIsTty: io.stdinIsTty,
      stdout: io.stdout,
      stderr: io.stderr,
    });
    if (gate) {
      const g = gate;
      gate = undefined;
      await g.close();
    }
    if (result.raw) {
      if (result.text) io.stdout.write(`${result.text}\n`);
    } else if (json) io.stdout.write(`${JSON.stringify(result.json)}\n`);
    else if (result.text) io.stdout.write(`${result.text}\n`);
    if (result.afterClose) return await result.afterClose();
    return result.exitCode ?? 0;
  } catch (err) {
    if (gate) await gate.close().catch(() => undefined);
    const report = errorReport(err);
    const error = { code: report.code, message: report.message, ...(report.details ?? {}) };
    if (err instanceof DoctorFailed) io.stdout.write(json ? `${JSON.stringify({ ...(err.report.json as object), error })}\n` : `${err.report.text}\n`);
    else if (json) io.stdout.write(`${JSON.stringify({ error })}\n`);
    io.stderr.write(`tmux-drive: ${report.code}: ${oneLine(report.message)}\n`);
    return report.exitCode;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

function invokedDirectly(): boolean {
  const script = process.argv[1];
  if (!script) return false;
  try {
    return realpathSync(script) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (invokedDirectly()) {
  const code = await main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, stdinIsTty: process.stdin.isTTY === true });
  // Exit explicitly: a CLI run must not linger on a handle (writes to pipes and files are
  // synchronous on Linux, so nothing printed is lost).
  process.exit(code);
}
