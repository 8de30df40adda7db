/**
 * The pause probe's timing alone, on a manual clock. What tmux does is in the real-tmux tests:
 * test/backends/tmux/stranded-pause.test.ts (the %pause tmux 3.3a strands, and a drive that recovers
 * from it), test/integration/pane-pause.test.ts (a pause tmux announces).
 */
import { describe, expect, it } from 'vitest';
import { PauseProbe } from '../../../backends/tmux/pause-probe.js';
import { ManualClock } from '../../control/manual-clock.js';

function setup(): { clock: ManualClock; probe: PauseProbe; sent: () => number; answer: () => void } {
  const clock = new ManualClock();
  let sent = 0;
  const answers: (() => void)[] = [];
  const probe = new PauseProbe({
    clock,
    probe: () => {
      sent += 1;
      return new Promise<void>((resolve) => answers.push(resolve));
    },
  });
  // Replies come in command order.
  return { clock, probe, sent: () => sent, answer: () => answers.shift()?.() };
}

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('PauseProbe', () => {
  it('sends one continue once a flood has been quiet for a second, none while it flows, none for a trickle', async () => {
    const { clock, probe, sent, answer } = setup();
    for (let i = 0; i < 10; i++) {
      probe.output(1000); // a trickle: 10 KB
      clock.advance(300);
    }
    clock.advance(5000);
    expect(sent()).toBe(0);
    expect(clock.armed).toBe(0); // an idle drive holds no timer

    for (let i = 0; i < 20; i++) {
      probe.output(16 * 1024);
      clock.advance(200); // still flowing: the timer re-arms for the rest of the second
    }
    expect(sent()).toBe(0);
    clock.advance(799); // 999 ms after the last chunk
    expect(sent()).toBe(0);
    clock.advance(1);
    expect(sent()).toBe(1);
    expect(probe.probing).toBe(true);
    answer();
    await flush();
    expect(probe.probing).toBe(true); // a %continue just after the reply still counts
    clock.advance(500);
    expect(probe.probing).toBe(false);
    clock.advance(10_000);
    expect(sent()).toBe(1);
    expect(clock.armed).toBe(0);
  });

  it('an announced pause starts the flood over; stop() cancels the timer', () => {
    const { clock, probe, sent } = setup();
    probe.output(60 * 1024);
    probe.paused();
    probe.output(60 * 1024);
    clock.advance(2000);
    expect(sent()).toBe(0);
    probe.output(64 * 1024);
    expect(clock.armed).toBe(1);
    probe.stop();
    expect(clock.armed).toBe(0);
    probe.output(1024 * 1024);
    clock.advance(2000);
    expect(sent()).toBe(0);
  });

  it('output between a probe and its reply: the flood goes on, the next quiet second is probed; a reply with nothing before it ends the flood', async () => {
    const { clock, probe, sent, answer } = setup();
    probe.output(128 * 1024);
    clock.advance(1000);
    expect(sent()).toBe(1);
    probe.output(2000); // tmux had output queued ahead of the reply: less than a flood's worth
    answer();
    await flush();
    clock.advance(999);
    expect(sent()).toBe(1);
    clock.advance(1);
    expect(sent()).toBe(2); // the old probe stopped after one: this stop could be a stranded %pause
    answer(); // nothing came before this reply: tmux had nothing queued
    await flush();
    clock.advance(10_000);
    expect(sent()).toBe(2);
    expect(clock.armed).toBe(0);
  });

  it('a probe unanswered for a second is followed by one more (its own reply may be the stranded line); none while two are unanswered', async () => {
    const { clock, probe, sent, answer } = setup();
    probe.output(64 * 1024);
    clock.advance(1000);
    expect(sent()).toBe(1);
    clock.advance(1000);
    expect(sent()).toBe(2);
    clock.advance(10_000);
    expect(sent()).toBe(2); // tmux answers neither: the command deadline reports that, not more probes
    expect(clock.armed).toBe(0);
    probe.output(100); // output since: both replies may be stranded behind output tmux dropped since
    clock.advance(1000);
    expect(sent()).toBe(3);
    answer();
    answer();
    answer();
    await flush();
    clock.advance(1000);
    expect(clock.armed).toBe(0);
    expect(sent()).toBe(3);
  });

  it('output tmux held a second or more makes a flood of a trickle; fresh output does not', () => {
    const { clock, probe, sent } = setup();
    probe.output(100, 20);
    clock.advance(5000);
    expect(sent()).toBe(0);
    probe.output(100, 1500);
    clock.advance(1000);
    expect(sent()).toBe(1);
  });

  it('a %continue after an announced %pause answers that pause, not the probe', () => {
    const { clock, probe } = setup();
    probe.output(64 * 1024);
    clock.advance(1000);
    expect(probe.probing).toBe(true);
    probe.paused();
    expect(probe.probing).toBe(false);
  });
});
