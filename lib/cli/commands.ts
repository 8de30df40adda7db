/**
 * The CLI's commands as one table. Each maps 1:1 onto a Driver/Session call: the CLI parses and
 * prints, the library decides (allowlist, config, leases). A surface adds fluency, never authority.
 */
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import type { Driver } from '../driver/driver.js';
import type { Session, WaitOptions } from '../session/session.js';
import type { TranscriptEntry } from '../session/transcript.js';
import type { SignalName } from '../session/backend.js';
import { DEFAULT_FLOWING_MS } from '../perceive/classify-screen.js';
import { formatAsciicast, toAsciicast } from '../session/asciicast.js';
import { redactStrings, redactText } from '../mcp/untrusted-output.js';
import { redactTerminalChunks } from '../policy/redact.js';
import { choiceArg, intArg, usageError, type CommandShape, type GlobalOptions, type OptionValues } from './parse-command-line.js';
import { renderStatus, renderTable, renderWait, shellQuote } from './render-text.js';

export interface CommandContext {
  readonly values: OptionValues;
  readonly positionals: readonly string[];
  readonly rest: readonly string[];
  readonly global: GlobalOptions;
  /** Aborted on SIGINT/SIGTERM. */
  readonly signal: AbortSignal;
  /** Opens the Driver (once, after the arguments were checked); main closes it after run. */
  driver(): Promise<Driver>;
  readonly stdinIsTty: boolean;
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

/** Just past the classifier's output-flowing window (a re-attach looks like fresh output until then). */
const RECENT_ATTACH_MS = DEFAULT_FLOWING_MS + 50;

/** Exit status of `wait` when the outcome is a timeout, as coreutils' timeout(1) uses. */
export const WAIT_TIMEOUT_EXIT = 124;

const str = (v: OptionValues[string]): string | undefined => (typeof v === 'string' ? v : undefined);

async function sessionOf(ctx: CommandContext): Promise<Session> {
  return (await ctx.driver()).get(ctx.positionals[0] as string);
}

async function redacting(ctx: CommandContext): Promise<boolean> {
  return (await ctx.driver()).config.redactSecrets;
}

function parseEnv(pairs: readonly string[]): Record<string, string> | undefined {
  if (pairs.length === 0) return undefined;
  const env: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw usageError(`--env takes NAME=VALUE (got "${pair}")`);
    env[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return env;
}

/**
 * Transcript entries as JSON: pane bytes decoded (one streaming decoder), text redacted as two
 * streams (output, typed input), so a secret split over entries is found.
 */
function transcriptJson(entries: readonly TranscriptEntry[], redact: boolean): { entries: unknown[]; redactions: number } {
  const decoder = new TextDecoder('utf-8');
  let redactions = 0;
  const texts = entries.map((e) => (e.data instanceof Uint8Array ? decoder.decode(e.data, { stream: true }) : typeof e.data === 'string' ? e.data : undefined));
  if (redact) {
    for (const kind of ['output', 'input'] as const) {
      const at = entries.flatMap((e, i) => (e.kind === kind && texts[i] !== undefined ? [i] : []));
      const r = redactTerminalChunks(at.map((i) => texts[i] as string));
      redactions += r.count;
      for (const [k, i] of at.entries()) texts[i] = r.chunks[k] ?? '';
    }
  }
  const out = entries.map((e, i) => {
    const text = texts[i];
    return { seq: e.seq, time: new Date(e.time).toISOString(), kind: e.kind, ...(text === undefined ? {} : { text }), ...(e.tags ? { tags: e.tags } : {}) };
  });
  return { entries: out, redactions };
}

const SIGNALS: readonly SignalName[] = ['interrupt', 'terminate', 'kill', 'hangup'];

export const COMMANDS: readonly CommandSpec[] = [
  {
    name: 'create',
    usage: 'create --allow ID [--name NAME] [--project P] [--cwd DIR] [--cols N] [--rows N] [--env NAME=VALUE]… [--objective TEXT] [-- ARGS…]',
    summary: 'launch an allowlisted program in its own tmux server (sandboxed); it keeps running after this command',
    help: [
      '--allow ID        the allow entry (from the operator config) to launch',
      '--name NAME       a stable name to find the drive again (default: random); also its id',
      '--project P       run in <dataDir>/workspace/projects/P (created once, reopened by name)',
      '--cwd DIR         a directory inside the workspace (outside: clamped to it)',
      '--env NAME=VALUE  a variable the allow entry lists in passEnv (repeatable)',
      '-- ARGS…          the program\'s arguments (after the entry\'s pinned argsPrefix)',
    ],
    options: {
      allow: { type: 'string' },
      name: { type: 'string' },
      project: { type: 'string' },
      cwd: { type: 'string' },
      cols: { type: 'string' },
      rows: { type: 'string' },
      env: { type: 'string', multiple: true },
      objective: { type: 'string' },
    },
    positionals: [0, 0],
    passThrough: true,
    async run(ctx) {
      const allowId = str(ctx.values.allow);
      if (allowId === undefined) throw usageError('create: --allow ID is required (the id of an allow entry in the config)');
      const cols = intArg('--cols', str(ctx.values.cols), 2, 1000);
      const rows = intArg('--rows', str(ctx.values.rows), 2, 1000);
      const env = parseEnv((ctx.values.env as string[] | undefined) ?? []);
      const opts = {
        allowId,
        ...(ctx.rest.length > 0 ? { args: [...ctx.rest] } : {}),
        ...(str(ctx.values.name) !== undefined ? { name: str(ctx.values.name) } : {}),
        ...(str(ctx.values.project) !== undefined ? { project: str(ctx.values.project) } : {}),
        ...(str(ctx.values.cwd) !== undefined ? { cwd: str(ctx.values.cwd) } : {}),
        ...(cols !== undefined ? { cols } : {}),
        ...(rows !== undefined ? { rows } : {}),
        ...(env ? { env } : {}),
        ...(str(ctx.values.objective) !== undefined ? { objective: str(ctx.values.objective) } : {}),
      };
      const driver = await ctx.driver();
      const s = await driver.create(opts);
      const size = { cols: cols ?? driver.config.defaults.cols, rows: rows ?? driver.config.defaults.rows };
      const info = driver.list().find((i) => i.id === s.id);
      const attach = s.attachCommand();
      return {
        json: { id: s.id, ...info, ...size, attachCommand: attach },
        text: `created ${s.id} (allow ${s.allowId}, ${size.cols}x${size.rows}); it keeps running: drive it with tmux-drive send/key/wait/read ${s.id}\ntake over: ${shellQuote(attach)}`,
      };
    },
  },
  {
    name: 'list',
    usage: 'list',
    summary: 'the drives this host can drive (live, exited, failed)',
    options: {},
    positionals: [0, 0],
    async run(ctx) {
      const list = (await ctx.driver()).list();
      const rows = list.map((i) => [i.id, i.allowId, i.state, i.reason ?? (i.exit ? `exit ${i.exit.code ?? `signal ${i.exit.signal ?? '?'}`}` : ''), i.createdAt]);
      return {
        json: { sessions: list },
        text: list.length === 0 ? 'no drives' : renderTable(['ID', 'ALLOW', 'STATE', 'REASON', 'CREATED'], rows),
      };
    },
  },
  {
    name: 'read',
    usage: 'read ID [--mode digest|diff|full] [--max-bytes N] [--format text|ansi|html] [--scrollback N|all]',
    summary: 'the screen as the mirror holds it (redacted; program output, untrusted); --mode defaults to drive.readMode',
    options: { mode: { type: 'string' }, 'max-bytes': { type: 'string' }, format: { type: 'string' }, scrollback: { type: 'string' } },
    positionals: [1, 1],
    async run(ctx) {
      const format = choiceArg('--format', str(ctx.values.format), ['text', 'ansi', 'html'] as const);
      const rawScroll = str(ctx.values.scrollback);
      const scrollback = rawScroll === 'all' ? 'all' : intArg('--scrollback', rawScroll, 0);
      const mode = choiceArg('--mode', str(ctx.values.mode), ['digest', 'diff', 'full'] as const);
      const maxBytes = intArg('--max-bytes', str(ctx.values['max-bytes']), 64);
      const r = (await sessionOf(ctx)).read({
        ...(mode ? { mode } : {}),
        ...(maxBytes !== undefined ? { maxBytes } : {}),
        ...(format ? { format } : {}),
        ...(scrollback !== undefined ? { scrollback } : {}),
      });
      const red = redactText(r.content, await redacting(ctx), r.format);
      const result = { ...r, content: red.text, redactions: r.redactions + red.count };
      return { json: result, text: result.content.replace(/\n+$/, '') };
    },
  },
  {
    name: 'send',
    usage: 'send ID TEXT [--submit] [--paste auto|always|never] [--settle MS]',
    summary: 'type TEXT byte-exact (multi-line or large text through the paste buffer); --submit presses Enter once it shows',
    options: { submit: { type: 'boolean' }, paste: { type: 'string' }, settle: { type: 'string' } },
    positionals: [2, 2],
    async run(ctx) {
      const paste = choiceArg('--paste', str(ctx.values.paste), ['auto', 'always', 'never'] as const);
      const settle = intArg('--settle', str(ctx.values.settle), 0, 600_000);
      const text = ctx.positionals[1] as string;
      const submit = ctx.values.submit === true;
      const s = await sessionOf(ctx);
      await s.sendText(text, { submit, ...(paste ? { paste } : {}), ...(settle !== undefined ? { settle } : {}) });
      return { json: { id: s.id, sent: text.length, submit }, text: `sent ${text.length} character(s) to ${s.id}${submit ? ' and pressed Enter' : ''}` };
    },
  },
  {
    name: 'key',
    usage: 'key ID KEY…',
    summary: 'press keys by tmux name: Enter, C-c, Up, BTab, M-x, F5, or one character',
    options: {},
    positionals: [2, 1000],
    async run(ctx) {
      const keys = ctx.positionals.slice(1);
      const s = await sessionOf(ctx);
      await s.sendKeys(keys);
      return { json: { id: s.id, keys }, text: `sent ${keys.join(' ')} to ${s.id}` };
    },
  },
  {
    name: 'wait',
    usage: 'wait ID [--idle MS] [--text STR | --regex RE] [--exit] [--timeout MS]',
    summary: `wait for idle, text, exit or the timeout (default 15000, at most 600000); exits ${WAIT_TIMEOUT_EXIT} on timeout`,
    help: [
      '--idle MS     no output and no screen change for MS',
      '--text STR    STR appears in new output or new screen rows (never in the echo of what was typed)',
      '--regex RE    the same with a JavaScript regular expression (multiline: ^ and $ match at line ends)',
      '--exit        the program exits (an exit ends every wait)',
      '--timeout MS  give up after MS; a timeout says whether output is still arriving (producing)',
    ],
    options: { idle: { type: 'string' }, text: { type: 'string' }, regex: { type: 'string' }, exit: { type: 'boolean' }, timeout: { type: 'string' } },
    positionals: [1, 1],
    async run(ctx) {
      const text = str(ctx.values.text);
      const regex = str(ctx.values.regex);
      if (text !== undefined && regex !== undefined) throw usageError('wait: give --text or --regex, not both');
      let forText: WaitOptions['forText'];
      if (text !== undefined) forText = text;
      if (regex !== undefined) {
        try {
          forText = new RegExp(regex, 'm');
        } catch (err) {
          throw usageError(`wait: --regex is not a valid regular expression: ${(err as Error).message}`);
        }
      }
      const forIdleMs = intArg('--idle', str(ctx.values.idle), 0, 600_000);
      const timeoutMs = intArg('--timeout', str(ctx.values.timeout), 1, 600_000);
      const s = await sessionOf(ctx);
      const r = await s.wait({
        ...(forIdleMs !== undefined ? { forIdleMs } : {}),
        ...(forText !== undefined ? { forText } : {}),
        ...(ctx.values.exit === true ? { forExit: true } : {}),
        ...(timeoutMs !== undefined ? { timeoutMs } : {}),
        signal: ctx.signal,
      });
      const result = redactStrings({ id: s.id, ...r }, await redacting(ctx));
      return { json: result, text: renderWait(s.id, result), ...(r.outcome === 'timeout' ? { exitCode: WAIT_TIMEOUT_EXIT } : {}) };
    },
  },
  {
    name: 'status',
    usage: 'status ID',
    summary: 'working | awaiting-input | exited | stuck, with confidence and a machine reason',
    options: {},
    positionals: [1, 1],
    async run(ctx) {
      const s = await sessionOf(ctx);
      // This process re-attached a moment ago, and the classifier counts the re-attach as output
      // for its first DEFAULT_FLOWING_MS: wait (on events) until that window has passed, or until
      // the timeout shows that output really is flowing, so that the verdict describes the program.
      if (s.lifecycle === 'live') await s.wait({ forIdleMs: RECENT_ATTACH_MS, timeoutMs: RECENT_ATTACH_MS * 2, signal: ctx.signal });
      const status = redactStrings(s.status(), await redacting(ctx));
      return { json: { id: s.id, ...status }, text: renderStatus(s.id, status) };
    },
  },
  {
    name: 'resize',
    usage: 'resize ID COLS ROWS',
    summary: 'resize the pane (and the mirror)',
    options: {},
    positionals: [3, 3],
    async run(ctx) {
      const cols = intArg('COLS', ctx.positionals[1], 2, 1000) as number;
      const rows = intArg('ROWS', ctx.positionals[2], 2, 1000) as number;
      const s = await sessionOf(ctx);
      await s.resize(cols, rows);
      return { json: { id: s.id, cols, rows }, text: `resized ${s.id} to ${cols}x${rows}` };
    },
  },
  {
    name: 'signal',
    usage: `signal ID ${SIGNALS.join('|')}`,
    summary: "send a signal to the program's foreground process group",
    options: {},
    positionals: [2, 2],
    async run(ctx) {
      const name = choiceArg('signal', ctx.positionals[1], SIGNALS) as SignalName;
      const s = await sessionOf(ctx);
      await s.signal(name);
      return { json: { id: s.id, signal: name }, text: `sent ${name} to ${s.id}` };
    },
  },
  {
    name: 'kill',
    usage: 'kill ID',
    summary: 'end the program, its process tree and its tmux server (verified)',
    options: {},
    positionals: [1, 1],
    async run(ctx) {
      const s = await sessionOf(ctx);
      await s.kill();
      return { json: { id: s.id, killed: true }, text: `killed ${s.id}` };
    },
  },
  {
    name: 'prune',
    usage: 'prune [ID…]',
    summary: 'end and forget finished drives (exited or failed; all, or these): a server still up is killed (verified), the journal row removed',
    options: {},
    positionals: [0, 1000],
    async run(ctx) {
      const ids = ctx.positionals.length > 0 ? [...ctx.positionals] : undefined;
      const pruned = await (await ctx.driver()).prune(ids ? { ids } : {});
      const rows = pruned.map((p) => [p.id, p.state, p.pruned ? 'pruned' : `kept: ${p.kept ?? 'unknown'}`]);
      return {
        json: { pruned },
        text: pruned.length === 0 ? 'no finished drives' : renderTable(['ID', 'STATE', 'RESULT'], rows),
        ...(pruned.some((p) => !p.pruned) ? { exitCode: 1 } : {}),
      };
    },
  },
  {
    name: 'attach',
    usage: 'attach ID [--read-only]',
    summary: 'take over in this terminal (tmux attach; detach with C-b d); without a terminal, print the command',
    options: { 'read-only': { type: 'boolean' } },
    positionals: [1, 1],
    async run(ctx) {
      const s = await sessionOf(ctx);
      const argv = s.attachCommand({ readOnly: ctx.values['read-only'] === true });
      if (!ctx.stdinIsTty || ctx.global.json) return { json: { id: s.id, argv }, text: shellQuote(argv) };
      // The operator's tmux client needs no lease: the driver is closed first, so that the next
      // host (or this CLI again) can drive while the operator watches.
      return { json: null, text: '', afterClose: () => runInherited(argv) };
    },
  },
  {
    name: 'doctor',
    usage: 'doctor',
    summary: 'check this machine: tmux, bwrap and user namespaces, node-pty, SQLite, the data dir, the config',
    options: {},
    positionals: [0, 0],
    async run(ctx) {
      const { runDoctor, renderDoctor } = await import('./doctor.js');
      const report = await runDoctor({ ...(ctx.global.dataDir ? { dataDir: ctx.global.dataDir } : {}), ...(ctx.global.config ? { config: ctx.global.config } : {}) });
      const failed = report.checks.filter((c) => !c.ok && c.required).map((c) => c.name);
      if (failed.length > 0) {
        throw new DoctorFailed(`${failed.length} required check(s) failed: ${failed.join(', ')}`, { json: report, text: renderDoctor(report) });
      }
      return { json: report, text: renderDoctor(report) };
    },
  },
  {
    name: 'mcp',
    usage: 'mcp',
    summary: 'serve the nine terminal_session_* tools over MCP on stdio (one long-lived driver)',
    options: {},
    positionals: [0, 0],
    async run(ctx) {
      const { runMcpServer } = await import('../mcp/server.js');
      await runMcpServer({ ...(ctx.global.dataDir ? { dataDir: ctx.global.dataDir } : {}), ...(ctx.global.config ? { config: ctx.global.config } : {}) });
      return { json: null, text: '', raw: true };
    },
  },
  {
    name: 'transcript',
    usage: 'transcript ID [--after SEQ] [--limit N] [--asciicast]',
    summary: "this host's evidence of the drive (seq-numbered; a new CLI process starts at its re-attach); --asciicast for asciinema",
    options: { after: { type: 'string' }, limit: { type: 'string' }, asciicast: { type: 'boolean' } },
    positionals: [1, 1],
    async run(ctx) {
      const after = intArg('--after', str(ctx.values.after), 0);
      const limit = intArg('--limit', str(ctx.values.limit), 1);
      const s = await sessionOf(ctx);
      const screen = s.read({ format: 'ansi' });
      const entries = s.transcript({ ...(after !== undefined ? { after } : {}), ...(limit !== undefined ? { limit } : {}) });
      if (ctx.values.asciicast === true) {
        // A CLI process holds only what it saw since its re-attach: when no output arrived since,
        // the screen at the re-attach is the recording's first frame.
        const sawOutput = entries.some((e) => e.kind === 'output');
        const cast = toAsciicast(entries, {
          cols: screen.cols,
          rows: screen.rows,
          title: s.id,
          redact: await redacting(ctx),
          ...(sawOutput || after !== undefined ? {} : { initialScreen: screen.content }),
          ...(entries.length === 0 ? { startTime: Date.now() } : {}),
        });
        return { json: null, text: formatAsciicast(cast).replace(/\n$/, ''), raw: true };
      }
      const t = transcriptJson(entries, await redacting(ctx));
      const lines = t.entries.map((e) => {
        const x = e as { seq: number; time: string; kind: string; text?: string; tags?: Record<string, unknown> };
        return `${x.seq}\t${x.time}\t${x.kind}${x.text !== undefined ? `\t${JSON.stringify(x.text)}` : ''}${x.tags ? `\t${JSON.stringify(x.tags)}` : ''}`;
      });
      return { json: { id: s.id, ...t }, text: lines.join('\n') };
    },
  },
];

/** doctor found a required check failing: an error, carrying the report to print first. */
export class DoctorFailed extends Error {
  readonly code = 'DOCTOR_FAILED';
  constructor(
    message: string,
    readonly report: { readonly json: unknown; readonly text: string },
  ) {
    super(message);
    this.name = 'DoctorFailed';
  }
}

/** Runs the operator's tmux client on this terminal and returns its exit status. */
function runInherited(argv: readonly string[]): Promise<number> {
  const [file, ...args] = argv;
  return new Promise((resolve, reject) => {
    const child = spawn(file as string, args, { stdio: 'inherit' });
    child.once('error', reject);
    child.once('exit', (code, signal) => resolve(code ?? 128 + (signal ? (constants.signals[signal] ?? 0) : 0)));
  });
}
