/** The console's typed input as gate verbs: text runs, tmux key names, terminal answers dropped. */
import { describe, expect, it } from 'vitest';
import { mapInput } from '../../lib/console/key-map.js';
import { normalizeKey } from '../../lib/control/encode.js';

describe('mapInput', () => {
  it('keeps printable runs as text and names the keys between them', () => {
    expect(mapInput('echo hi\r')).toEqual([{ kind: 'text', text: 'echo hi' }, { kind: 'keys', keys: ['Enter'] }]);
    expect(mapInput('ab\x7f\x7fc')).toEqual([{ kind: 'text', text: 'ab' }, { kind: 'keys', keys: ['BSpace', 'BSpace'] }, { kind: 'text', text: 'c' }]);
    expect(mapInput('é😀')).toEqual([{ kind: 'text', text: 'é😀' }]);
  });

  it('names cursor, editing, function and modified keys as tmux does', () => {
    const keys = (data: string): readonly string[] => (mapInput(data)[0] as { keys: readonly string[] }).keys;
    expect(keys('\x1b[A\x1bOB\x1b[C\x1b[D')).toEqual(['Up', 'Down', 'Right', 'Left']);
    expect(keys('\x1b[3~\x1b[5~\x1b[6~\x1b[2~')).toEqual(['DC', 'PageUp', 'PageDown', 'IC']);
    expect(keys('\x1bOP\x1b[15~\x1b[24~')).toEqual(['F1', 'F5', 'F12']);
    expect(keys('\x1b[1;5D\x1b[1;2A\x1b[3;5~\x1b[Z')).toEqual(['C-Left', 'S-Up', 'C-DC', 'BTab']);
    expect(keys('\x03\x01\t\x1b')).toEqual(['C-c', 'C-a', 'Tab', 'Escape']);
    expect(keys('\x1bx\x1b\r\x1b\x01')).toEqual(['M-x', 'M-Enter', 'C-M-a']);
    // Every name is one tmux takes (normalizeKey throws UNKNOWN_KEY_NAME otherwise).
    for (const data of ['\x1b[1;5D', '\x1b[1;2A', '\x1b[3;5~', '\x1b[Z', '\x03', '\x1bx', '\x1b\r', '\x1b\x01', '\x00', '\x1f']) {
      for (const k of keys(data)) expect(() => normalizeKey(k)).not.toThrow();
    }
  });

  it('drops what is not a keystroke: a terminal answering a query, focus and mouse reports', () => {
    expect(mapInput('\x1b[?1;2c\x1b[>0;276;0c\x1b[I\x1b[O\x1b[<0;10;5M')).toEqual([]);
    expect(mapInput('a\x1b[?62;22cb')).toEqual([{ kind: 'text', text: 'ab' }]);
    expect(mapInput('\x1b[')).toEqual([]);
    // An X10 mouse report's three bytes are printable: they must not be typed.
    expect(mapInput('a\x1b[M !!b')).toEqual([{ kind: 'text', text: 'ab' }]);
  });
});
