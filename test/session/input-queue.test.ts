/**
 * The per-drive input queue on its own (pure: units are plain promises here; the real-bash test
 * through a serving host is test/serve/input-serialized.test.ts): order, one unit at a time, the
 * bounds (LIMIT_REACHED past maxWaiting, INPUT_BUSY past the turn timeout), an abort's own typed
 * reason, and a unit that throws or rejects never wedges the drive's input.
 */
import { describe, expect, it } from 'vitest';
import { InputQueue, INPUT_QUEUE_LIMITS } from '../../lib/session/input-queue.js';
import { TmuxDriveError } from '../../lib/common/errors.js';

function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}

describe('InputQueue', () => {
  it('runs units one at a time in the order asked; uncontended, a unit starts in the caller\'s tick', async () => {
    const q = new InputQueue('d');
    const log: string[] = [];
    const first = gate();
    const p1 = q.run('a', async () => {
      log.push('a:start');
      await first.promise;
      log.push('a:end');
    });
    expect(log).toEqual(['a:start']); // synchronously: no turn to wait for
    const p2 = q.run('b', async () => void log.push('b'));
    const p3 = q.run('c', async () => void log.push('c'));
    expect(q.waitingCount).toBe(2);
    await new Promise((r) => setTimeout(r, 10));
    expect(log).toEqual(['a:start']);
    first.open();
    await Promise.all([p1, p2, p3]);
    expect(log).toEqual(['a:start', 'a:end', 'b', 'c']);
    expect(q.waitingCount).toBe(0);
  });

  it('a unit that throws or rejects frees the turn; its caller gets its error', async () => {
    const q = new InputQueue('d');
    const thrown = q.run('t', () => {
      throw new TmuxDriveError('BAD_ARGUMENT', 'sync');
    });
    const rejected = q.run('r', () => Promise.reject(new TmuxDriveError('SESSION_EXITED', 'async')));
    const after = q.run('ok', async () => 42);
    await expect(thrown).rejects.toMatchObject({ code: 'BAD_ARGUMENT' });
    await expect(rejected).rejects.toMatchObject({ code: 'SESSION_EXITED' });
    await expect(after).resolves.toBe(42);
  });

  it('bounded: INPUT_BUSY past the turn timeout, LIMIT_REACHED past maxWaiting, and the abort reason an operator hold gives', async () => {
    const q = new InputQueue('d');
    const hold = gate();
    const running = q.run('long', () => hold.promise);
    await expect(q.run('late', async () => 'no', { turnTimeoutMs: 20 })).rejects.toMatchObject({ code: 'INPUT_BUSY' });
    const ac = new AbortController();
    const aborted = q.run('held-off', async () => 'no', { signal: ac.signal });
    ac.abort(new TmuxDriveError('OPERATOR_HOLD', 'an operator holds it'));
    await expect(aborted).rejects.toMatchObject({ code: 'OPERATOR_HOLD' });
    const plain = new AbortController();
    const cancelled = q.run('cancelled', async () => 'no', { signal: plain.signal });
    plain.abort();
    await expect(cancelled).rejects.toMatchObject({ code: 'ABORTED' });
    const waiters = Array.from({ length: INPUT_QUEUE_LIMITS.maxWaiting }, (_, i) => q.run(`w${i}`, async () => i));
    await expect(q.run('one-too-many', async () => -1)).rejects.toMatchObject({ code: 'LIMIT_REACHED' });
    hold.open();
    await running;
    expect(await Promise.all(waiters)).toEqual(Array.from({ length: INPUT_QUEUE_LIMITS.maxWaiting }, (_, i) => i));
  });
});
