/**
 * The idle reaper and people (issue 13, seed 000): a finished, static drive is reaped at
 * worker.idleTtlMs and its outcome names the cap; a drive parked on a prompt that waits for a
 * person (an escalated dialog: needs-you) is never reaped by idleness, until a caller answers;
 * `idleTtlMs: 0` and `heartbeatNotifyMs: 0` are accepted and mean off.
 */
import { describe, expect, it } from 'vitest';
import type { DriveOutcome } from '../../lib/session/session.js';
import { allow, openDriver } from '../helpers.js';

const BASH = ['--norc', '--noprofile'];
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const TTL_MS = 1500;

describe('the idle reaper and people', () => {
  it('reaps an idle shell naming the cap, never a drive that waits on a needs-you dialog; an answer makes it reapable again', async () => {
    const t = await openDriver([allow('bash', '/bin/bash', { env: { PS1: '$ ' } })], { worker: { idleTtlMs: TTL_MS, stuckMs: 60_000 } });
    try {
      const idle = await t.driver.create({ allowId: 'bash', args: BASH, name: 'idle' });
      const asks = await t.driver.create({ allowId: 'bash', args: BASH, name: 'asks' });
      const outcomes = new Map<string, DriveOutcome>();
      for (const s of [idle, asks]) s.on('outcome', (o) => outcomes.set(s.id, o));
      for (const s of [idle, asks]) await s.wait({ forText: '$ ' });
      // A destructive dialog: the safe-only policy escalates it (needs-you) and the drive parks.
      await asks.sendText('whiptail --title Confirm --yesno "Delete all files?" 10 40; echo "rc=$?"', { submit: true });
      await asks.wait({ forText: '<No>' });
      await asks.wait({ forIdleMs: 600 });
      expect(asks.status().dialog).toMatchObject({ kind: 'destructive' });
      await sleep(TTL_MS + 2500);
      const states = Object.fromEntries(t.driver.list().map((i) => [i.id, i]));
      expect(states.idle).toMatchObject({ state: 'failed', reason: 'evicted:worker.idlettlms' });
      expect(outcomes.get('idle')).toMatchObject({ outcome: 'failed', reason: 'evicted:worker.idlettlms' });
      expect(t.driver.events('idle').find((e) => e.kind === 'outcome')?.tags).toMatchObject({ outcome: 'failed', reason: 'evicted:worker.idlettlms' });
      expect(states.asks?.state).toBe('live');
      expect(outcomes.get('asks')).toMatchObject({ outcome: 'needs-you', reason: 'dialog_destructive' });
      // The person answers; the shell then idles at its prompt like any finished drive.
      await asks.sendKeys('Escape');
      await asks.wait({ forText: 'rc=' });
      await sleep(TTL_MS + 2500);
      expect(t.driver.list().find((i) => i.id === 'asks')).toMatchObject({ state: 'failed', reason: 'evicted:worker.idlettlms' });
    } finally {
      await t.cleanup();
    }
  });

  it('idleTtlMs: 0 and heartbeatNotifyMs: 0 are accepted and mean off', async () => {
    const t = await openDriver([allow('bash', '/bin/bash', { env: { PS1: '$ ' } })], { worker: { idleTtlMs: 0, stuckMs: 60_000 }, drive: { heartbeatNotifyMs: 0, notify: 'all' } });
    try {
      expect(t.driver.config.worker.idleTtlMs).toBe(0);
      expect(t.driver.config.drive.heartbeatNotifyMs).toBe(0);
      const s = await t.driver.create({ allowId: 'bash', args: BASH, name: 'stays' });
      let beats = 0;
      s.on('heartbeat', () => beats++);
      await s.wait({ forText: '$ ' });
      await sleep(2000);
      expect(t.driver.list().find((i) => i.id === 'stays')?.state).toBe('live');
      expect(beats).toBe(0);
    } finally {
      await t.cleanup();
    }
  });
});
