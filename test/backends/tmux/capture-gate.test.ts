/**
 * The capture gate alone, driven by hand-made events in every order the control stream can give
 * them (pure: no tmux here; test/integration and test/emulator/tmux-fidelity run it against real
 * servers). `reply()` is a reply block ending (%end or %error), `out(x)` a pane %output chunk.
 */
import { describe, expect, it } from 'vitest';
import { TmuxCommandError, TmuxTimeoutError } from '../../../lib/common/errors.js';
import { CaptureGate } from '../../../backends/tmux/capture-gate.js';

const enc = new TextEncoder();
const dec = new TextDecoder();

function deferred<T>(): { promise: Promise<T>; resolve(value: T): void; reject(err: unknown): void } {
  let resolve!: (value: T) => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

function harness() {
  const delivered: string[] = [];
  const gate = new CaptureGate((data) => delivered.push(dec.decode(data)), 'gate-test');
  return {
    gate,
    delivered,
    out: (text: string) => gate.output(enc.encode(text)),
    reply: (n = 1) => {
      for (let i = 0; i < n; i++) gate.replyEnded();
    },
  };
}

describe('CaptureGate', () => {
  it('passes output straight through while no capture is in flight', () => {
    const { out, reply, delivered, gate } = harness();
    out('a');
    reply(3);
    out('b');
    expect(delivered).toEqual(['a', 'b']);
    expect(gate.inFlight).toBe(false);
  });

  it("drops output before the capture's reply (the capture has it), holds output after it until the rebuild is done, then releases it in order", async () => {
    const { gate, out, reply, delivered } = harness();
    const sent = deferred<string>();
    let seenInUse: string[] = [];
    const done = gate.bracket(2, 'drop', () => sent.promise, (replies) => {
      seenInUse = [...delivered];
      return `used ${replies}`;
    });
    expect(gate.inFlight).toBe(true);
    out('before-1');
    reply(); // an earlier command of the batch
    out('before-2');
    reply(); // the capture's reply: the grid as of here
    out('after-1');
    out('after-2');
    expect(delivered).toEqual([]);
    sent.resolve('replies');
    await expect(done).resolves.toBe('used replies');
    expect(seenInUse).toEqual([]); // nothing after the capture reached the listener before the rebuild
    expect(delivered).toEqual(['after-1', 'after-2']);
    expect(gate.inFlight).toBe(false);
    out('live');
    expect(delivered).toEqual(['after-1', 'after-2', 'live']);
  });

  it("passes output before the capture's reply when asked (a followed stream, a fidelity check) and still holds what follows it", async () => {
    const { gate, out, reply, delivered } = harness();
    const sent = deferred<void>();
    const done = gate.bracket(1, 'pass', () => sent.promise, () => {
      expect(delivered).toEqual(['before']);
    });
    out('before');
    reply();
    out('after');
    expect(delivered).toEqual(['before']);
    sent.resolve();
    await done;
    expect(delivered).toEqual(['before', 'after']);
  });

  it('counts the replies of commands already in flight before the batch (the caller adds them to replyAhead)', async () => {
    const { gate, out, reply, delivered } = harness();
    const sent = deferred<void>();
    // Two commands outstanding before the batch, the capture third in it: its reply is the fifth.
    const done = gate.bracket(2 + 3, 'drop', () => sent.promise, () => undefined);
    reply(4);
    out('inside the capture');
    reply();
    out('after');
    sent.resolve();
    await done;
    expect(delivered).toEqual(['after']);
  });

  it('a capture answered with %error: the error reply still counts, the batch fails, held output is released and the gate is live again', async () => {
    const { gate, out, reply, delivered } = harness();
    const sent = deferred<void>();
    let used = false;
    const done = gate.bracket(1, 'drop', () => sent.promise, () => {
      used = true;
    });
    out('dropped');
    reply(); // %error for the capture
    out('after the error');
    const failure = new TmuxCommandError('capture-pane -p', "can't find pane: %9");
    sent.reject(failure);
    await expect(done).rejects.toBe(failure);
    expect(used).toBe(false);
    expect(delivered).toEqual(['after the error']);
    out('live');
    expect(delivered).toEqual(['after the error', 'live']);
  });

  it('a batch that times out before its capture reply: output flows live again, late replies change nothing, and the next capture counts them', async () => {
    const { gate, out, reply, delivered } = harness();
    const sent = deferred<void>();
    const done = gate.bracket(2, 'drop', () => sent.promise, () => undefined);
    out('dropped while waiting');
    sent.reject(new TmuxTimeoutError('capture-pane -p', 5000));
    await expect(done).rejects.toMatchObject({ code: 'TMUX_TIMEOUT' });
    out('live after the timeout');
    reply(2); // tmux answers the timed-out commands after all
    out('still live');
    expect(delivered).toEqual(['live after the timeout', 'still live']);
    expect(gate.inFlight).toBe(false);

    // A capture sent while two timed-out replies were still due: they come first.
    const again = deferred<void>();
    const next = gate.bracket(2 + 1, 'drop', () => again.promise, () => undefined);
    reply(2);
    out('inside the second capture');
    reply();
    out('after the second capture');
    again.resolve();
    await next;
    expect(delivered).toEqual(['live after the timeout', 'still live', 'after the second capture']);
  });

  it('releases held output when the rebuild throws, and rethrows its error', async () => {
    const { gate, out, reply, delivered } = harness();
    const sent = deferred<void>();
    const broken = new Error('rebuild failed');
    const done = gate.bracket(1, 'drop', () => sent.promise, () => {
      throw broken;
    });
    reply();
    out('held');
    sent.resolve();
    await expect(done).rejects.toBe(broken);
    expect(delivered).toEqual(['held']);
    expect(gate.inFlight).toBe(false);
  });

  it('refuses a second capture while one is in flight, without disturbing the first', async () => {
    const { gate, out, reply, delivered } = harness();
    const sent = deferred<void>();
    const first = gate.bracket(1, 'drop', () => sent.promise, () => undefined);
    let secondSent = false;
    await expect(
      gate.bracket(1, 'pass', async () => {
        secondSent = true;
      }, () => undefined),
    ).rejects.toMatchObject({ code: 'TMUX_COMMAND_FAILED', context: { name: 'gate-test' } });
    expect(secondSent).toBe(false);
    out('still dropped');
    reply();
    out('held');
    sent.resolve();
    await first;
    expect(delivered).toEqual(['held']);
  });

  it('a send that throws at once (no client) leaves the gate live', async () => {
    const { gate, out, delivered } = harness();
    await expect(
      gate.bracket(1, 'drop', () => {
        throw new Error('not connected');
      }, () => undefined),
    ).rejects.toThrow('not connected');
    out('live');
    expect(delivered).toEqual(['live']);
    expect(gate.inFlight).toBe(false);
  });
});
