/**
 * The one place that touches @xterm/headless directly, including the few private members of
 * xterm 6.0.0 the mirror relies on. Each private member is probed once per terminal; when one is
 * missing (another xterm version) the mirror degrades to the public API instead of breaking.
 */
import xtermHeadless from '@xterm/headless';
import serializeModule from '@xterm/addon-serialize';
import unicode11Module from '@xterm/addon-unicode11';

// All three packages are CommonJS: a named ESM import fails at runtime, the default import works.
const { Terminal } = xtermHeadless;
const { SerializeAddon } = serializeModule;
const { Unicode11Addon } = unicode11Module;

export type HeadlessTerminal = InstanceType<typeof Terminal>;
export type Serializer = InstanceType<typeof SerializeAddon>;
export type BufferCell = NonNullable<ReturnType<NonNullable<ReturnType<HeadlessTerminal['buffer']['active']['getLine']>>['getCell']>>;

/** What the private core of xterm 6.0.0 exposes that the public API does not. */
export interface XtermInternals {
  /**
   * Parses synchronously through the core's WriteBuffer (the same parser and UTF-8 decoder as
   * `write`, so a sequence split between the two paths continues correctly). Only safe while the
   * WriteBuffer is empty: its writeSync replays the buffer from index 0, which re-parses chunks an
   * interrupted async batch has already consumed.
   */
  writeSync(data: Uint8Array): void;
  /** True when the core's WriteBuffer holds nothing (also not a chunk whose callback is running). */
  writeBufferEmpty(): boolean;
  /** DECTCEM: the public API has no getter for it. */
  cursorHidden(): boolean;
  /**
   * Forgets unparsed chunks and their callbacks (the terminal is being retired): otherwise a
   * disposed terminal keeps parsing up to 16 MB nobody will read. Safe inside one of its own
   * callbacks: the loop sees an empty buffer and resets its counters.
   */
  discardQueued(): void;
}

interface CoreShape {
  _writeBuffer?: { writeSync?: unknown; _writeBuffer?: unknown; _callbacks?: unknown; _pendingData?: unknown };
  coreService?: { isCursorHidden?: unknown };
  _bufferService?: { scroll?: unknown };
}

interface AttrShape {
  fg: number;
  bg: number;
  clone(): AttrShape;
}

export interface CreatedTerminal {
  readonly term: HeadlessTerminal;
  readonly serializer: Serializer;
  /** Null when this xterm build lacks the private members (then: no sync path, cursor assumed visible). */
  readonly internals: XtermInternals | null;
}

export function createTerminal(cols: number, rows: number, scrollback: number): CreatedTerminal {
  const term = new Terminal({ cols, rows, scrollback, allowProposedApi: true });
  // The addon typings are written against @xterm/xterm's Terminal; the headless one is the same
  // object model for what these addons use.
  const unicode = new Unicode11Addon();
  term.loadAddon(unicode as unknown as Parameters<HeadlessTerminal['loadAddon']>[0]);
  // tmux 3.3a measures widths with glibc wcwidth (emoji = 2 columns); xterm's default Unicode 6
  // tables say 1 and the cursor would drift after every emoji.
  term.unicode.activeVersion = '11';
  const serializer = new SerializeAddon();
  term.loadAddon(serializer as unknown as Parameters<HeadlessTerminal['loadAddon']>[0]);
  // The emulator answers DA, DSR, DECRQM… through onData/onBinary. tmux already answers those
  // queries for the pane itself (reference §5), so a second answer must never reach the program:
  // the replies are consumed here and nothing else subscribes.
  term.onData(() => undefined);
  term.onBinary(() => undefined);
  const internals = probeInternals(term);
  patchWrapScroll(term);
  return { term, serializer, internals };
}

function probeInternals(term: HeadlessTerminal): XtermInternals | null {
  const core = (term as unknown as { _core?: CoreShape })._core;
  const wb = core?._writeBuffer;
  const cs = core?.coreService;
  if (!wb || typeof wb.writeSync !== 'function' || !Array.isArray(wb._writeBuffer) || !Array.isArray(wb._callbacks)) return null;
  if (typeof wb._pendingData !== 'number' || !cs || typeof cs.isCursorHidden !== 'boolean') return null;
  const writeBuffer = wb as { writeSync(data: Uint8Array): void; _writeBuffer: unknown[]; _callbacks: unknown[]; _pendingData: number };
  const coreService = cs as { isCursorHidden: boolean };
  return {
    // WriteBuffer.writeSync directly: CoreTerminal.writeSync is the same call plus a one-time
    // "unreliable" console warning, whose condition (pending async writes) the mirror excludes.
    writeSync: (data) => writeBuffer.writeSync(data),
    writeBufferEmpty: () => writeBuffer._writeBuffer.length === 0,
    cursorHidden: () => coreService.isCursorHidden,
    discardQueued: () => {
      writeBuffer._writeBuffer.length = 0;
      writeBuffer._callbacks.length = 0;
      writeBuffer._pendingData = 0;
    },
  };
}

/**
 * xterm fills the row an autowrap scrolls in with the current background (BCE); tmux 3.3a does
 * not (screen_write_cell wraps with screen_write_linefeed(ctx, 1, 8): default colour). Without
 * this, text with a background colour that wraps at the bottom row leaves coloured blanks in the
 * mirror that tmux's grid does not have. An explicit LF keeps BCE in both.
 */
function patchWrapScroll(term: HeadlessTerminal): void {
  const bufferService = (term as unknown as { _core?: CoreShape })._core?._bufferService;
  if (!bufferService || typeof bufferService.scroll !== 'function') return;
  const target = bufferService as { scroll(eraseAttr: AttrShape, isWrapped?: boolean): void };
  const scroll = target.scroll.bind(target);
  target.scroll = (eraseAttr, isWrapped = false) => {
    if (!isWrapped || (eraseAttr.bg === 0 && eraseAttr.fg === 0)) return scroll(eraseAttr, isWrapped);
    const plain = eraseAttr.clone();
    plain.fg = 0;
    plain.bg = 0;
    scroll(plain, isWrapped);
  };
}
