/**
 * Every tmux command tmux-drive sends is built here, and nowhere else (test/security/hostile-input
 * greps the tree for it): control-mode lines, the generated server config, and the argv of `tmux …`
 * subprocesses. Each argument is encoded for its position, both for tmux's lexer (encode.ts) and for
 * tmux's format expander, which runs `#(…)` as a shell command and expands `#{…}` in many positions
 * (tmux 3.3a: `new-session -c` and `-s`, `load-buffer`/`save-buffer` paths, `list-* -F`/`-f`,
 * `display-message`, option names, `refresh-client -B`). The rule, position by position:
 * - ids (`%N`, `@N`), our session names and buffer names, numbers: validated, written bare
 *   (tmux-arguments.ts checks each such position; it writes no command text);
 * - free text where tmux does not expand (send-keys words, set-buffer data, the pane argv after
 *   `--`): quoted (encode.ts quote);
 * - positions tmux expands: only fixed formats made of `#{variable}` items, never caller text. The
 *   caller's working directory is not given to tmux at all (the pane argv enters it: bwrap --chdir
 *   or env -C), and typed text is pasted through set-buffer, not through a file path.
 * docs/protocol.md lists every builder with its positions and what tmux 3.3a does with each.
 */
import { UsageError } from '../common/errors.js';
import type { ReplyFraming } from './command-queue.js';
import { argvOption, argvWord, isControl, MAX_HEX_ARGS, MAX_TEXT_CHUNK_CHARS, normalizeKey, quote } from './encode.js';
import type { PaneId, WindowId } from './ids.js';
import { bad, buffer, dimension, fixedFormat, pane, paneOrSession, session, sessionTarget, subscription, wholeNumber, window, type SessionName } from './tmux-arguments.js';

export { isSessionName, type SessionName } from './tmux-arguments.js';

/** One control-mode command: its line and how its reply is read. */
export interface TmuxCommand {
  readonly line: string;
  /** Present when the reply carries pane text: how its end is found (command-queue.ts). */
  readonly framing?: ReplyFraming;
  /** An error reply is an answer, not a failure (deleting a buffer that may not exist). */
  readonly mayFail?: boolean;
}

// --- client and session state ------------------------------------------------------------------

/** `refresh-client -f pause-after=N`: tmux pauses the pane for this client once output waited N s. */
export function refreshClientPauseAfter(seconds: number): TmuxCommand {
  return { line: `refresh-client -f pause-after=${wholeNumber(seconds, 'pause-after', 86_400)}` };
}

/** `refresh-client -A '%N:continue'`: resumes a paused pane (quoted: `%` at a word's start is a directive). */
export function refreshClientContinue(target: PaneId): TmuxCommand {
  return { line: `refresh-client -A '${pane(target)}:continue'` };
}

/** `refresh-client -B 'name:@W:format'`: a window subscription; the format is expanded, so fixed. */
export function refreshClientSubscribe(name: string, target: WindowId, format: string): TmuxCommand {
  return { line: `refresh-client -B '${subscription(name)}:${window(target)}:${fixedFormat(format)}'` };
}

/** `display-message -p -t <pane|session> -- '<format>'`: the format is expanded, so fixed. */
export function displayMessage(target: PaneId | SessionName, format: string): TmuxCommand {
  return { line: `display-message -p -t ${paneOrSession(target)} -- '${fixedFormat(format)}'` };
}

/**
 * An observer becomes the driver (its host took the drive's lease): `switch-client -r` toggles
 * read-only off (tmux 3.3a refuses `refresh-client -f '!read-only'` from a read-only client), and
 * `#{client_readonly}` is read back in the same batch. Output is turned on by
 * refreshClientOutputOn, inside the first resync's batch, so the capture brackets it.
 */
export function switchClientReadWrite(): TmuxCommand[] {
  return [{ line: 'switch-client -r' }, { line: `display-message -p -- '${fixedFormat('#{client_readonly}')}'` }];
}

/** `refresh-client -f '!no-output'`: pane output flows to this client from here on. */
export function refreshClientOutputOn(): TmuxCommand {
  return { line: "refresh-client -f '!no-output'" };
}

/** `list-clients -F '<format>'`. */
export function listClients(format: string): TmuxCommand {
  return { line: `list-clients -F '${fixedFormat(format)}'` };
}

/** `send-keys -X -t %N cancel`: leaves copy or view mode. */
export function cancelPaneMode(target: PaneId): TmuxCommand {
  return { line: `send-keys -X -t ${pane(target)} cancel` };
}

/** `resize-window -t <session> -x C -y R` (it also pins the window's size: window-size manual). */
export function resizeWindow(target: SessionName, cols: number, rows: number): TmuxCommand {
  return { line: `resize-window -t ${sessionTarget(target)} -x ${dimension(cols, 'cols')} -y ${dimension(rows, 'rows')}` };
}

export function killServer(): TmuxCommand {
  return { line: 'kill-server' };
}

/**
 * `run-shell -b -t %N true`: a job that exits at once. tmux 3.3a sometimes never reaps an exited
 * pane (measured: the pane's process left a zombie of the server, its status never known, in 5 of
 * 24 runs on a loaded machine); a job's SIGCHLD makes it reap every exited child. `true` prints
 * nothing, so the pane does not go into view mode.
 */
export function runShellTrue(target: PaneId): TmuxCommand {
  return { line: `run-shell -b -t ${pane(target)} true` };
}

// --- input -------------------------------------------------------------------------------------

/** `send-keys -t %N -H hh …` lines writing exactly `bytes` to the pane (NUL and 0xFF included). */
export function encodeSendHex(target: PaneId, bytes: Uint8Array): string[] {
  pane(target);
  const lines: string[] = [];
  const hex = (b: number): string => b.toString(16).padStart(2, '0');
  for (let at = 0; at < bytes.length; at += MAX_HEX_ARGS) {
    lines.push(`send-keys -t ${target} -H ${Array.from(bytes.subarray(at, at + MAX_HEX_ARGS), hex).join(' ')}`);
  }
  return lines;
}

const isHighSurrogate = (unit: number): boolean => unit >= 0xd800 && unit <= 0xdbff;
const isLowSurrogate = (unit: number): boolean => unit >= 0xdc00 && unit <= 0xdfff;

/**
 * Lines that together deliver the UTF-8 bytes of `text`, byte-exact: printable runs as
 * `send-keys -l -- '…'` (send-keys words are not format-expanded in 3.3a), C0 bytes and DEL as
 * `send-keys -H` (TAB, ESC and CR too: as literal keys their translation depends on the pane's
 * modes and tmux version, as hex they are bytes). A lone surrogate is sent as U+FFFD, which is
 * what a UTF-8 encoder makes of it.
 */
export function encodeSendText(target: PaneId, text: string, options: { maxChunkChars?: number } = {}): string[] {
  pane(target);
  const maxChunk = Math.max(2, Math.floor(options.maxChunkChars ?? MAX_TEXT_CHUNK_CHARS));
  const lines: string[] = [];
  let run = '';
  const controls: number[] = [];
  const flushRun = (): void => {
    if (run !== '') lines.push(`send-keys -t ${target} -l -- ${quote(run)}`);
    run = '';
  };
  const flushControls = (): void => {
    if (controls.length > 0) lines.push(...encodeSendHex(target, Uint8Array.from(controls)));
    controls.length = 0;
  };
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (isControl(unit)) {
      flushRun();
      controls.push(unit);
      continue;
    }
    flushControls();
    const pair = isHighSurrogate(unit) && isLowSurrogate(text.charCodeAt(i + 1));
    const char = pair ? text.slice(i, i + 2) : isHighSurrogate(unit) || isLowSurrogate(unit) ? '\ufffd' : (text[i] as string);
    if (pair) i++;
    if (run.length + char.length > maxChunk) flushRun();
    run += char;
  }
  flushRun();
  flushControls();
  return lines;
}

/** `send-keys -t %N -- 'Enter' 'C-c' …`; every name is checked first (tmux would type unknown names). */
export function encodeSendKeys(target: PaneId, keys: readonly string[]): string {
  pane(target);
  if (keys.length === 0) throw bad('send-keys needs at least one key');
  if (keys.length > MAX_HEX_ARGS) {
    throw new UsageError('COMMAND_TOO_LARGE', `at most ${MAX_HEX_ARGS} keys per call (tmux's parser overflows near 10,000 tokens)`, { keys: keys.length });
  }
  return `send-keys -t ${target} -- ${keys.map((k) => quote(normalizeKey(k))).join(' ')}`;
}

/** The one paste buffer of a drive: a paste is one batch (one write), so pastes never interleave. */
export const PASTE_BUFFER = 'td-paste';
/** Characters per `set-buffer` line: well inside what tmux 3.3a lexes quickly (1 MB lines worked). */
export const PASTE_CHUNK_CHARS = 8192;

/**
 * A paste without a file: the text goes into PASTE_BUFFER through `set-buffer -- '…'` (then
 * `-a` appends; set-buffer data is not format-expanded), then `paste-buffer -d -p -r` (LF kept,
 * bracketed when the program asked for it, the buffer deleted). tmux's words cannot hold NUL, so a
 * NUL byte goes as `send-keys -H 00` between two pastes (a program with bracketed paste sees two
 * pastes with the NUL between them). Nothing of the text is ever written to disk.
 */
export function pasteText(target: PaneId, text: string): TmuxCommand[] {
  pane(target);
  const out: TmuxCommand[] = [];
  text.split('\0').forEach((segment, i) => {
    if (i > 0) out.push(...encodeSendHex(target, Uint8Array.of(0)).map((line) => ({ line })));
    if (segment.length === 0) return;
    for (let at = 0; at < segment.length; ) {
      let end = Math.min(at + PASTE_CHUNK_CHARS, segment.length);
      // A surrogate pair stays in one chunk: each chunk is encoded to UTF-8 on its own.
      if (end < segment.length && isHighSurrogate(segment.charCodeAt(end - 1))) end++;
      out.push({ line: `set-buffer${at === 0 ? '' : ' -a'} -b ${PASTE_BUFFER} -- ${quote(segment.slice(at, end))}` });
      at = end;
    }
    out.push({ line: `paste-buffer -d -p -r -b ${PASTE_BUFFER} -t ${target}` });
  });
  return out;
}

/** `delete-buffer -b <name>`; an absent buffer ("unknown buffer") is fine. */
export function deleteBuffer(name: string): TmuxCommand {
  return { line: `delete-buffer -b ${buffer(name)}`, mayFail: true };
}

// --- snapshots ---------------------------------------------------------------------------------

/**
 * What a capture covers (cmd-capture-pane.c): the whole current grid (history and screen, wrapped
 * rows joined, trailing spaces kept, attributes as SGR); the primary screen saved while the
 * alternate one is on (empty without one); the visible screen row by row.
 */
export type CaptureRegion = 'history-and-screen' | 'screen-joined' | 'alternate-saved' | 'screen' | 'history';

/** The flags of `capture-pane` that take each region. */
const REGION_FLAGS: Readonly<Record<CaptureRegion, string>> = {
  'history-and-screen': '-e -J -N -S - -E -',
  // The visible rows alone, spelt as history-and-screen spells them: a capture whose cost does
  // not grow with the history (a takeover's first rebuild; the history follows later).
  'screen-joined': '-e -J -N -S 0 -E -',
  'alternate-saved': '-e -J -N -a -q',
  screen: '-e -N',
  // The history alone, row by row (the differential fuzzer compares it with the mirror's).
  history: '-e -N -S - -E -1',
};

/** `capture-pane -b <buffer> …`: the capture into a paste buffer, which tells its exact size. */
export function capturePaneToBuffer(target: PaneId, region: CaptureRegion, name: string): TmuxCommand {
  return { line: `capture-pane -b ${buffer(name)} ${REGION_FLAGS[region]} -t ${pane(target)}` };
}

/**
 * `capture-pane -p …`: the same capture as the reply. Its lines are pane text and may imitate any
 * protocol line, so it needs a framing (pane-snapshot.ts gives the size of the buffer capture).
 */
export function capturePanePrinted(target: PaneId, region: CaptureRegion, framing: ReplyFraming): TmuxCommand {
  return { line: `capture-pane -p ${REGION_FLAGS[region]} -t ${pane(target)}`, framing };
}

/**
 * `capture-pane -p -P -C`: the unfinished escape sequence in the pane's parser, with every byte
 * below 0x20, above 0x7e and the backslash as `\ooo`: always exactly one line.
 */
export function capturePending(target: PaneId): TmuxCommand {
  return { line: `capture-pane -p -P -C -t ${pane(target)}`, framing: () => ({ kind: 'lines', count: 1 }) };
}

/** `list-buffers`: one `<name> <size>` line for each of `names` that exists. */
export function bufferSizes(names: readonly string[]): TmuxCommand {
  if (names.length === 0) throw bad('bufferSizes needs a buffer name');
  const filter = names.map((n) => `#{==:#{buffer_name},${buffer(n)}}`).reduce((all, one) => `#{||:${all},${one}}`);
  return { line: `list-buffers -F '#{buffer_name} #{buffer_size}' -f '${filter}'` };
}

// --- the generated server config ---------------------------------------------------------------

/** The line the pane-died hook prints (a bare line to control clients: 3.3a has no notification). */
export const PANE_DIED_MARKER = 'tmux-drive:pane-died';

export interface ServerConfigInput {
  readonly session: SessionName;
  readonly cols: number;
  readonly rows: number;
  readonly scrollback: number;
  /** The pane's argv: at least two words (one word would go through `$SHELL -c`). */
  readonly argv: readonly string[];
}

/** The options of a drive's server that change what a pane shows (the fuzz lab's server shares them). */
const PANE_OPTIONS: readonly string[] = [
  'set -g remain-on-exit on',
  "set -g remain-on-exit-format ''",
  'set -g scroll-on-clear off',
  'set -g status off',
  'set -s escape-time 0',
  'set -g automatic-rename off',
  'set -g allow-rename off',
  'set -s default-terminal tmux-256color',
  // A program must not reach tmux's paste buffers or an operator's clipboard through OSC 52.
  'set -s set-clipboard off',
];

/**
 * The config file a drive's server starts with. The session is created here rather than on tmux's
 * command line, where a word ending in `;` would end the command. No `-c`: tmux format-expands it
 * (a caller's `#(…)` would run on the host); the pane starts in the server's cwd and its argv
 * enters the working directory. The argv words after `--` are not expanded (spawn.c execs them).
 */
export function serverConfig(input: ServerConfigInput): string {
  if (!Array.isArray(input.argv) || input.argv.length < 2) throw bad('a pane argv needs at least two words');
  return [
    // history-limit applies to panes created after it is set: before new-session.
    `set -g history-limit ${wholeNumber(input.scrollback, 'scrollback', 2_147_483_647)}`,
    ...PANE_OPTIONS,
    "set -g update-environment ''",
    'set -s exit-unattached off',
    'set -g destroy-unattached off',
    `set -g default-size ${dimension(input.cols, 'cols')}x${dimension(input.rows, 'rows')}`,
    // A hook's `display-message -p` reaches control clients as a bare line (tmux 3.3a has no
    // pane-died notification); the backend confirms it with a pane_dead query.
    `set-hook -g pane-died ${quote(`display-message -p '${PANE_DIED_MARKER} #{pane_id}'`)}`,
    `new-session -d -s ${session(input.session)} -x ${input.cols} -y ${input.rows} -- ${input.argv.map(quote).join(' ')}`,
    // After new-session: tmux 3.3a segfaults when `window-size manual` is global before the first
    // detached session exists (measured here).
    'set -g window-size manual',
    '',
  ].join('\n');
}

/**
 * The differential fuzzer's server (tools/tmux-lab.ts): the drive's pane options and one idle
 * session per pane size, all made at start (tmux 3.3a segfaulted when sessions were created while
 * other control clients made and killed windows).
 */
export function fuzzLabConfig(historyLimit: number, sessions: readonly { readonly name: SessionName; readonly cols: number; readonly rows: number }[]): string {
  return [
    `set -g history-limit ${wholeNumber(historyLimit, 'history limit', 2_147_483_647)}`,
    ...PANE_OPTIONS,
    ...sessions.map((x) => `new-session -d -s ${session(x.name)} -x ${dimension(x.cols, 'cols')} -y ${dimension(x.rows, 'rows')} -- sleep 1000000`),
    '',
  ].join('\n');
}

/** `new-window -d -t =<session>: -P -F '#{pane_id}' -- argv…`: a fresh pane; the reply is its id. */
export function newWindow(target: SessionName, argv: readonly string[]): TmuxCommand {
  if (!Array.isArray(argv) || argv.length < 2) throw bad('a pane argv needs at least two words');
  return { line: `new-window -d -t ${sessionTarget(target)} -P -F '#{pane_id}' -- ${argv.map(quote).join(' ')}` };
}

/** `kill-window -t %N`: the window of that pane. */
export function killWindow(target: PaneId): TmuxCommand {
  return { line: `kill-window -t ${pane(target)}` };
}

// --- argv of `tmux …` subprocesses (the command-line form: words, no lexer) ---------------------

/** `tmux -u -S <socket> -f <conf> start-server`: starts a drive's server, which reads the config. */
export function startServerArgv(socket: string, conf: string): string[] {
  return ['-u', '-S', argvOption(socket), '-f', argvOption(conf), 'start-server'];
}

/** True for the argv startServerArgv made for `socket` (a launch a crashed host left half done). */
export function isStartServerArgv(argv: readonly string[], socket: string): boolean {
  return argv.includes(socket) && argv.includes('start-server');
}

/** `tmux -u -S <socket> -C attach-session -t <session>`: the control client. */
export function controlAttachArgv(socket: string, target: SessionName): string[] {
  return ['-u', '-S', argvOption(socket), '-C', 'attach-session', '-t', sessionTarget(target)];
}

/**
 * True for the argv controlAttachArgv or observerAttachArgv made for `socket` (a census of a
 * drive's control clients: an adopted observer drives with its observer argv).
 */
export function isControlAttachArgv(argv: readonly string[], socket: string): boolean {
  return argv.includes(socket) && argv.includes('-C') && argv.includes('attach-session');
}

/** A standby's observer: read-only (and so ignore-size) and sent no pane output at all. */
const OBSERVER_FLAGS = 'read-only,no-output';

/**
 * `tmux -u -S <socket> -C attach-session -f read-only,no-output -t <session>`: a hot standby's
 * observer of a drive another host drives. No output: the holder's pane is never slowed by it (tmux
 * queues nothing for it, so no pause-after or flow control applies) and the standby parses nothing
 * while it waits. Read-only is a label in tmux 3.3a, not a fence (commands on a control client's
 * stdin are not checked against it): the lease is the fence; the label tells observers apart.
 */
export function observerAttachArgv(socket: string, target: SessionName): string[] {
  return ['-u', '-S', argvOption(socket), '-C', 'attach-session', '-f', OBSERVER_FLAGS, '-t', sessionTarget(target)];
}

/** True for the argv observerAttachArgv made for `socket` (a standby's observer, or the driver it became). */
export function isObserverAttachArgv(argv: readonly string[], socket: string): boolean {
  return argv.includes(socket) && argv.includes('-C') && argv.includes('attach-session') && argv.includes(OBSERVER_FLAGS);
}

/** `tmux -S <socket> attach-session [-r] -t <session>`: what an operator runs to take over. */
export function operatorAttachArgv(socket: string, target: SessionName, readOnly: boolean): string[] {
  return ['-S', argvOption(socket), 'attach-session', ...(readOnly ? ['-r'] : []), '-t', sessionTarget(target)];
}

export function killServerArgv(socket: string): string[] {
  return ['-S', argvOption(socket), 'kill-server'];
}

/** `tmux -S <socket> list-sessions`: succeeds only when a server answers there. */
export function listSessionsArgv(socket: string): string[] {
  return ['-S', argvOption(socket), 'list-sessions'];
}

/** `display-message -p -t <target> -- <format>` as argv (benchmarks' one-subprocess-per-call baselines). */
export function displayMessageArgv(target: PaneId | SessionName, format: string): string[] {
  return ['display-message', '-p', '-t', paneOrSession(target), '--', fixedFormat(format)];
}

/** `capture-pane -p [-e -N] -t <target>`: the visible screen, trimmed, or with attributes and trailing spaces. */
export function capturePaneArgv(target: PaneId | SessionName, opts: { readonly attributes?: boolean } = {}): string[] {
  return ['capture-pane', '-p', ...(opts.attributes ? ['-e', '-N'] : []), '-t', paneOrSession(target)];
}

/** `send-keys -t <target> -l -- <text>` as argv: text without control bytes. */
export function sendTextArgv(target: PaneId | SessionName, text: string): string[] {
  if ([...text].some((c) => isControl(c.charCodeAt(0)))) throw bad('sendTextArgv takes text without control bytes');
  return ['send-keys', '-t', paneOrSession(target), '-l', '--', argvWord(text)];
}

/** `send-keys -t <target> -- <key>…` as argv, names checked as for encodeSendKeys. */
export function sendKeysArgv(target: PaneId | SessionName, keys: readonly string[]): string[] {
  if (keys.length === 0) throw bad('send-keys needs at least one key');
  return ['send-keys', '-t', paneOrSession(target), '--', ...keys.map((k) => argvWord(normalizeKey(k)))];
}
