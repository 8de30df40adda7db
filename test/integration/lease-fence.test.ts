/**
 * One drive, one driver, for every keystroke: the lease check before each key reads the lease row
 * only when another connection committed since it last did (journal/leases.ts). Here a second host
 * takes the lease from a live first host (as a host would from one it takes for dead: the row's
 * holder rewritten by a third connection, then a takeover) after the first typed several keys, so
 * the first host's check has remembered its token; its next keystroke must be refused and never
 * reach the program. Real tmux, real bash, real SQLite file.
 *
 * The check reads SQLite only when the WAL-index header changed since its last full check
 * (journal/wal-index-header.ts): the later cases make the other host's lease commit the ONLY change
 * since the last key, then add a WAL restart (a TRUNCATE checkpoint) after it.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { Journal, currentHolder } from '../../journal/journal.js';
import type { Session } from '../../lib/index.js';
import { allow, openDriver, type TestDriver } from '../helpers.js';

let t: TestDriver | undefined;
const promptRow = (s: Session): string | undefined => s.read().content.split('\n').find((l) => l.startsWith('$ '))?.trimEnd();
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
});

describe('the lease fence before each keystroke', () => {
  it("a second host takes the lease; the first host's next keystroke is refused with LEASE_LOST and not delivered", async () => {
    t = await openDriver([allow('bash', '/bin/bash', { env: { PS1: '$ ' } })]);
    const s = await t.driver.create({ allowId: 'bash', args: ['--norc', '--noprofile'], name: 'fenced' });
    await s.wait({ forText: '$ ' });
    for (const key of ['a', 'b', 'c']) await s.sendText(key);
    // Our own echo is not what a text wait waits for: the screen is read once it settles.
    await s.wait({ forIdleMs: 200 });
    expect(promptRow(s)).toBe('$ abc');

    // The first host, as another host would wrongly see it: dead (another start time).
    const raw = new Database(join(t.dataDir, 'journal.sqlite3'));
    try {
      raw.prepare('UPDATE leases SET holder_start = holder_start + 7 WHERE session_id = ?').run(s.id);
    } finally {
      raw.close();
    }
    const second = Journal.open(t.dataDir);
    try {
      const taken = second.acquireLease(s.id, currentHolder());
      expect(taken.takenOverFrom).toBeDefined();
      await expect(s.sendText('Z')).rejects.toMatchObject({ code: 'LEASE_LOST' });
      await expect(s.sendKeys('Enter')).rejects.toMatchObject({ code: 'LEASE_LOST' });
      // Nothing of the refused keys reached bash.
      await new Promise((r) => setTimeout(r, 300));
      expect(promptRow(s)).toBe('$ abc');
    } finally {
      second.close();
    }
  });

  /** A drive typed into (its check remembered), the lease row made to look dead, then one more key. */
  async function typedThenMarkedDead(name: string): Promise<Session> {
    t = await openDriver([allow('bash', '/bin/bash', { env: { PS1: '$ ' } })]);
    const s = await t.driver.create({ allowId: 'bash', args: ['--norc', '--noprofile'], name });
    await s.wait({ forText: '$ ' });
    for (const key of ['a', 'b']) await s.sendText(key);
    const raw = new Database(join(t.dataDir, 'journal.sqlite3'));
    try {
      raw.prepare('UPDATE leases SET holder_start = holder_start + 7 WHERE session_id = ?').run(s.id);
    } finally {
      raw.close();
    }
    // This key's check sees that commit (same token: delivered) and remembers the header after it.
    await s.sendText('c');
    await s.wait({ forIdleMs: 200 });
    expect(promptRow(s)).toBe('$ abc');
    return s;
  }

  async function expectRefused(s: Session): Promise<void> {
    await expect(s.sendText('Z')).rejects.toMatchObject({ code: 'LEASE_LOST' });
    await new Promise((r) => setTimeout(r, 300));
    expect(promptRow(s)).toBe('$ abc');
  }

  it("the other host's lease commit is the only change since the last key: refused", async () => {
    const s = await typedThenMarkedDead('fenced-only');
    const second = Journal.open(t!.dataDir);
    try {
      expect(second.acquireLease(s.id, currentHolder()).takenOverFrom).toBeDefined();
      await expectRefused(s);
    } finally {
      second.close();
    }
  });

  it('the WAL restarted (a TRUNCATE checkpoint) after the takeover and before the next key: refused', async () => {
    const s = await typedThenMarkedDead('fenced-ckpt');
    const second = Journal.open(t!.dataDir);
    try {
      expect(second.acquireLease(s.id, currentHolder()).takenOverFrom).toBeDefined();
      const raw = new Database(join(t!.dataDir, 'journal.sqlite3'));
      try {
        expect((raw.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[])[0]?.busy).toBe(0);
      } finally {
        raw.close();
      }
      await expectRefused(s);
    } finally {
      second.close();
    }
  });
});
