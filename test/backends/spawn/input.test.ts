/**
 * Byte-exact input through a spawn drive, what only the spawn backend does itself: a receiver in
 * raw tty mode records every byte the pty delivers. A paste is bracketed exactly when the program
 * asked for it; keys arrive as tmux 3.3a would send them, in the mode the program set; text and
 * keys keep their order. The byte corpus, 20 KB typed and 1 MB pasted run through every backend
 * in one parameterised suite (test/integration/input.test.ts).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { keyBytes } from '../../../backends/spawn/key-bytes.js';
import { openSpawn, type SpawnDrive } from './spawn-harness.js';
import { PWNED_FILES, RAW_RECEIVER } from '../../byte-corpus.js';

const drives: SpawnDrive[] = [];
afterAll(async () => {
  for (const d of drives) await d.close().catch(() => undefined);
});

interface Receiver {
  readonly drive: SpawnDrive;
  /** Sends the sentinel, waits for DONE, and returns what arrived before the sentinel. */
  finish(): Promise<Buffer>;
}

async function receiver(modes = ''): Promise<Receiver> {
  const sentinel = `<<END-${randomBytes(4).toString('hex')}>>`;
  const drive = await openSpawn([], {
    cols: 120,
    rows: 30,
    withModes: true,
    argvFor: (dir) => ['/usr/bin/env', '--', '/usr/bin/python3', '-c', RAW_RECEIVER, join(dir, 'recv.bin'), sentinel, modes],
  });
  drives.push(drive);
  expect((await drive.session.wait({ forText: 'READY', timeoutMs: 10_000 })).outcome).toBe('text');
  return {
    drive,
    async finish() {
      await drive.session.sendText(sentinel, { paste: 'never' });
      expect((await drive.session.wait({ forText: 'DONE', timeoutMs: 60_000 })).outcome).toBe('text');
      const got = readFileSync(join(drive.dir, 'recv.bin'));
      await drive.close();
      return got.subarray(0, got.length - Buffer.byteLength(sentinel));
    },
  };
}

async function roundTrip(text: string, paste: 'auto' | 'always' | 'never', modes = ''): Promise<Buffer> {
  const r = await receiver(modes);
  await r.drive.session.sendText(text, { paste });
  return r.finish();
}

describe('byte-exact input through a spawn drive', () => {
  it('delivers a lone surrogate as U+FFFD, as keys and as a paste', async () => {
    const text = 'a\ud800b';
    expect(await roundTrip(text, 'never')).toEqual(Buffer.from(text, 'utf8'));
    expect(await roundTrip(text, 'always')).toEqual(Buffer.from(text, 'utf8'));
  });

  it('brackets a paste when the program enabled bracketed paste, and only a paste', async () => {
    const text = 'two\nlines';
    expect((await roundTrip(text, 'always', '\x1b[?2004h')).toString('latin1')).toBe(`\x1b[200~${text}\x1b[201~`);
    expect((await roundTrip(text, 'never', '\x1b[?2004h')).toString('latin1')).toBe(text);
    expect((await roundTrip(text, 'always', '\x1b[?2004h\x1b[?2004l')).toString('latin1')).toBe(text);
  });

  it('sends keys as tmux 3.3a does, following DECCKM and DECKPAM as the program set them', async () => {
    const keys = ['Up', 'Left', 'C-Up', 'Home', 'F1', 'F5', 'M-x', 'C-c', 'C-M-Left', 'Enter', 'Tab', 'BTab', 'S-Tab', 'BSpace', 'Escape', 'C-Space', 'KP5', 'KPEnter', 'é'];
    const expected = (modes: { applicationCursorKeys: boolean; applicationKeypad: boolean }): Buffer => Buffer.concat(keys.map((k) => keyBytes(k, modes)));

    const normal = await receiver();
    await normal.drive.session.sendKeys(keys);
    expect(await normal.finish()).toEqual(expected({ applicationCursorKeys: false, applicationKeypad: false }));

    const app = await receiver('\x1b[?1h\x1b=');
    await app.drive.session.sendKeys(keys);
    const got = await app.finish();
    expect(got).toEqual(expected({ applicationCursorKeys: true, applicationKeypad: true }));
    expect(got.toString('latin1').startsWith('\x1bOA\x1bOD\x1b[1;5A')).toBe(true);
  });

  it('keeps the order of text and keys sent without waiting in between', async () => {
    const r = await receiver('\x1b[?2004h');
    const s = r.drive.session;
    await Promise.all([s.sendText('a', { paste: 'never' }), s.sendKeys(['Up']), s.sendText('b\nc', { paste: 'always' }), s.sendKeys(['Enter'])]);
    expect((await r.finish()).toString('latin1')).toBe('a\x1b[A\x1b[200~b\nc\x1b[201~\r');
  });

  it('executed nothing on the way', () => {
    for (const f of PWNED_FILES) expect(existsSync(f)).toBe(false);
  });
});
