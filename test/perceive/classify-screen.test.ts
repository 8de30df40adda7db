import { describe, expect, it } from 'vitest';
import { classifyScreen } from '../../lib/perceive/classify-screen.js';
import { compareActivity, type ProcessActivity } from '../../lib/perceive/activity.js';
import { classify } from '../../lib/perceive/status.js';
import { loadProfileFiles } from '../../lib/driver/profile-files.js';
import { ALT, HIDE, at, flowing, quiet, screen } from './screens.js';

const profiles = loadProfileFiles();
const shell = profiles.get('shell');

/** An activity verdict covering the quiet period that began at 5 000 ms. */
function activity(busy: ProcessActivity['busy'], extra: Partial<ProcessActivity> = {}): ProcessActivity {
  return { busy, since: 5_100, until: 9_900, cpuMs: busy === 'cpu' ? 4_000 : 0, ioBytes: busy === 'io' ? 1e6 : 0, readingTerminal: false, ...extra };
}

describe('classifyScreen: exit and flow', () => {
  it('a dead pane is exited, with its status', () => {
    const v = classifyScreen(screen('$ exit 3\n'), quiet({ exit: { code: 3, signal: null } }), shell);
    expect(v).toMatchObject({ state: 'exited', confidence: 'high', reason: 'pane_dead', exit: { code: 3, signal: null } });
  });

  it('a lost server is exited (server_gone), another lost channel is channel_lost', () => {
    expect(classifyScreen(screen('$ '), quiet({ lost: 'server_gone' })).reason).toBe('server_gone');
    expect(classifyScreen(screen('$ '), quiet({ lost: 'control_eof' })).reason).toBe('channel_lost');
  });

  it('output still arriving is working, even with a "(y/n)" under the cursor', () => {
    const v = classifyScreen(screen('Proceed? (y/n) '), flowing(), shell);
    expect(v).toMatchObject({ state: 'working', reason: 'output_flowing', confidence: 'high' });
    expect(v.dialog).toBeUndefined();
  });
});

describe('classifyScreen: prompts', () => {
  it('the cursor parked after a shell prompt at the end of the content is awaiting input', () => {
    const v = classifyScreen(screen('$ echo hi\nhi\n$ '), quiet(), shell);
    expect(v).toMatchObject({ state: 'awaiting-input', reason: 'cursor_parked', confidence: 'high', cursor: { x: 2, y: 2 } });
  });

  it('python input() and REPL prompts are prompts', () => {
    expect(classifyScreen(screen('Name: '), quiet(), shell).reason).toBe('cursor_parked');
    expect(classifyScreen(screen('Python 3.11\n>>> '), quiet(), shell).reason).toBe('cursor_parked');
    expect(classifyScreen(screen('>>> def f():\n... '), quiet(), shell).reason).toBe('cursor_parked');
  });

  it('a cursor at the start of an empty line after output is not a prompt: working until evidence', () => {
    const v = classifyScreen(screen('$ make\ncompiling foo.c\n'), quiet(), shell);
    expect(v).toMatchObject({ state: 'working', reason: 'cursor_not_parked', confidence: 'medium' });
  });

  it('text after the cursor row (output below it) means the cursor is not parked', () => {
    const s = screen(`$ \nlater output${at(0, 2)}`);
    expect(classifyScreen(s, quiet(), shell).state).toBe('working');
  });

  it('a progress line without a prompt character is not a prompt', () => {
    expect(classifyScreen(screen('Downloading 45% 1.2 MB/s'), quiet(), shell).reason).toBe('cursor_not_parked');
  });

  it('a hidden cursor on the main screen is no prompt', () => {
    expect(classifyScreen(screen(`${HIDE}$ `), quiet(), shell).state).toBe('working');
  });

  it('a prompt printed by a program that then burns CPU without reading the terminal is working', () => {
    const v = classifyScreen(screen('Continue? '), quiet({ activity: activity('cpu') }), shell);
    expect(v).toMatchObject({ state: 'working', reason: 'busy_cpu', busy: 'cpu' });
    const reading = classifyScreen(screen('Continue? '), quiet({ activity: activity('cpu', { readingTerminal: true }) }), shell);
    expect(reading.state).toBe('awaiting-input');
  });
});

describe('classifyScreen: busy versus hung', () => {
  const noPrompt = screen('$ ./long-job\nstarting\n');

  it('CPU progress in the process tree is working (busy_cpu), never stuck', () => {
    const v = classifyScreen(noPrompt, quiet({ now: 60_000, stuckMs: 30_000, activity: activity('cpu') }), shell);
    expect(v).toMatchObject({ state: 'working', reason: 'busy_cpu', confidence: 'high', busy: 'cpu' });
  });

  it('I/O progress is working (busy_io)', () => {
    expect(classifyScreen(noPrompt, quiet({ now: 60_000, activity: activity('io') }), shell)).toMatchObject({ state: 'working', reason: 'busy_io', busy: 'io' });
  });

  it('no output and no progress for stuckMs is stuck (no_progress)', () => {
    const v = classifyScreen(noPrompt, quiet({ now: 40_000, stuckMs: 30_000, activity: activity('idle', { until: 39_000 }) }), shell);
    expect(v).toMatchObject({ state: 'stuck', reason: 'no_progress', busy: 'idle' });
  });

  it('an idle window that ended early in the quiet time does not prove stuck', () => {
    const early = activity('idle', { since: 5_100, until: 8_000 });
    expect(classifyScreen(noPrompt, quiet({ now: 60_000, stuckMs: 30_000, activity: early }), shell)).toMatchObject({ state: 'working', reason: 'cursor_not_parked' });
  });

  it('before stuckMs has passed, an idle tree is still working (medium)', () => {
    expect(classifyScreen(noPrompt, quiet({ now: 20_000, stuckMs: 30_000, activity: activity('idle') }), shell)).toMatchObject({ state: 'working', confidence: 'medium' });
  });

  it('without activity facts, nothing is ever stuck', () => {
    expect(classifyScreen(noPrompt, quiet({ now: 1e9, stuckMs: 30_000 }), shell).state).toBe('working');
  });

  it('an activity window from before the last output is stale and ignored', () => {
    const stale = activity('idle', { since: 1_000, until: 2_000 });
    const v = classifyScreen(noPrompt, quiet({ now: 90_000, stuckMs: 30_000, activity: stale }), shell);
    expect(v.state).toBe('working');
    expect(v.busy).toBeUndefined();
  });

  it('a foreground process blocked reading the terminal is awaiting input (tty_read)', () => {
    expect(classifyScreen(noPrompt, quiet({ activity: activity('idle', { readingTerminal: true }) }), shell)).toMatchObject({ state: 'awaiting-input', reason: 'tty_read' });
  });

  it('compareActivity turns two samples into a verdict', () => {
    const a = { at: 0, processes: [{ pid: 10, start: 5, cpuMs: 100, ioBytes: 0 }], readingTerminal: false };
    const cpu = { at: 1000, processes: [{ pid: 10, start: 5, cpuMs: 900, ioBytes: 0 }], readingTerminal: false };
    expect(compareActivity(a, cpu)).toMatchObject({ busy: 'cpu', cpuMs: 800, since: 0, until: 1000 });
    const idle = { at: 30_000, processes: [{ pid: 10, start: 5, cpuMs: 130, ioBytes: 2_000 }], readingTerminal: false };
    expect(compareActivity(a, idle).busy).toBe('idle');
    const io = { at: 1000, processes: [{ pid: 10, start: 5, cpuMs: 100, ioBytes: 500_000 }], readingTerminal: false };
    expect(compareActivity(a, io).busy).toBe('io');
    // A child that appeared in the window counts in full; a reused pid is a new process.
    const child = { at: 1000, processes: [{ pid: 10, start: 5, cpuMs: 100, ioBytes: 0 }, { pid: 11, start: 90, cpuMs: 500, ioBytes: 0 }], readingTerminal: false };
    expect(compareActivity(a, child).busy).toBe('cpu');
    const reused = { at: 1000, processes: [{ pid: 10, start: 77, cpuMs: 50, ioBytes: 0 }], readingTerminal: false };
    expect(compareActivity(a, reused).cpuMs).toBe(50);
    // Starved on a loaded machine (2 % of a core) but runnable at both samples: CPU-bound.
    const starved = { at: 1000, processes: [{ pid: 10, start: 5, cpuMs: 120, ioBytes: 0 }], readingTerminal: false, runnable: true };
    expect(compareActivity({ ...a, runnable: true }, starved).busy).toBe('cpu');
    expect(compareActivity(a, starved).busy).toBe('idle');
  });
});

describe('classifyScreen: full-screen programs', () => {
  it('a settled alternate screen is awaiting input (screen_settled, medium)', () => {
    const v = classifyScreen(screen(`${ALT}~\n~\n~${at(0, 0)}`), quiet(), shell);
    expect(v).toMatchObject({ state: 'awaiting-input', reason: 'screen_settled', confidence: 'medium' });
  });
});

describe('classifyScreen: profile markers', () => {
  const claude = profiles.get('claude-code');
  const composer = (status: string, input = ''): string => `● Done.\n\n${status}\n${'─'.repeat(40)}\n> ${input}\n${'─'.repeat(40)}\n  ? for shortcuts\x1b[2A\r\x1b[${2 + input.length}C`;

  it('a working marker near the bottom is working (working_marker), with the marker id as evidence', () => {
    const v = classifyScreen(screen(composer('✻ Thinking… (3s · esc to interrupt)')), quiet(), claude);
    expect(v).toMatchObject({ state: 'working', reason: 'working_marker', confidence: 'high' });
    expect(['esc-to-interrupt', 'spinner-verb']).toContain(v.marker);
  });

  it('without a marker the composer is ready', () => {
    expect(classifyScreen(screen(composer('')), quiet(), claude)).toMatchObject({ state: 'awaiting-input', reason: 'composer_ready' });
  });

  it('marker text typed into the composer is not a marker', () => {
    expect(classifyScreen(screen(composer('', 'please say esc to interrupt')), quiet(), claude).reason).toBe('composer_ready');
  });

  it('a finished turn quoted far above the bottom region is not a marker', () => {
    const old = `✻ Thinking… (esc to interrupt)\n${'line\n'.repeat(20)}`;
    expect(classifyScreen(screen(old + composer(''), { rows: 40 }), quiet(), claude).reason).toBe('composer_ready');
  });

  it('a queued-input marker is working with queued: true', () => {
    const v = classifyScreen(screen(composer('  Press up to edit queued messages')), quiet(), claude);
    expect(v).toMatchObject({ state: 'working', reason: 'input_queued', queued: true });
  });
});

describe('classify() (the session adapter) keeps its signature', () => {
  it('classifies a text snapshot with no cells and no size', () => {
    const s = classify({
      snapshot: { lines: ['$ echo hi', 'hi', '$', ''], cursor: { x: 2, y: 2, visible: true }, alternate: false },
      now: 1000,
      lastOutputAt: 0,
      lastChangeAt: 0,
      exit: undefined,
      lost: undefined,
      interactions: 2,
    });
    expect(s).toMatchObject({ state: 'awaiting-input', reason: 'cursor_parked', interactions: 2 });
    expect(s).not.toHaveProperty('profile');
  });
});
