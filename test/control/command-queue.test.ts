import { describe, expect, it } from 'vitest';
import { CommandQueue } from '../../lib/control/command-queue.js';
import type { ReplyEvent } from '../../lib/control/parser.js';
import { ClosedError, TmuxCommandError, TmuxTimeoutError, UsageError } from '../../lib/common/errors.js';
import { ManualClock } from './manual-clock.js';
import { bytes } from './transcript.js';

let number = 100;
function reply(ok: boolean, ...lines: string[]): ReplyEvent {
  return { kind: 'reply', ok, time: 1700000000, number: number++, lines: lines.map(bytes) };
}

function setup(defaultTimeoutMs = 1000) {
  const writes: string[] = [];
  const clock = new ManualClock();
  const queue = new CommandQueue((data) => writes.push(data), clock, { defaultTimeoutMs });
  return { writes, clock, queue };
}

/** Settles pending promise callbacks. */
const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('CommandQueue', () => {
  it('writes each command on its own line and matches replies first in, first out', async () => {
    const { writes, queue } = setup();
    const a = queue.send('display-message -p a');
    const b = queue.send('display-message -p b');
    expect(writes).toEqual(['display-message -p a\n', 'display-message -p b\n']);
    expect(queue.pending).toBe(2);
    queue.onReply(reply(true, 'a'));
    queue.onReply(reply(true, 'b1', 'b2 é'));
    expect((await a).text()).toBe('a');
    expect((await b).text()).toBe('b1\nb2 é');
    expect(queue.pending).toBe(0);
  });

  it('rejects a %error reply with TmuxCommandError carrying tmux\'s text', async () => {
    const { queue } = setup();
    const failing = queue.send('select-window -t @99');
    queue.onReply(reply(false, "can't find window: @99"));
    await expect(failing).rejects.toBeInstanceOf(TmuxCommandError);
    await expect(failing).rejects.toMatchObject({ code: 'TMUX_COMMAND_FAILED', detail: "can't find window: @99" });
  });

  it('times a command out but keeps its slot, so the late reply is discarded and the next command gets its own', async () => {
    const { clock, queue } = setup(1000);
    const slow = queue.send('display-message -p slow');
    const outcome = slow.catch((e: unknown) => e);
    clock.advance(999);
    await flush();
    const next = queue.send('display-message -p next', { timeoutMs: 5000 });
    clock.advance(1);
    const error = await outcome;
    expect(error).toBeInstanceOf(TmuxTimeoutError);
    expect(error).toMatchObject({ code: 'TMUX_TIMEOUT', context: { command: 'display-message -p slow', timeoutMs: 1000 } });
    expect(queue.pending).toBe(2);
    queue.onReply(reply(true, 'slow'));
    queue.onReply(reply(true, 'next'));
    expect((await next).text()).toBe('next');
    expect(queue.pending).toBe(0);
    expect(clock.armed).toBe(0);
  });

  it('keeps typed text out of error messages', async () => {
    const { clock, queue } = setup(10);
    const p = queue.send("send-keys -t %1 -l -- 'hunter2'").catch((e: unknown) => e);
    const h = queue.send('send-keys -t %1 -H 68 75').catch((e: unknown) => e);
    clock.advance(10);
    expect(String((await p as Error).message)).not.toContain('hunter2');
    expect(String((await h as Error).message)).not.toContain('68 75');
  });

  it('writes a batch in ONE write and resolves with every reply in order', async () => {
    const { writes, queue } = setup();
    const batch = queue.sendBatch(['display-message -p 1', 'capture-pane -p', 'display-message -p 3']);
    expect(writes).toEqual(['display-message -p 1\ncapture-pane -p\ndisplay-message -p 3\n']);
    queue.onReply(reply(true, '1'));
    queue.onReply(reply(true, 'line a', 'line b'));
    queue.onReply(reply(true, '3'));
    expect((await batch).map((r) => r.text())).toEqual(['1', 'line a\nline b', '3']);
  });

  it('rejects a batch with its first failure and still consumes the later replies', async () => {
    const { queue } = setup();
    const batch = queue.sendBatch(['a-cmd', 'b-cmd', 'c-cmd']);
    const after = queue.send('d-cmd');
    queue.onReply(reply(true));
    queue.onReply(reply(false, 'no such thing'));
    queue.onReply(reply(true));
    queue.onReply(reply(true, 'd'));
    await expect(batch).rejects.toMatchObject({ detail: 'no such thing' });
    expect((await after).text()).toBe('d');
  });

  it('close() rejects everything pending and every later send with ClosedError CONTROL_CLOSED', async () => {
    const { clock, queue } = setup();
    const pending = [queue.send('one'), queue.sendBatch(['two', 'three'])];
    const cause = new ClosedError('CONTROL_CLOSED', 'tmux exited');
    queue.close(cause);
    for (const p of pending) await expect(p).rejects.toBe(cause);
    expect(queue.pending).toBe(0);
    expect(clock.armed).toBe(0);
    await expect(queue.send('later')).rejects.toMatchObject({ code: 'CONTROL_CLOSED' });
    await expect(queue.sendBatch(['later'])).rejects.toBeInstanceOf(ClosedError);
    queue.onReply(reply(true)); // a straggler after close is ignored
  });

  it('refuses lines that would not produce exactly one reply block', async () => {
    const { writes, queue } = setup();
    for (const bad of ['display-message -p a\ndisplay-message -p b', '', '   ', '# comment', 'x\0y']) {
      await expect(queue.send(bad)).rejects.toBeInstanceOf(UsageError);
    }
    await expect(queue.sendBatch(['ok', 'two\nlines'])).rejects.toMatchObject({ code: 'BAD_ARGUMENT' });
    expect(writes).toEqual([]);
    expect(queue.pending).toBe(0);
  });

  it('rejects the commands of a failed write and leaves the queue usable', async () => {
    const clock = new ManualClock();
    let fail = true;
    const writes: string[] = [];
    const queue = new CommandQueue((data) => {
      if (fail) throw new Error('EPIPE');
      writes.push(data);
    }, clock);
    await expect(queue.send('one')).rejects.toThrow('EPIPE');
    expect(queue.pending).toBe(0);
    fail = false;
    const two = queue.send('two');
    queue.onReply(reply(true, '2'));
    expect((await two).text()).toBe('2');
  });

  it('ignores a reply nobody is waiting for', () => {
    const { queue } = setup();
    queue.onReply(reply(true, 'unexpected'));
    expect(queue.pending).toBe(0);
  });
});
