/**
 * The spawn backend's key table against what tmux 3.3a itself writes to a pane
 * (fixtures/tmux33a-keys.json, recorded by fixtures/record-tmux-keys.py from a real server), in
 * normal mode and under DECCKM / DECKPAM: a program gets the same bytes under either backend.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { KEY_NAMES } from '../../../lib/control/encode.js';
import { keyBytes, type KeyModes } from '../../../backends/spawn/key-bytes.js';

interface Fixture {
  readonly tmux: string;
  readonly modes: Record<'normal' | 'cursor' | 'keypad' | 'both', Record<string, string>>;
}

const fixture = JSON.parse(readFileSync(new URL('./fixtures/tmux33a-keys.json', import.meta.url), 'utf8')) as Fixture;
const MODES: Record<keyof Fixture['modes'], KeyModes> = {
  normal: { applicationCursorKeys: false, applicationKeypad: false },
  cursor: { applicationCursorKeys: true, applicationKeypad: false },
  keypad: { applicationCursorKeys: false, applicationKeypad: true },
  both: { applicationCursorKeys: true, applicationKeypad: true },
};

describe('keyBytes', () => {
  it('was checked against tmux 3.3a', () => {
    expect(fixture.tmux).toBe('tmux 3.3a');
  });

  for (const [mode, modes] of Object.entries(MODES) as Array<[keyof Fixture['modes'], KeyModes]>) {
    it(`sends what tmux 3.3a sends for every recorded key (${mode} mode)`, () => {
      const expected = fixture.modes[mode];
      const got = Object.fromEntries(Object.keys(expected).map((k) => [k, Buffer.from(keyBytes(k, modes)).toString('hex')]));
      expect(got).toEqual(expected);
    });
  }

  it('the recording covers every key name and every modifier mix the encoder accepts', () => {
    const recorded = new Set(Object.keys(fixture.modes.normal));
    for (const [name, allowed] of Object.entries(KEY_NAMES)) {
      const mixes = [''];
      if (allowed.includes('M')) mixes.push('M-');
      if (allowed.includes('C')) mixes.push('C-', 'C-M-');
      if (allowed === 'CMS') mixes.push('S-', 'C-S-', 'M-S-', 'C-M-S-');
      for (const mix of mixes) expect(recorded.has(mix + name), mix + name).toBe(true);
    }
  });

  it('maps S-Tab to BTab and takes modifiers in any order, as the tmux encoder does', () => {
    expect(Buffer.from(keyBytes('S-Tab')).toString('latin1')).toBe('\x1b[Z');
    expect(Buffer.from(keyBytes('M-C-Left')).toString('latin1')).toBe('\x1b[1;7D');
    expect(Buffer.from(keyBytes('S-M-C-Up')).toString('latin1')).toBe('\x1b[1;8A');
  });

  it('rejects what tmux would type as text or send nothing for, with UNKNOWN_KEY_NAME', () => {
    for (const bad of ['Entr', 'enter', 'kill-server', 'C-Enter', 'S-Enter', 'C-1', 'S-a', 'C-C-c', 'Foo', '', 'ab']) {
      expect(() => keyBytes(bad), bad).toThrow(expect.objectContaining({ code: 'UNKNOWN_KEY_NAME' }));
    }
  });
});
