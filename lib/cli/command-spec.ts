/**
 * What a CLI command is: its shape (options, positionals), help lines and run, and what it gets
 * (the parsed arguments, the gate, the streams) and returns. The table is in commands.ts.
 */
import type { GateAccess, OpenGateOptions } from '../client/open-gate.js';
import type { CommandShape, GlobalOptions, OptionValues } from './parse-command-line.js';

export interface CommandContext {
  readonly values: OptionValues;
  readonly positionals: readonly string[];
  readonly rest: readonly string[];
  readonly global: GlobalOptions;
  /** Aborted on SIGINT/SIGTERM. */
  readonly signal: AbortSignal;
  /**
   * The gate (once, after the arguments were checked): through the serving host when one serves,
   * else a Driver opened in this process; main closes it after run.
   */
  gate(): Promise<GateAccess>;
  /** What gate() opens with (data dir, config, token, socket), for a command that opens its own. */
  readonly gateOptions: OpenGateOptions;
  readonly stdinIsTty: boolean;
  /** For a line that must go out before the command ends (serve says when it is ready). */
  readonly stdout: { write(text: string): unknown };
  /** Where logs go (never stdout: `mcp` and --json use it). */
  readonly stderr: { write(text: string): unknown };
}

export interface CommandResult {
  /** The machine output (--json). */
  readonly json: unknown;
  /** The readable output; '' prints nothing. */
  readonly text: string;
  readonly exitCode?: number;
  /** The text is machine output itself (asciicast lines): printed as is, also with --json. */
  readonly raw?: boolean;
  /** Runs after the driver is closed (attach: the operator's tmux client); returns the exit code. */
  readonly afterClose?: () => Promise<number>;
}

export interface CommandSpec extends CommandShape {
  readonly name: string;
  readonly usage: string;
  readonly summary: string;
  /** Options' help lines. */
  readonly help?: readonly string[];
  run(ctx: CommandContext): Promise<CommandResult>;
}

/** An option's value when it is a string (a flag given as a string option). */
export const str = (v: OptionValues[string]): string | undefined => (typeof v === 'string' ? v : undefined);
