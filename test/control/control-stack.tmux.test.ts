/** LineSplitter → ControlParser → CommandQueue against a real tmux 3.3a server. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeSendText } from '../../lib/control/tmux-commands.js';
import type { PaneId } from '../../lib/control/parser.js';
import { TmuxCommandError, TmuxTimeoutError } from '../../lib/common/errors.js';
import { TmuxHarness } from './tmux-harness.js';

let tmux: TmuxHarness;
beforeAll(async () => {
  tmux = await TmuxHarness.start();
});
afterAll(async () => {
  await tmux?.stop();
});

describe('control stack on tmux 3.3a', () => {
  it('skips the flags-0 attach block and sees %session-changed before any reply', () => {
    const kinds = tmux.events.slice(0, 2).map((e) => (e.kind === 'notification' ? e.name : e.kind));
    expect(kinds).toEqual(['foreign-block', 'session-changed']);
  });

  it('matches a mixed batch of successes and failures to the right commands', async () => {
    const results = await Promise.allSettled(
      ["display-message -p 'one'", 'select-window -t @999', "display-message -p 'three'", 'no-such-command', "display-message -p 'five'"].map((c) =>
        tmux.command(c),
      ),
    );
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value.text() : (r.reason as TmuxCommandError).detail))).toEqual([
      'one',
      "can't find window: @999",
      'three',
      'parse error: unknown command: no-such-command',
      'five',
    ]);
  });

  it('returns captured screen lines that imitate guards, untouched, and the next reply still matches', async () => {
    const screen = ['%end 1700000000 999 1', '%error 1 2 1', '%begin 1 2 1', 'tail'];
    const script = `printf '%s\\n' ${screen.map((l) => `'${l}'`).join(' ')}; exec sleep 86400`;
    const pane = (await tmux.command(`new-window -d -P -F '#{pane_id}' -- sh -c '${script.replaceAll("'", "'\\''")}'`)).text() as PaneId;
    await tmux.waitFor((e) => e.kind === 'output' && e.pane === pane && Buffer.from(e.data).includes('tail'));
    const [capture, after] = await tmux.queue.sendBatch([`capture-pane -p -t ${pane} -S 0 -E 3`, "display-message -p 'after'"]);
    expect(capture?.text()).toBe(screen.join('\n'));
    expect(after?.text()).toBe('after');
  });

  it('dispatches %pause and %continue that 3.3a writes inside the refresh-client -A block', async () => {
    const before = tmux.events.length;
    await tmux.command("refresh-client -A '%0:pause'");
    await tmux.command("refresh-client -A '%0:continue'");
    const names = tmux.events.slice(before).map((e) => (e.kind === 'notification' ? `${e.name} ${'pane' in e ? e.pane : ''}` : e.kind));
    expect(names).toEqual(['pause %0', 'reply', 'continue %0', 'reply']);
  });

  it('times a command out, consumes its late reply, and matches the next command correctly', async () => {
    // run-shell returns %end at once but holds every later command from this client until the job ends.
    await tmux.command("run-shell 'sleep 1'");
    const late = tmux.queue.send("display-message -p 'late'", { timeoutMs: 200 });
    await expect(late).rejects.toBeInstanceOf(TmuxTimeoutError);
    expect(tmux.queue.pending).toBe(1);
    expect((await tmux.command("display-message -p 'next'")).text()).toBe('next');
    expect(tmux.queue.pending).toBe(0);
  });

  it('keeps a pane that received text alive and writable', async () => {
    const receiver = await tmux.openReceiver();
    const got = await tmux.deliver(receiver, encodeSendText(receiver.pane as PaneId, 'ok\r'));
    expect(got.toString()).toBe('ok\r');
  });

  it('saw no incidents, unknown notifications or stray lines', () => {
    expect(tmux.events.filter((e) => e.kind === 'incident' || e.kind === 'unknown' || e.kind === 'stray')).toEqual([]);
  });
});
