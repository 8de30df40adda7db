/**
 * What tmux 3.3a keeps besides the grid, as its input.c and screen.c change it: DECSC/DECRC
 * (input_save_state: the pen, both charsets, the origin mode), RIS, the insert, origin and wrap
 * modes, and the alternate screens (47, 1047, 1049), whose scroll region and tab stops tmux keeps
 * per pane where xterm keeps them per buffer.
 */
import { scrollRegion, type Params } from './screen-write.js';
import type { TmuxScreen } from './tmux-screen.js';
import type { BufferShape } from './xterm-core.js';

/** input_save_state (DECSC, SCP). */
export function saveState(s: TmuxScreen): void {
  const h = s.handler;
  const cs = h._charsetService;
  s.saved = { pen: h._curAttrData.clone(), glevel: cs.glevel, g0: cs._charsets[0], g1: cs._charsets[1], x: s.b.x, y: s.b.y, origin: s.modes.origin };
}

/** input_restore_state (DECRC, RCP): the pen, both charsets and the shift, the origin mode, then an absolute move. */
export function restoreState(s: TmuxScreen): void {
  const h = s.handler;
  const saved = s.saved;
  h._curAttrData = saved.pen.clone();
  const cs = h._charsetService;
  cs.setgCharset(0, saved.g0);
  cs.setgCharset(1, saved.g1);
  cs.setgLevel(saved.glevel);
  s.modes.origin = saved.origin;
  s.cursorMove(saved.x, saved.y, false);
}

/**
 * RIS: input_reset_cell (pen, charsets, the DECSC save) and screen_write_reset (tab stops, the
 * region, every mode but the cursor and wrap off, the screen cleared to default, the cursor home).
 * tmux stays on the alternate screen and keeps the history.
 */
export function fullReset(s: TmuxScreen): void {
  const h = s.handler;
  h._curAttrData = s.defaultAttr.clone();
  h._charsetService.reset();
  const origin = s.saved.origin;
  s.saved = { ...s.initialSave(), origin };
  s.b.setupTabStops();
  scrollRegion(s, 0, s.rows - 1);
  h._coreService.reset();
  h._coreService.isCursorHidden = false;
  h._coreMouseService.reset();
  s.clearLines(0, s.rows, s.defaultAttr);
  s.setCursor(0, 0);
}

export function setMode(s: TmuxScreen, a: Params, on: boolean): boolean {
  if (a.length !== 1 || a[0] !== 4) return false;
  s.handler._coreService.modes.insertMode = on;
  return true;
}

export function setPrivateMode(s: TmuxScreen, a: Params, on: boolean): boolean {
  if (a.length !== 1) return false;
  switch (a[0]) {
    case 6:
      s.modes.origin = on;
      s.cursorMove(0, 0, true);
      return true;
    case 7:
      s.modes.wraparound = on;
      return true;
    case 47:
    case 1047:
      if (on) alternateOn(s, false);
      else alternateOff(s, false);
      return true;
    case 1049:
      if (on) alternateOn(s, true);
      else alternateOff(s, true);
      return true;
    default:
      return false;
  }
}

/**
 * screen_alternate_on: nothing if already on; the 1049 form saves the cursor, every form saves the
 * pen; the alternate screen starts cleared to default cells, with the same region and tab stops
 * (tmux keeps those per pane, xterm per buffer).
 */
function alternateOn(s: TmuxScreen, cursor: boolean): void {
  if (s.alternate) return;
  const normal = s.b;
  if (cursor) s.alternateSave = { x: normal.x, y: normal.y, pen: s.handler._curAttrData.clone() };
  else if (s.alternateSave) s.alternateSave = { ...s.alternateSave, pen: s.handler._curAttrData.clone() };
  const kept = paneState(normal);
  s.service.buffers.activateAltBuffer(s.defaultAttr);
  Object.assign(s.b, kept);
}

/**
 * screen_alternate_off: the 1049 form restores the saved cursor and pen even when not on the
 * alternate screen (and keeps them for the next time); the cursor is then clamped inside the
 * screen, which ends a pending wrap.
 */
function alternateOff(s: TmuxScreen, cursor: boolean): void {
  const saved = s.alternateSave;
  let x = s.b.x;
  let y = s.b.y;
  if (cursor && saved) {
    x = saved.x;
    y = saved.y;
    s.handler._curAttrData = saved.pen.clone();
  }
  if (s.alternate) {
    // Read before the switch: xterm clears the alternate buffer, region and tab stops included.
    const kept = paneState(s.b);
    s.service.buffers.activateNormalBuffer();
    Object.assign(s.b, kept);
  }
  s.b.x = Math.min(x, s.cols - 1);
  s.b.y = Math.min(y, s.rows - 1);
}

/** What tmux keeps per pane and xterm per buffer: the scroll region and the tab stops. */
function paneState(b: BufferShape): Pick<BufferShape, 'scrollTop' | 'scrollBottom' | 'tabs'> {
  return { scrollTop: b.scrollTop, scrollBottom: b.scrollBottom, tabs: { ...b.tabs } };
}
