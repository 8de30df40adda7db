/**
 * The one place that touches @xterm/headless directly, including the few private members of
 * xterm 6.0.0 the mirror relies on. Each private member is probed once per terminal; when one is
 * missing (another xterm version) the mirror degrades to the public API instead of breaking.
 */
import xtermHeadless from '@xterm/headless';
import serializeModule from '@xterm/addon-serialize';
import { installTmuxScreen } from './screen/install-tmux-screen.js';
import type { TmuxAlternateSave, TmuxSavedState, TmuxScreen } from './screen/tmux-screen.js';
import type { ChangedRows } from './screen/changed-rows.js';

// All three packages are CommonJS: a named ESM import fails at runtime, the default import works.
const { Terminal } = xtermHeadless;
const { SerializeAddon } = serializeModule;

export type HeadlessTerminal = InstanceType<typeof Terminal>;
/**
 * What the mirror uses of the serialize addon, as a type of its own: the addon's typings import
 * @xterm/xterm, a devDependency, so naming the addon's class in a declaration made every consumer
 * type-checking with skipLibCheck false fail (TS2307). The addon is checked against it below.
 */
export interface Serializer {
  serialize(options?: { readonly scrollback?: number }): string;
  serializeAsHTML(options?: { readonly scrollback?: number }): string;
}
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
   * The cursor's column and row in the active buffer, as `buffer.active.cursorX/Y` read them,
   * without the public API's checks and views (read after every keystroke).
   */
  cursorX(): number;
  cursorY(): number;
  /** The active buffer's `baseY`, `viewportY` and `type === 'alternate'`, read the same way. */
  baseY(): number;
  viewportY(): number;
  alternate(): boolean;
  /**
   * Forgets unparsed chunks and their callbacks (the terminal is being retired): otherwise a
   * disposed terminal keeps parsing up to 16 MB nobody will read. Safe inside one of its own
   * callbacks: the loop sees an empty buffer and resets its counters.
   */
  discardQueued(): void;
  /**
   * Parses everything still queued, now and in order (each chunk's own callback runs after it).
   * Must not be called from inside one of the terminal's write callbacks. The async loop leaves
   * the chunks it has consumed in its buffer until it trims them (below `_bufferOffset`); they are
   * removed first, so nothing is parsed twice.
   */
  flush(): void;
  /** Null when this xterm build lacks the members: then a rebuild starts from a default pen. */
  readonly parserState: ParserStateAccess | null;
  /**
   * Whether plain text (printable ASCII, CR, LF) parsed now would be laid out as PendingOutput's
   * fast-forward assumes: this size and a buffer of `bufferLines`, the main screen, the scroll
   * region the whole screen, autowrap on, insert off, no charset, no joined character pending.
   * Always false without the tmux screen port (then xterm's own rules apply).
   */
  fastForwardSafe(cols: number, rows: number, bufferLines: number): boolean;
  /** Rows that may have changed since the input baseline last read them; null without the tmux screen port. */
  readonly changedRows: ChangedRows | null;
  /**
   * Prints a run of printable ASCII (0x20–0x7e) as parsing it would, without the parse: straight
   * into the tmux screen port's print, as xterm's parser calls it for such a run in its ground
   * state (a keystroke's echo: WriteBuffer, InputHandler.parse, the UTF-8 decoder and the state
   * table cost more than the print itself, ~2/3 of a cold one-byte write). Returns false, having
   * done nothing, unless that is exactly what the parse would do: the port installed, nothing queued
   * in the WriteBuffer or paused in the parser, the parser in its ground state with no UTF-8
   * pending, every byte printable, at most DIRECT_PRINT_MAX_BYTES. What the parse does besides the
   * print is done too: the redraw of the cursor's row it asks for marks that row changed; its
   * cursor-move event has no listener here (nothing subscribes to the terminal's onCursorMove).
   */
  printDirect(data: Uint8Array): boolean;
}

/** The longest run printDirect takes (its code-point scratch); a longer one is parsed. */
export const DIRECT_PRINT_MAX_BYTES = 256;

export interface ParserStateAccess {
  /** The parser state a grid does not show and tmux 3.3a does not report (see `ParserState`). */
  save(): ParserState;
  /** Applies a state taken from another terminal (any size) to this one. */
  load(state: ParserState): void;
}

/**
 * What a terminal remembers between bytes besides its grid, modes and cursor, and tmux 3.3a has
 * no format for (reference §5 "Gaps"): the SGR pen the next character is printed with, the G0/G1
 * charset designations, the GL level (SO/SI) and the active charset, tmux's DECSC save (pen,
 * charsets, cursor, origin mode) and the pen `?1049h` saved for `?1049l`. A program that uses
 * curses emits SGR only when its idea of the terminal's pen changes, so these are needed to
 * continue its stream exactly.
 */
export interface ParserState {
  readonly pen: { readonly fg: number; readonly bg: number; readonly ext: number };
  readonly charsets: readonly unknown[];
  readonly glevel: number;
  readonly charset: unknown;
  readonly alternate: boolean;
  readonly tmux: { readonly saved: TmuxSavedState; readonly alternateSave: TmuxAlternateSave | null; readonly zwj: boolean };
}

interface CoreShape {
  _writeBuffer?: { writeSync?: unknown; _writeBuffer?: unknown; _callbacks?: unknown; _pendingData?: unknown; _bufferOffset?: unknown };
  coreService?: { isCursorHidden?: unknown };
  _inputHandler?: {
    _curAttrData?: unknown;
    onRequestRefreshRows?: unknown;
    print?: unknown;
    _parseStack?: { paused?: unknown };
    _utf8Decoder?: { interim?: unknown };
    _parser?: { currentState?: unknown; _parseStack?: { state?: unknown } };
  };
  _charsetService?: { glevel?: unknown; _charsets?: unknown; setgLevel?: unknown; setgCharset?: unknown };
}

interface PenShape {
  fg: number;
  bg: number;
  extended: { ext: number; urlId: number; clone(): PenShape['extended'] };
}

interface CharsetServiceShape {
  glevel: number;
  _charsets: unknown[];
  charset: unknown;
  setgLevel(level: number): void;
  setgCharset(g: number, charset: unknown): void;
}

export interface CreatedTerminal {
  readonly term: HeadlessTerminal;
  readonly serializer: Serializer;
  /** Null when this xterm build lacks the private members (then: no sync path, cursor assumed visible). */
  readonly internals: XtermInternals | null;
}

/** Where the emulator's own log lines go (never the host's console). */
export type EmulatorLog = (level: 'warn' | 'error', message: string) => void;

/**
 * Terminals made ahead of need, by geometry. A standby's takeover makes one mirror per drive at
 * once, on its clock (≈ 4 ms a terminal warm, with its garbage); the waiting standby makes them
 * beforehand instead (lib/driver/standby.ts) and createTerminal hands one out when the geometry
 * matches. A spare is never written or read before it is handed out (a new terminal in every
 * respect); its log lines go where the taker says from then on. Process-wide and bounded.
 */
const spares = new Map<string, { readonly made: CreatedTerminal; readonly sink: { log?: EmulatorLog } }[]>();
let spareCount = 0;
/** Spares handed out since the process started (a takeover's mirrors took them). */
let sparesHandedOut = 0;
const MAX_SPARES = 256;
const geometry = (cols: number, rows: number, scrollback: number): string => `${cols}x${rows}+${scrollback}`;

/** Makes one spare terminal of this geometry; false when the pool is full. */
export function prepareSpareTerminal(cols: number, rows: number, scrollback: number): boolean {
  if (spareCount >= MAX_SPARES) return false;
  const sink: { log?: EmulatorLog } = {};
  const made = makeTerminal(cols, rows, scrollback, sink);
  const key = geometry(cols, rows, scrollback);
  const list = spares.get(key) ?? [];
  list.push({ made, sink });
  spares.set(key, list);
  spareCount++;
  return true;
}

/** Spare terminals not handed out yet (`ready`), and handed out since the process started. */
export function spareTerminals(): { readonly ready: number; readonly handedOut: number } {
  return { ready: spareCount, handedOut: sparesHandedOut };
}

/** Disposes every spare not handed out (the takeover is over, or the standby stops). */
export function dropSpareTerminals(): void {
  for (const list of spares.values()) for (const { made } of list) made.term.dispose();
  spares.clear();
  spareCount = 0;
}

export function createTerminal(cols: number, rows: number, scrollback: number, log?: EmulatorLog): CreatedTerminal {
  const spare = spares.get(geometry(cols, rows, scrollback))?.pop();
  if (spare) {
    spareCount--;
    sparesHandedOut++;
    if (log) spare.sink.log = log;
    return spare.made;
  }
  return makeTerminal(cols, rows, scrollback, log ? { log } : {});
}

function makeTerminal(cols: number, rows: number, scrollback: number, sink: { log?: EmulatorLog }): CreatedTerminal {
  const quiet = (): void => undefined;
  const term = new Terminal({
    cols,
    rows,
    scrollback,
    allowProposedApi: true,
    // xterm.js logs to `console` by default: a program printing DEL bytes made it write ~770 bytes
    // of parser state to the host's stderr per byte. Its lines go to the owner, or nowhere.
    logLevel: 'warn',
    logger: { trace: quiet, debug: quiet, info: quiet, warn: (m: string) => sink.log?.('warn', m), error: (m: string) => sink.log?.('error', m) },
  });
  // The addon typings are written against @xterm/xterm's Terminal; the headless one is the same
  // object model for what the serializer uses.
  // tmux's widths (glibc wcwidth) and tmux's behaviour for the sequences the input filter passes.
  const screen = installTmuxScreen(term);
  const serializer: Serializer = new SerializeAddon();
  term.loadAddon(serializer as unknown as Parameters<HeadlessTerminal['loadAddon']>[0]);
  // The emulator answers DA, DSR, DECRQM… through onData/onBinary. tmux already answers those
  // queries for the pane itself (reference §5), so a second answer must never reach the program:
  // the replies are consumed here and nothing else subscribes.
  term.onData(() => undefined);
  term.onBinary(() => undefined);
  const internals = probeInternals(term, screen);
  return { term, serializer, internals };
}

function probeInternals(term: HeadlessTerminal, screen: TmuxScreen | null): XtermInternals | null {
  const core = (term as unknown as { _core?: CoreShape })._core;
  const wb = core?._writeBuffer;
  const cs = core?.coreService;
  if (!wb || typeof wb.writeSync !== 'function' || !Array.isArray(wb._writeBuffer) || !Array.isArray(wb._callbacks)) return null;
  if (typeof wb._pendingData !== 'number' || typeof wb._bufferOffset !== 'number' || !cs || typeof cs.isCursorHidden !== 'boolean') return null;
  const writeBuffer = wb as { writeSync(data: Uint8Array): void; _writeBuffer: unknown[]; _callbacks: unknown[]; _pendingData: number; _bufferOffset: number };
  const coreService = cs as { isCursorHidden: boolean };
  return {
    // WriteBuffer.writeSync directly: CoreTerminal.writeSync is the same call plus a one-time
    // "unreliable" console warning, whose condition (pending async writes) the mirror excludes.
    writeSync: (data) => writeBuffer.writeSync(data),
    writeBufferEmpty: () => writeBuffer._writeBuffer.length === 0,
    cursorHidden: () => coreService.isCursorHidden,
    cursorX: screen ? () => screen.b.x : () => term.buffer.active.cursorX,
    cursorY: screen ? () => screen.b.y : () => term.buffer.active.cursorY,
    baseY: screen ? () => screen.b.ybase : () => term.buffer.active.baseY,
    viewportY: screen ? () => screen.b.ydisp : () => term.buffer.active.viewportY,
    alternate: screen ? () => screen.alternate : () => term.buffer.active.type === 'alternate',
    discardQueued: () => {
      writeBuffer._writeBuffer.length = 0;
      writeBuffer._callbacks.length = 0;
      writeBuffer._pendingData = 0;
    },
    flush: () => {
      if (writeBuffer._writeBuffer.length === 0) return;
      const consumed = Math.min(writeBuffer._bufferOffset, writeBuffer._writeBuffer.length);
      writeBuffer._writeBuffer.splice(0, consumed);
      writeBuffer._callbacks.splice(0, consumed);
      writeBuffer._bufferOffset = 0;
      // An empty chunk: writeSync first parses every queued chunk, then this one (nothing).
      writeBuffer.writeSync(new Uint8Array(0));
    },
    parserState: screen ? probeParserState(core, screen) : null,
    changedRows: screen && core ? trackChangedRows(term, core, screen) : null,
    fastForwardSafe: (cols, rows, bufferLines) => {
      if (!screen || screen.alternate || screen.joinNext || screen.cols !== cols || screen.rows !== rows) return false;
      const b = screen.b;
      const h = screen.handler;
      return b.lines.maxLength === bufferLines && b.scrollTop === 0 && b.scrollBottom === rows - 1 && screen.modes.wraparound && !h._coreService.modes.insertMode && !h._charsetService.charset;
    },
    printDirect: screen && core ? directPrint(core, screen, writeBuffer._writeBuffer) : () => false,
  };
}

/** xterm's ParserState.GROUND and ParserStackType.NONE. */
const GROUND = 0;
const NOT_PAUSED = 0;

/** XtermInternals.printDirect, or one that always declines when a member it reads is missing. */
function directPrint(core: CoreShape, screen: TmuxScreen, queued: readonly unknown[]): (data: Uint8Array) => boolean {
  const handler = core._inputHandler;
  const parser = handler?._parser;
  const parserStack = parser?._parseStack;
  const handlerStack = handler?._parseStack;
  const interim = handler?._utf8Decoder?.interim;
  const changed = screen.changedRows;
  if (!handler || typeof handler.print !== 'function' || !parser || typeof parser.currentState !== 'number') return () => false;
  if (!parserStack || typeof parserStack.state !== 'number' || !handlerStack || typeof handlerStack.paused !== 'boolean' || !(interim instanceof Uint8Array)) return () => false;
  const state = parser as { currentState: number };
  const stack = parserStack as { state: number };
  const paused = handlerStack as { paused: boolean };
  const codes = new Uint32Array(DIRECT_PRINT_MAX_BYTES);
  return (data) => {
    const n = data.length;
    if (n === 0 || n > DIRECT_PRINT_MAX_BYTES || queued.length !== 0 || state.currentState !== GROUND || stack.state !== NOT_PAUSED || paused.paused || interim[0] !== 0) return false;
    for (let i = 0; i < n; i++) {
      const byte = data[i] as number;
      if (byte < 0x20 || byte > 0x7e) return false;
      codes[i] = byte;
    }
    const b = screen.b;
    // InputHandler.parse redraws the rows from the cursor's at its start (in viewport rows).
    const redraw = b.y + b.ybase - b.ydisp;
    // Called as the parser calls it (its print handler calls the handler's print, the port's).
    screen.handler.print(codes, 0, n);
    if (redraw < screen.rows) changed.mark(redraw);
    return true;
  };
}

/**
 * The port's tracker, fed also by what the port does not see: the rows xterm's own handlers redraw
 * after a parse (undefined: all), and whatever moves or swaps rows (scroll, resize, buffer switch).
 * Null when xterm lacks the redraw event: then no row is trusted between reads.
 */
function trackChangedRows(term: HeadlessTerminal, core: CoreShape, screen: TmuxScreen): ChangedRows | null {
  const redraws = core._inputHandler?.onRequestRefreshRows;
  if (typeof redraws !== 'function') return null;
  const changed = screen.changedRows;
  (redraws as (listener: (range: { start: number; end: number } | undefined) => void) => unknown)((range) => {
    if (range) changed.markRange(range.start, range.end);
    else changed.markAll();
  });
  term.onScroll(() => changed.markAll());
  term.onResize(() => changed.markAll());
  term.buffer.onBufferChange(() => changed.markAll());
  return changed;
}

/**
 * Every member is looked up at call time: a full reset (RIS) replaces the pen object.
 */
function probeParserState(core: CoreShape, screen: TmuxScreen): ParserStateAccess | null {
  const handler = core._inputHandler;
  const cs = core._charsetService;
  const pen0 = handler?._curAttrData as PenShape | undefined;
  if (!handler || !pen0 || typeof pen0.fg !== 'number' || typeof pen0.extended?.clone !== 'function') return null;
  if (!cs || typeof cs.glevel !== 'number' || !Array.isArray(cs._charsets) || typeof cs.setgLevel !== 'function' || typeof cs.setgCharset !== 'function') return null;
  const pen = (): PenShape => handler._curAttrData as PenShape;
  const charsets = cs as CharsetServiceShape;
  return {
    save: () => {
      const { fg, bg, extended } = pen();
      // With a link id, `ext` reads as underline style 5 (how xterm shows links): read it without.
      const ext = extended.clone();
      ext.urlId = 0;
      return {
        pen: { fg, bg, ext: ext.ext },
        charsets: [...charsets._charsets],
        glevel: charsets.glevel,
        charset: charsets.charset,
        alternate: screen.alternate,
        tmux: { saved: screen.saved, alternateSave: screen.alternateSave, zwj: screen.zwj },
      };
    },
    load: (state) => {
      const p = pen();
      p.fg = state.pen.fg;
      p.bg = state.pen.bg;
      // A hyperlink id names an entry of the old terminal's link registry: not carried.
      const ext = p.extended.clone();
      ext.urlId = 0;
      ext.ext = state.pen.ext;
      p.extended = ext;
      for (let g = 0; g < Math.max(4, state.charsets.length); g++) charsets.setgCharset(g, state.charsets[g]);
      charsets.setgLevel(state.glevel);
      charsets.charset = state.charset; // DECRC can leave it different from the GL level's designation
      // tmux's DECSC save belongs to the pane's parser, not to a screen: it carries as it is.
      screen.saved = { ...state.tmux.saved, pen: state.tmux.saved.pen.clone() };
      screen.zwj = state.tmux.zwj;
      // The rebuild entered the alternate screen at tmux's alternate_saved_x/y with a default pen;
      // the pen `?1049h` really saved is the one the stream carried.
      const carried = state.tmux.alternateSave;
      const rebuilt = screen.alternateSave;
      if (carried) screen.alternateSave = rebuilt ? { ...rebuilt, pen: carried.pen.clone() } : carried;
    },
  };
}
