/**
 * The output of a keystroke send is kept while its call has not settled, for a text wait begun
 * right after the call (InputGate.outputOfSend), up to SEND_OUTPUT_KEPT_BYTES; past that it is
 * all let go (never a part of it: a wait would then read a middle without its start). The cap is
 * reached only when a program prints more than 256 KiB between the keys' delivery and the call
 * settling, which a real tmux (the call settles at its answer, before the echo) or pty does not do
 * on demand: here the backend is a stand-in whose send settles when the test says, with the real
 * InputGate, DriveSignals and Transcript. The real path (bash, python and vim through tmux and
 * spawn) is wait-after-send.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../backends/process/system-clock.js';
import type { DriveBackend } from '../../lib/session/backend.js';
import { DriveSignals } from '../../lib/session/drive-signals.js';
import { InputGate, SEND_OUTPUT_KEPT_BYTES } from '../../lib/session/input-gate.js';
import { Transcript } from '../../lib/session/transcript.js';

/** A gate over a stand-in backend whose sends settle when `settle()` is called. */
function gateWithHeldSend(): { gate: InputGate; send: () => Promise<void>; settle: () => void } {
  const signals = new DriveSignals('cap', new Transcript(1 << 20), 0);
  let release: (() => void) | undefined;
  signals.backend = {
    sendText: () =>
      new Promise<void>((resolve) => {
        release = resolve;
      }),
  } as unknown as DriveBackend;
  const gate = new InputGate(signals, systemClock, { beforeInput: () => undefined, onAction: () => undefined, limits: {} });
  return {
    gate,
    send: () => gate.deliver('sendText', 'x', {}, true, (backend) => backend.sendText('x', {} as never)),
    settle: () => release?.(),
  };
}

const chunk = (bytes: number, fill: number): Uint8Array => new Uint8Array(bytes).fill(fill);

describe("a send's kept output", () => {
  it('keeps every chunk up to the cap, in order, while the call has not settled', async () => {
    const { gate, send, settle } = gateWithHeldSend();
    const sent = send();
    const chunks = [chunk(100_000, 0x61), chunk(100_000, 0x62), chunk(SEND_OUTPUT_KEPT_BYTES - 200_000, 0x63)];
    for (const c of chunks) gate.afterOutput(c);
    // Exactly at the cap: still whole.
    expect(gate.outputOfSend()).toEqual(chunks);
    settle();
    await sent;
    // Settled: what was kept stays readable for the wait begun right after the call.
    expect(gate.outputOfSend()).toEqual(chunks);
  });

  it('one byte past the cap lets all of it go (never a part): the wait then reads the screen', async () => {
    const { gate, send, settle } = gateWithHeldSend();
    const sent = send();
    gate.afterOutput(chunk(SEND_OUTPUT_KEPT_BYTES, 0x61));
    expect(gate.outputOfSend()).toHaveLength(1);
    gate.afterOutput(chunk(1, 0x62));
    expect(gate.outputOfSend()).toBeUndefined();
    // Nothing is kept again until the next send: a later chunk does not start a new, headless list.
    gate.afterOutput(chunk(10, 0x63));
    expect(gate.outputOfSend()).toBeUndefined();
    settle();
    await sent;
    expect(gate.outputOfSend()).toBeUndefined();
  });

  it('the next send starts afresh, and output after a settled call lets the kept output go', async () => {
    const { gate, send, settle } = gateWithHeldSend();
    const first = send();
    gate.afterOutput(chunk(SEND_OUTPUT_KEPT_BYTES + 1, 0x61));
    expect(gate.outputOfSend()).toBeUndefined();
    settle();
    await first;
    const second = send();
    const echo = chunk(1, 0x78);
    gate.afterOutput(echo);
    expect(gate.outputOfSend()).toEqual([echo]);
    settle();
    await second;
    expect(gate.outputOfSend()).toEqual([echo]);
    // Output after the call settled is not the send's: the kept output is no longer all of it.
    gate.afterOutput(chunk(5, 0x79));
    expect(gate.outputOfSend()).toBeUndefined();
  });
});
