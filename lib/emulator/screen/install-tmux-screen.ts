/**
 * Installs tmux 3.3a's screen into an xterm.js terminal: tmux's character widths always, and the
 * port (print, and a handler for every sequence the input filter emits) when xterm's private core
 * has the members it needs. The handlers are tables, one line per sequence, as xterm's own
 * InputHandler registers them.
 */
import { charWidth } from '../char-width.js';
import type { HeadlessTerminal } from '../headless.js';
import { fullReset, restoreState, saveState, setMode, setPrivateMode } from './modes.js';
import { print } from './print.js';
import {
  alignmentTest,
  backTab,
  backspace,
  clearCharacters,
  cursorDown,
  cursorLeft,
  cursorRight,
  cursorUp,
  deleteCharacters,
  deleteLines,
  eraseDisplay,
  eraseLine,
  insertCharacters,
  insertLines,
  param,
  repeat,
  reverseIndex,
  scrollDown,
  scrollRegion,
  scrollUp,
  tab,
  type Params,
} from './screen-write.js';
import { TmuxScreen } from './tmux-screen.js';
import type { BufferServiceShape, BufferShape, CharsetServiceShape, CoreShape, InputHandlerShape } from './xterm-core.js';

export const TMUX_UNICODE_VERSION = 'tmux-glibc';

/** Installs tmux's widths always, and the port when xterm's private core has the members it needs. */
export function installTmuxScreen(term: HeadlessTerminal): TmuxScreen | null {
  installWidths(term);
  const core = (term as unknown as { _core?: CoreShape })._core;
  const handler = core?._inputHandler;
  const service = core?._bufferService;
  if (!handler || !service || !probe(handler, service)) return null;
  const s = new TmuxScreen(handler, service);
  handler.print = (data, start, end) => print(s, data, start, end);
  installHandlers(term, s);
  return s;
}

function probe(handler: InputHandlerShape, service: BufferServiceShape): boolean {
  const b = service.buffer as Partial<BufferShape> | undefined;
  const cs = handler._charsetService as Partial<CharsetServiceShape> | undefined;
  return (
    typeof handler.print === 'function' &&
    typeof handler._curAttrData?.clone === 'function' &&
    typeof handler._coreService?.decPrivateModes?.wraparound === 'boolean' &&
    typeof handler._coreService?.modes?.insertMode === 'boolean' &&
    typeof handler._coreService?.reset === 'function' &&
    typeof handler._coreMouseService?.reset === 'function' &&
    typeof cs?.setgCharset === 'function' &&
    typeof cs.setgLevel === 'function' &&
    Array.isArray(cs._charsets) &&
    typeof service.scroll === 'function' &&
    typeof service.buffers?.activateAltBuffer === 'function' &&
    typeof b?.ybase === 'number' &&
    typeof b.scrollBottom === 'number' &&
    typeof b.tabs === 'object' &&
    typeof b.setupTabStops === 'function' &&
    typeof b.lines?.shiftElements === 'function' &&
    typeof b.lines.maxLength === 'number' &&
    typeof b.lines.trimStart === 'function' &&
    typeof b.getNullCell === 'function' &&
    typeof b.getBlankLine === 'function' &&
    typeof b.lines.get(0)?.addCodepointToCell === 'function'
  );
}

/**
 * tmux measures with glibc's wcwidth. Width -1 never reaches here (the filter drops it). The
 * ported print decides joining itself; this provider keeps xterm's other width users (the
 * serializer, reflow) in step.
 */
function installWidths(term: HeadlessTerminal): void {
  const width = (cp: number): 0 | 1 | 2 => {
    const w = charWidth(cp);
    return w < 0 ? 1 : (w as 0 | 1 | 2);
  };
  term.unicode.register({
    version: TMUX_UNICODE_VERSION,
    wcwidth: width,
    charProperties: (cp, preceding) => {
      const w = width(cp);
      const precedingWidth = (preceding >> 1) & 3;
      const join = w === 0 && precedingWidth > 0;
      return ((join ? precedingWidth : w) << 1) | (join ? 1 : 0);
    },
  });
  term.unicode.activeVersion = TMUX_UNICODE_VERSION;
}

/**
 * BS, HT and LF (input_c0_dispatch; the filter makes VT and FF line feeds). They are C0 controls:
 * xterm's parser executes them through fixed InputHandler methods (no registration API), so those
 * methods are replaced on the instance.
 */
const C0_HANDLERS: Readonly<Record<'backspace' | 'tab' | 'lineFeed', (s: TmuxScreen) => void>> = {
  backspace: (s) => backspace(s),
  tab: (s) => tab(s),
  lineFeed: (s) => s.lineFeed(false, s.eraseAttr()),
};

interface EscHandler {
  readonly id: { readonly intermediates?: string; readonly final: string };
  readonly run: (s: TmuxScreen) => void;
}

/** input_esc_dispatch. */
const ESC_HANDLERS: readonly EscHandler[] = [
  { id: { final: '7' }, run: (s) => saveState(s) },
  { id: { final: '8' }, run: (s) => restoreState(s) },
  { id: { final: 'D' }, run: (s) => s.lineFeed(false, s.eraseAttr()) },
  {
    id: { final: 'E' },
    run: (s) => {
      s.setCursor(0, -1);
      s.lineFeed(false, s.eraseAttr());
    },
  },
  {
    id: { final: 'H' },
    run: (s) => {
      if (s.b.x < s.cols) s.b.tabs[s.b.x] = true;
    },
  },
  { id: { final: 'M' }, run: (s) => reverseIndex(s) },
  { id: { final: 'c' }, run: (s) => fullReset(s) },
  { id: { intermediates: '#', final: '8' }, run: (s) => alignmentTest(s) },
];

interface CsiHandler {
  readonly id: { readonly prefix?: string; readonly final: string };
  /** false: not tmux's to handle, xterm's own handler runs (a mode tmux treats as xterm does). */
  readonly run: (s: TmuxScreen, params: Params) => void | boolean;
}

/** input_csi_dispatch, as the filter emits each sequence (one canonical form, counts clamped). */
const CSI_HANDLERS: readonly CsiHandler[] = [
  // REP comes from the filter as `CSI < ch ; n b`.
  { id: { prefix: '<', final: 'b' }, run: (s, a) => repeat(s, a) },
  // U+FEFF, which xterm's UTF-8 decoder drops, comes as `CSI < 65279 z` (filter and captures).
  {
    id: { prefix: '<', final: 'z' },
    run: (s, a) => {
      const cp = a[0];
      if (typeof cp === 'number' && cp > 0) print(s, Uint32Array.of(cp), 0, 1);
    },
  },
  {
    id: { prefix: '<', final: 'j' },
    run: (s) => {
      s.joinNext = true;
    },
  },
  { id: { final: '@' }, run: (s, a) => insertCharacters(s, param(a, 0, 1)) },
  { id: { final: 'A' }, run: (s, a) => cursorUp(s, param(a, 0, 1)) },
  { id: { final: 'B' }, run: (s, a) => cursorDown(s, param(a, 0, 1)) },
  { id: { final: 'C' }, run: (s, a) => cursorRight(s, param(a, 0, 1)) },
  { id: { final: 'D' }, run: (s, a) => cursorLeft(s, param(a, 0, 1)) },
  {
    id: { final: 'E' },
    run: (s, a) => {
      s.setCursor(0, -1);
      cursorDown(s, param(a, 0, 1));
    },
  },
  {
    id: { final: 'F' },
    run: (s, a) => {
      s.setCursor(0, -1);
      cursorUp(s, param(a, 0, 1));
    },
  },
  { id: { final: 'G' }, run: (s, a) => s.cursorMove(param(a, 0, 1) - 1, -1, true) },
  { id: { final: 'H' }, run: (s, a) => s.cursorMove(param(a, 1, 1) - 1, param(a, 0, 1) - 1, true) },
  { id: { final: 'J' }, run: (s, a) => eraseDisplay(s, typeof a[0] === 'number' ? a[0] : 0) },
  { id: { final: 'K' }, run: (s, a) => eraseLine(s, typeof a[0] === 'number' ? a[0] : 0) },
  { id: { final: 'L' }, run: (s, a) => insertLines(s, param(a, 0, 1)) },
  { id: { final: 'M' }, run: (s, a) => deleteLines(s, param(a, 0, 1)) },
  { id: { final: 'P' }, run: (s, a) => deleteCharacters(s, param(a, 0, 1)) },
  { id: { final: 'S' }, run: (s, a) => scrollUp(s, param(a, 0, 1)) },
  { id: { final: 'T' }, run: (s, a) => scrollDown(s, param(a, 0, 1)) },
  { id: { final: 'X' }, run: (s, a) => clearCharacters(s, param(a, 0, 1)) },
  { id: { final: 'Z' }, run: (s, a) => backTab(s, param(a, 0, 1)) },
  { id: { final: 'd' }, run: (s, a) => s.cursorMove(-1, param(a, 0, 1) - 1, true) },
  {
    id: { final: 'g' },
    run: (s, a) => {
      const n = typeof a[0] === 'number' ? a[0] : 0;
      if (n === 0 && s.b.x < s.cols) delete s.b.tabs[s.b.x];
      else if (n === 3) s.b.tabs = {};
    },
  },
  { id: { final: 'r' }, run: (s, a) => scrollRegion(s, param(a, 0, 1) - 1, param(a, 1, s.rows) - 1) },
  // Modes come one value per sequence from the filter; the ones tmux treats like xterm pass on.
  { id: { final: 'h' }, run: (s, a) => setMode(s, a, true) },
  { id: { final: 'l' }, run: (s, a) => setMode(s, a, false) },
  { id: { prefix: '?', final: 'h' }, run: (s, a) => setPrivateMode(s, a, true) },
  { id: { prefix: '?', final: 'l' }, run: (s, a) => setPrivateMode(s, a, false) },
];

function installHandlers(term: HeadlessTerminal, s: TmuxScreen): void {
  const target = s.handler as unknown as Record<string, unknown>;
  for (const [method, run] of Object.entries(C0_HANDLERS)) {
    if (typeof target[method] !== 'function') continue;
    target[method] = () => {
      run(s);
      return true;
    };
  }
  for (const { id, run } of ESC_HANDLERS) {
    term.parser.registerEscHandler(id, () => {
      run(s);
      return true;
    });
  }
  for (const { id, run } of CSI_HANDLERS) term.parser.registerCsiHandler(id, (params) => run(s, params) !== false);
}
