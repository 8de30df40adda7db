/**
 * The CLI's commands as one table. Each maps 1:1 onto a Driver/Session call: the CLI parses and
 * prints, the library decides (allowlist, config, leases). A surface adds fluency, never authority.
 */
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import type { WaitOptions } from '../session/session.js';
import type { TranscriptEntry } from '../session/transcript.js';
import type { SignalName } from '../session/backend.js';
import type { GateAccess, OpenGateOptions } from '../client/open-gate.js';
import type { RemoteDrive } from '../client/remote-drive.js';
import { CAPABILITY_CLASSES, type CapabilityClass } from '../wire/protocol.js';
import { choiceArg, intArg, usageError, type CommandShape, type GlobalOptions, type OptionValues } from './parse-command-line.js';
import { renderStatus, renderTable, renderWait, shellQuote } from './render-text.js';

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

/**
 * Just past the classifier's output-flowing window (DEFAULT_FLOWING_MS + 50): a re-attach looks like
 * fresh output until then. Written out so that this module (loaded by every command, also through
 * a host) does not pull in the classifier.
 */
const RECENT_ATTACH_MS = 350;

/** Exit status of `wait` when the outcome is a timeout, as coreutils' timeout(1) uses. */
export const WAIT_TIMEOUT_EXIT = 124;

const str = (v: OptionValues[string]): string | undefined => (typeof v === 'string' ? v : undefined);

async function driveOf(ctx: CommandContext): Promise<RemoteDrive> {
  return (await ctx.gate()).client.drive(ctx.positionals[0] as string);
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

/** Transcript entries as JSON: pane bytes decoded (one streaming decoder); the gate redacted them. */
function transcriptJson(entries: readonly TranscriptEntry[]): { entries: unknown[] } {
  const decoder = new TextDecoder('utf-8');
  const out = entries.map((e) => {
    const text = e.data instanceof Uint8Array ? decoder.decode(e.data, { stream: true }) : typeof e.data === 'string' ? e.data : undefined;
    return { seq: e.seq, time: new Date(e.time).toISOString(), kind: e.kind, ...(text === undefined ? {} : { text }), ...(e.tags ? { tags: e.tags } : {}) };
  });
  return { entries: out };
}

const DURATION_UNITS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `90s`, `30m`, `12h`, `7d` (or plain milliseconds) as milliseconds. */
function durationArg(label: string, raw: string): number {
  const m = /^(\d{1,12})(ms|s|m|h|d)?$/.exec(raw);
  if (!m) throw usageError(`${label} must be a duration such as 90s, 30m, 12h or 7d (got "${raw}")`, { label });
  return Number(m[1]) * (DURATION_UNITS[m[2] ?? 'ms'] ?? 1);
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
      const s = await (await ctx.gate()).client.create(opts);
      const attach = await s.attachCommand();
      return {
        json: { ...s.info, attachCommand: attach },
        text: `created ${s.id} (allow ${s.info.allowId}, ${s.info.cols}x${s.info.rows}); it keeps running: drive it with tmux-drive send/key/wait/read ${s.id}\ntake over: ${shellQuote(attach)}`,
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
      const list = await (await ctx.gate()).client.list();
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
      const result = await (await driveOf(ctx)).read({
        ...(mode ? { mode } : {}),
        ...(maxBytes !== undefined ? { maxBytes } : {}),
        ...(format ? { format } : {}),
        ...(scrollback !== undefined ? { scrollback } : {}),
      });
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
      const s = await driveOf(ctx);
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
      const s = await driveOf(ctx);
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
      const s = await driveOf(ctx);
      const result = await s.wait({
        ...(forIdleMs !== undefined ? { forIdleMs } : {}),
        ...(forText !== undefined ? { forText } : {}),
        ...(ctx.values.exit === true ? { forExit: true } : {}),
        ...(timeoutMs !== undefined ? { timeoutMs } : {}),
        signal: ctx.signal,
      });
      return { json: result, text: renderWait(s.id, result), ...(result.outcome === 'timeout' ? { exitCode: WAIT_TIMEOUT_EXIT } : {}) };
    },
  },
  {
    name: 'status',
    usage: 'status ID',
    summary: 'working | awaiting-input | exited | stuck, with confidence and a machine reason',
    options: {},
    positionals: [1, 1],
    async run(ctx) {
      const gate = await ctx.gate();
      const s = gate.client.drive(ctx.positionals[0] as string);
      let status = await s.status();
      // In-process, this process re-attached a moment ago, and the classifier counts the re-attach
      // as output for its first DEFAULT_FLOWING_MS: wait (on events) until that window has passed,
      // or until the timeout shows that output really is flowing, so that the verdict describes the
      // program. A serving host attached long ago.
      if (gate.mode === 'in-process' && status.lifecycle === 'live') {
        await s.wait({ forIdleMs: RECENT_ATTACH_MS, timeoutMs: RECENT_ATTACH_MS * 2, signal: ctx.signal });
        status = await s.status();
      }
      return { json: status, text: renderStatus(s.id, status) };
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
      const s = await driveOf(ctx);
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
      const s = await driveOf(ctx);
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
      const s = await driveOf(ctx);
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
      const pruned = await (await ctx.gate()).client.prune(ids ? { ids } : {});
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
    summary: 'take over in this terminal (tmux attach; detach with C-b d): through a serving host, every other caller\'s input is refused (OPERATOR_HOLD) meanwhile; without a terminal, print the command',
    options: { 'read-only': { type: 'boolean' } },
    positionals: [1, 1],
    async run(ctx) {
      const access = await ctx.gate();
      const s = access.client.drive(ctx.positionals[0] as string);
      const readOnly = ctx.values['read-only'] === true;
      const argv = await s.attachCommand({ readOnly });
      if (!ctx.stdinIsTty || ctx.global.json) return { json: { id: s.id, argv }, text: shellQuote(argv) };
      if (access.mode === 'host' && !readOnly) {
        // Through a serving host, the person at this terminal holds agents off (OPERATOR_HOLD)
        // while attached; the hold ends when tmux exits, or with this process's connection.
        await s.hold();
        try {
          return { json: null, text: '', exitCode: await runInherited(argv) };
        } finally {
          await s.release().catch(() => false);
        }
      }
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
    summary: 'serve the nine terminal_session_* tools over MCP on stdio (through the serving host when one serves, else one long-lived driver)',
    options: {},
    positionals: [0, 0],
    async run(ctx) {
      const { runMcpServer } = await import('../mcp/server.js');
      await runMcpServer({ gate: { ...ctx.gateOptions, reattach: 'all', persistent: true, owner: `tmux-drive mcp (pid ${process.pid})` } });
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
      const s = await driveOf(ctx);
      const page = { ...(after !== undefined ? { after } : {}), ...(limit !== undefined ? { limit } : {}) };
      if (ctx.values.asciicast === true) return { json: null, text: (await s.asciicast(page)).replace(/\n$/, ''), raw: true };
      const t = transcriptJson(await s.transcript(page));
      const lines = t.entries.map((e) => {
        const x = e as { seq: number; time: string; kind: string; text?: string; tags?: Record<string, unknown> };
        return `${x.seq}\t${x.time}\t${x.kind}${x.text !== undefined ? `\t${JSON.stringify(x.text)}` : ''}${x.tags ? `\t${JSON.stringify(x.tags)}` : ''}`;
      });
      return { json: { id: s.id, ...t }, text: lines.join('\n') };
    },
  },
  {
    name: 'serve',
    usage: 'serve [--standby] [--http HOST:PORT]',
    summary: 'serve this data dir in the foreground: the CLI, tmux-drive mcp and clients go through it; SIGTERM stops it, the drives keep running',
    help: [
      '--standby  wait while another host serves, and take over the moment it ends (killed included)',
      '--http HOST:PORT  also serve the web console there (loopback unless the config lists the address in console.addresses); log in with a token',
      'One host per data dir: a second serve (without --standby) fails with HOST_HELD naming the holder.',
      'Ready when it prints "serving …" on stdout; logs go to stderr.',
    ],
    options: { standby: { type: 'boolean' }, http: { type: 'string' } },
    positionals: [0, 0],
    async run(ctx) {
      const { serve } = await import('../serve/serve.js');
      const http = typeof ctx.values.http === 'string' ? ctx.values.http : undefined;
      const log = (message: string): void => void ctx.stderr.write(`tmux-drive serve: ${message.replace(/\s*\n\s*/g, ' ')}\n`);
      const standby = ctx.values.standby === true;
      const host = await serve({
        ...(ctx.global.dataDir ? { dataDir: ctx.global.dataDir } : {}),
        ...(ctx.global.config ? { config: ctx.global.config } : {}),
        ...(ctx.global.adoptOrphans ? { adoptOrphans: true } : {}),
        standby,
        ...(http !== undefined ? { http } : {}),
        signal: ctx.signal,
        logger: { warn: (m) => log(`warning: ${m}`), info: log },
        onWaiting: (holder) => log(holder ? `standby: pid ${holder.pid} serves; waiting to take over` : 'standby: in-process commands hold the data dir; waiting for them'),
      });
      const live = host.driver.list().filter((i) => i.state === 'live').length;
      const ready = { serving: host.info.dataDir, socket: host.socketPath, pid: process.pid, drives: live, ...(host.console ? { console: host.console.url } : {}) };
      ctx.stdout.write(ctx.global.json ? `${JSON.stringify(ready)}\n` : `serving ${ready.serving} on ${ready.socket} (pid ${ready.pid}, ${live} live drive(s))${host.console ? `; console at ${host.console.url}` : ''}\n`);
      await new Promise<void>((resolve) => {
        if (ctx.signal.aborted) resolve();
        ctx.signal.addEventListener('abort', () => resolve(), { once: true });
      });
      log('stopping: the drives keep running');
      await host.close();
      return { json: null, text: '', raw: true };
    },
  },
  {
    name: 'token',
    usage: 'token mint (--observe|--drive|--admin)… [--for NAME]… [--allow ID]… [--ttl DURATION] [--label TEXT] | token list | token revoke ID',
    summary: 'capability tokens of the serving host: mint one for an agent (printed once), list them, revoke one',
    help: [
      '--observe         list, read, status, transcript, wait, subscribe, events',
      '--drive           send, key, resize, signal',
      '--admin           create, kill, attach, token mint/revoke/list',
      '--for NAME        only this drive (repeatable); list shows only these',
      '--allow ID        only drives of this allow entry (repeatable)',
      '--ttl DURATION    expires after it: 90s, 30m, 12h, 7d (at most 366d)',
      'An agent presents it in TMUX_DRIVE_TOKEN; the CLI then goes only through the host.',
    ],
    options: { observe: { type: 'boolean' }, drive: { type: 'boolean' }, admin: { type: 'boolean' }, for: { type: 'string', multiple: true }, allow: { type: 'string', multiple: true }, ttl: { type: 'string' }, label: { type: 'string' } },
    positionals: [1, 2],
    async run(ctx) {
      const sub = choiceArg('token', ctx.positionals[0], ['mint', 'list', 'revoke'] as const);
      if (sub === 'revoke') {
        const id = ctx.positionals[1];
        if (id === undefined) throw usageError('token revoke: the token id is required (see tmux-drive token list)');
        await (await ctx.gate()).client.revoke(id);
        return { json: { id, revoked: true }, text: `revoked ${id}` };
      }
      if (ctx.positionals.length > 1) throw usageError(`token ${sub}: unexpected argument "${ctx.positionals[1] ?? ''}"`);
      if (sub === 'list') {
        const tokens = await (await ctx.gate()).client.tokens();
        const rows = tokens.map((t) => [t.id, t.scope.classes.join(','), t.scope.drives?.join(',') ?? '*', t.scope.allowIds?.join(',') ?? '*', t.scope.expiresAt ? new Date(t.scope.expiresAt).toISOString() : 'never', t.label ?? '']);
        return { json: { tokens }, text: tokens.length === 0 ? 'no tokens (the owner token is always valid)' : renderTable(['ID', 'CLASSES', 'DRIVES', 'ALLOW', 'EXPIRES', 'LABEL'], rows) };
      }
      const classes = CAPABILITY_CLASSES.filter((c: CapabilityClass) => ctx.values[c] === true);
      if (classes.length === 0) throw usageError('token mint: give at least one of --observe, --drive, --admin');
      const drives = ctx.values.for as string[] | undefined;
      const allowIds = ctx.values.allow as string[] | undefined;
      const ttl = str(ctx.values.ttl);
      const minted = await (await ctx.gate()).client.mint({
        classes,
        ...(drives ? { drives } : {}),
        ...(allowIds ? { allowIds } : {}),
        ...(ttl !== undefined ? { ttlMs: durationArg('--ttl', ttl) } : {}),
        ...(str(ctx.values.label) !== undefined ? { label: str(ctx.values.label) } : {}),
      });
      // Text mode prints the token alone, for TOKEN=$(tmux-drive token mint …).
      return { json: minted, text: minted.token };
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
