import { describe, expect, it } from 'vitest';
import { PANE_STATE_FORMAT, parsePaneState } from '../../lib/control/pane-state.js';
import { FRESH_SHELL } from './pane-state-fixture.js';

describe('pane state formats', () => {
  it('asks for every field with one TAB-separated format, mouse_all_flag for ?1003', () => {
    const fields = PANE_STATE_FORMAT.split('\t');
    expect(fields.every((f) => /^#\{[a-z_]+\}$/.test(f))).toBe(true);
    expect(fields).toContain('#{mouse_all_flag}');
    expect(fields).not.toContain('#{mouse_any_flag}');
    expect(fields.slice(0, 3)).toEqual(['#{pane_width}', '#{pane_height}', '#{cursor_x}']);
  });

  it('parses a reply into numbers, booleans, null and lists', () => {
    expect(parsePaneState(`${FRESH_SHELL}\n`)).toMatchObject({
      paneWidth: 20,
      paneHeight: 5,
      cursorX: 2,
      cursorVisible: true,
      alternateOn: false,
      scrollRegionLower: 4,
      wrap: true,
      historyLimit: 1000,
      paneDead: false,
      paneDeadStatus: null,
      panePid: 4242,
      tabs: [8, 16],
    });
  });

  it('rejects a reply of another shape with a typed error', () => {
    expect(() => parsePaneState('80\t24')).toThrow(expect.objectContaining({ code: 'TMUX_COMMAND_FAILED' }));
  });
});
