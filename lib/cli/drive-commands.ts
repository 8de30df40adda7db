/**
 * The commands on one drive: read, send, key, wait, status, resize, signal, kill, transcript. Each
 * maps 1:1 onto a RemoteDrive call through the gate.
 */
import type { WaitOptions } from '../session/session.js';
import type { TranscriptEntry } from '../session/transcript.js';
import type { SignalName } from '../session/backend.js';
import { endedState, type RemoteDrive } from '../client/remote-drive.js';
import { choiceArg, intArg, usageError } from './parse-command-line.js';
import { renderStatus, renderWait } from './render-text.js';
import { str, type CommandContext, type CommandSpec } from './command-spec.js';

/**
 * Just past the classifier's output-flowing window (DEFAULT_FLOWING_MS + 50): a re-attach looks like
 * fresh output until then. Written out so that this module (loaded by every command, also through
 * a host) does not pull in the classifier.
 */
const RECENT_ATTACH_MS = 350;

/** Exit status of `wait` when the outcome is a timeout, as coreutils' timeout(1) uses. */
export const WAIT_TIMEOUT_EXIT = 124;

async function driveOf(ctx: CommandContext): Promise<RemoteDrive> {
  return (await ctx.gate()).client.drive(ctx.positionals[0] as string);
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

const SIGNALS: readonly SignalName[] = ['interrupt', 'terminate', 'kill', 'hangup'];

export const readCommand: CommandSpec = {
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
};

export const sendCommand: CommandSpec = {
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
};

export const keyCommand: CommandSpec = {
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
};

export const waitCommand: CommandSpec = {
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
};

export const statusCommand: CommandSpec = {
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
};

export const resizeCommand: CommandSpec = {
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
};

export const signalCommand: CommandSpec = {
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
};

export const killCommand: CommandSpec = {
  name: 'kill',
  usage: 'kill ID',
  summary: 'end the program, its process tree and its tmux server (verified); a drive that had already ended is not an error',
  options: {},
  positionals: [1, 1],
  async run(ctx) {
    const id = ctx.positionals[0] as string;
    try {
      await (await driveOf(ctx)).kill();
    } catch (err) {
      // The end a script asks for already holds, whichever process saw the program end first
      // (a host that saw it keeps an exited row, not a session): exit 0 either way, and say so.
      const state = endedState(err);
      if (state === undefined) throw err;
      return { json: { id, killed: false, state }, text: `${id} had already ended (${state}); nothing to kill (prune forgets it and ends a kept server)` };
    }
    return { json: { id, killed: true }, text: `killed ${id}` };
  },
};

export const transcriptCommand: CommandSpec = {
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
};
