/**
 * The encoders against a REAL tmux 3.3a: commands go through the library's own control-mode stack
 * and a raw-mode receiver in the pane records the bytes it gets.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY_NAMES, normalizeKey } from '../../lib/control/encode.js';
import { displayMessage, encodeSendHex, encodeSendKeys, encodeSendText } from '../../lib/control/tmux-commands.js';
import { TmuxHarness } from './tmux-harness.js';
import { CORPUS } from './corpus.js';

let tmux: TmuxHarness;
beforeAll(async () => {
  tmux = await TmuxHarness.start();
});
afterAll(async () => {
  await tmux?.stop();
});

describe('encodeSendText through tmux 3.3a', () => {
  it.each(CORPUS)('delivers %j byte-exact', async (text) => {
    const receiver = await tmux.openReceiver();
    expect(await tmux.deliver(receiver, encodeSendText(receiver.pane, text))).toEqual(Buffer.from(text));
  });

  it('delivers the whole corpus and every byte 0x00-0x7f in one go; the server survives and nothing was executed', async () => {
    const ascii = String.fromCharCode(...Array.from({ length: 128 }, (_, i) => i));
    const text = CORPUS.join('|') + ascii + 'x'.repeat(20_000);
    const receiver = await tmux.openReceiver();
    expect(await tmux.deliver(receiver, encodeSendText(receiver.pane, text))).toEqual(Buffer.from(text));
    expect((await tmux.command("display-message -p '#{session_name}'")).text()).toBe('main');
    for (const dir of [tmux.dir, process.cwd()]) {
      expect(existsSync(join(dir, 'pwned'))).toBe(false);
      expect(existsSync(join(dir, 'pwned2'))).toBe(false);
    }
  });

  it('delivers 1 MB of mixed text', async () => {
    const unit = 'The quick brown fox; é 中 😀 \'quoted\' "double" \\ $HOME #{x}\t\r\n\x1b[0m';
    const text = unit.repeat(Math.ceil(1_000_000 / Buffer.byteLength(unit)));
    const receiver = await tmux.openReceiver();
    const received = await tmux.deliver(receiver, encodeSendText(receiver.pane, text), 60_000);
    expect(received.length).toBe(Buffer.byteLength(text));
    expect(received.equals(Buffer.from(text))).toBe(true);
  });
});

describe('encodeSendHex through tmux 3.3a', () => {
  it('delivers every byte 0x00-0xff, NUL and 0xff included', async () => {
    const all = Uint8Array.from({ length: 256 }, (_, i) => i);
    const receiver = await tmux.openReceiver();
    expect(await tmux.deliver(receiver, encodeSendHex(receiver.pane, all))).toEqual(Buffer.from(all));
  });
});

describe('encodeSendKeys through tmux 3.3a', () => {
  it.each([
    ['Enter', '\r'],
    ['C-c', '\x03'],
    ['S-Tab', '\x1b[Z'],
    ['BTab', '\x1b[Z'],
    ['Up', '\x1b[A'],
    ['F5', '\x1b[15~'],
    ['C-M-Left', '\x1b[1;7D'],
    ['M-x', '\x1bx'],
    ['C-\\', '\x1c'],
    ['C-Space', '\0'],
    ['BSpace', '\x7f'],
    ['Escape', '\x1b'],
    ['Tab', '\t'],
    [';', ';'],
    ['#', '#'],
    ["'", "'"],
    ['-', '-'],
    ['é', 'é'],
  ])('%j arrives as %j', async (key, bytes) => {
    const receiver = await tmux.openReceiver();
    expect((await tmux.deliver(receiver, [encodeSendKeys(receiver.pane, [key])])).toString('latin1')).toBe(Buffer.from(bytes).toString('latin1'));
  });

  it('every accepted name and modifier mix makes bytes, never nothing and never the name as text', async () => {
    const keys: string[] = [];
    for (const [name, allowed] of Object.entries(KEY_NAMES)) {
      const mixes = [''].concat(...[...allowed].map((m) => [`${m}-`]));
      if (allowed.length > 1) mixes.push(`${[...allowed].join('-')}-`);
      if (allowed === 'CMS') mixes.push('C-M-', 'C-S-', 'M-S-');
      for (const mix of mixes) keys.push(mix + name);
    }
    for (const c of '@ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz[\\]^_?') keys.push(`C-${c}`, `C-M-${c}`);
    keys.push('S-Tab', 'M-S-Tab', 'M--', 'M-;', 'M-é');
    const receiver = await tmux.openReceiver();
    // A 0xff byte (no key makes one) between keys lets the recording be split back per key.
    const commands = keys.flatMap((key) => [...encodeSendHex(receiver.pane, Uint8Array.of(0xff)), encodeSendKeys(receiver.pane, [key])]);
    const received = (await tmux.deliver(receiver, commands)).toString('latin1').split('\xff').slice(1);
    const produced = Object.fromEntries(keys.map((key, i) => [key, received[i]]));
    for (const key of keys) {
      const base = normalizeKey(key).replace(/^([CMS]-)+/, '');
      expect(produced[key], key).not.toBe('');
      // tmux types an unknown name as text: its modifier prefix or the base name would show up.
      expect(produced[key], key).not.toMatch(/[CMS]-/);
      if (base.length > 1) expect(produced[key], key).not.toContain(base);
    }
    expect(received).toHaveLength(keys.length);
  });
});

describe('displayMessage through tmux 3.3a', () => {
  it('expands a fixed format', async () => {
    const reply = await tmux.command(displayMessage('%0', '#{pane_id}\t#{session_name}'));
    expect(reply.text()).toBe('%0\tmain');
  });
});
