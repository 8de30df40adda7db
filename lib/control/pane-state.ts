/**
 * The pane state tmux 3.3a reports through formats (reference §5, snapshot step 1): one
 * `display-message -p -t %N '<PANE_STATE_FORMAT>'` reply, TAB-separated, parsed by a table.
 * Free-text formats (pane_title, pane_current_path…) are left out: they may contain a TAB.
 */
import { TmuxDriveError } from '../common/errors.js';

type Kind = 'int' | 'flag' | 'optionalInt' | 'intList';
type ValueOf<K extends Kind> = K extends 'int' ? number : K extends 'flag' ? boolean : K extends 'optionalInt' ? number | null : readonly number[];

/** Field order is the wire order; the type below is derived from it. */
const FIELDS = [
  { key: 'paneWidth', format: 'pane_width', kind: 'int' },
  { key: 'paneHeight', format: 'pane_height', kind: 'int' },
  // cursor_x equals pane_width in the pending-wrap state (after the last column was written).
  { key: 'cursorX', format: 'cursor_x', kind: 'int' },
  { key: 'cursorY', format: 'cursor_y', kind: 'int' },
  { key: 'cursorVisible', format: 'cursor_flag', kind: 'flag' },
  { key: 'alternateOn', format: 'alternate_on', kind: 'flag' },
  { key: 'alternateSavedX', format: 'alternate_saved_x', kind: 'int' },
  { key: 'alternateSavedY', format: 'alternate_saved_y', kind: 'int' },
  { key: 'scrollRegionUpper', format: 'scroll_region_upper', kind: 'int' },
  { key: 'scrollRegionLower', format: 'scroll_region_lower', kind: 'int' },
  { key: 'insert', format: 'insert_flag', kind: 'flag' },
  { key: 'keypadCursor', format: 'keypad_cursor_flag', kind: 'flag' },
  { key: 'keypad', format: 'keypad_flag', kind: 'flag' },
  { key: 'wrap', format: 'wrap_flag', kind: 'flag' },
  { key: 'origin', format: 'origin_flag', kind: 'flag' },
  { key: 'mouseStandard', format: 'mouse_standard_flag', kind: 'flag' },
  { key: 'mouseButton', format: 'mouse_button_flag', kind: 'flag' },
  // ?1003. Not mouse_any_flag: in 3.3a that one means "some mouse mode is on" (reference §5).
  { key: 'mouseAll', format: 'mouse_all_flag', kind: 'flag' },
  { key: 'mouseSgr', format: 'mouse_sgr_flag', kind: 'flag' },
  { key: 'historySize', format: 'history_size', kind: 'int' },
  { key: 'historyLimit', format: 'history_limit', kind: 'int' },
  { key: 'paneDead', format: 'pane_dead', kind: 'flag' },
  { key: 'paneDeadStatus', format: 'pane_dead_status', kind: 'optionalInt' },
  { key: 'panePid', format: 'pane_pid', kind: 'int' },
  { key: 'inMode', format: 'pane_in_mode', kind: 'flag' },
  // Tab stops as columns, "8,16,…" by default.
  { key: 'tabs', format: 'pane_tabs', kind: 'intList' },
] as const satisfies readonly { key: string; format: string; kind: Kind }[];

type Field = (typeof FIELDS)[number];
export type PaneState = { readonly [F in Field as F['key']]: ValueOf<F['kind']> };

export const PANE_STATE_FORMAT: string = FIELDS.map((f) => `#{${f.format}}`).join('\t');

function parseValue(kind: Kind, raw: string): number | boolean | null | readonly number[] {
  switch (kind) {
    case 'int':
      return raw === '' ? 0 : Number.parseInt(raw, 10);
    case 'flag':
      return raw === '1';
    case 'optionalInt':
      return raw === '' ? null : Number.parseInt(raw, 10);
    case 'intList':
      return raw === '' ? [] : raw.split(',').map((n) => Number.parseInt(n, 10));
  }
}

/** Parses one reply line to PANE_STATE_FORMAT (a trailing newline is tolerated). */
export function parsePaneState(line: string): PaneState {
  const values = line.replace(/\r?\n$/, '').split('\t');
  if (values.length !== FIELDS.length || values.slice(0, 4).some((v) => !/^\d+$/.test(v))) {
    throw new TmuxDriveError('TMUX_COMMAND_FAILED', 'tmux answered the pane state query in an unexpected shape', {
      fields: values.length,
      expected: FIELDS.length,
    });
  }
  const state: Record<string, unknown> = {};
  FIELDS.forEach((f, i) => {
    state[f.key] = parseValue(f.kind, values[i] ?? '');
  });
  return state as PaneState;
}
