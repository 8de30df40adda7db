/**
 * An output flood: `yes` for 10 s keeps host memory bounded (the mirror's queue pauses the pipe,
 * tmux's pause-after pauses the pane, a resync catches up) and keystrokes stay responsive.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allow, openDriver, processesMentioning, type TestDriver } from '../helpers.js';

describe('an output flood', () => {
  let t: TestDriver;
  beforeAll(async () => {
    t = await openDriver([allow('bash', '/bin/bash', { env: { PS1: '$ ' } })]);
  });
  afterAll(async () => t.cleanup());

  it('keeps memory bounded for 10 s of `yes`, then answers C-c and shows an exact screen', async () => {
    const s = await t.driver.create({ allowId: 'bash', args: ['--norc', '--noprofile'], cols: 120, rows: 40, name: 'flood' });
    await s.wait({ forText: '$ ' });
    let bytes = 0;
    s.on('output', (data) => {
      bytes += data.byteLength;
    });
    const rssBefore = process.memoryUsage().rss;
    let rssMax = rssBefore;
    const sampler = setInterval(() => {
      rssMax = Math.max(rssMax, process.memoryUsage().rss);
    }, 200);
    try {
      await s.sendText('yes "flood line with some text to fill the screen"', { submit: true });
      const flowing = await s.wait({ forIdleMs: 500, timeoutMs: 10_000 });
      expect(flowing.outcome).toBe('timeout');
      expect(flowing.producing).toBe(true);
      const sentAt = performance.now();
      await s.sendKeys('C-c');
      const keyMs = performance.now() - sentAt;
      const back = await s.wait({ forIdleMs: 300, timeoutMs: 20_000 });
      expect(back.outcome).toBe('idle');
      expect(keyMs).toBeLessThan(2000);
    } finally {
      clearInterval(sampler);
    }
    expect(bytes).toBeGreaterThan(10_000_000);
    // The flood is tens of MB; the host keeps only the ring and the emulator's grid.
    expect(rssMax - rssBefore).toBeLessThan(300 * 1024 * 1024);
    await s.sendText('echo after-the-flood', { submit: true });
    expect((await s.wait({ forText: /^after-the-flood$/m })).outcome).toBe('text');
    await s.wait({ forIdleMs: 200 });
    expect((await s.fidelity()).equal).toBe(true);
    const transcriptBytes = s.transcript().reduce((n, e) => n + (e.data === undefined ? 0 : typeof e.data === 'string' ? Buffer.byteLength(e.data) : e.data.byteLength), 0);
    expect(transcriptBytes).toBeGreaterThan(0);
    expect(transcriptBytes).toBeLessThanOrEqual(t.driver.config.worker.ringBytes);
    await s.kill();
  });

  it('kill() ends a daemon the program left behind', async () => {
    const s = await t.driver.create({ allowId: 'bash', args: ['--norc', '--noprofile'], name: 'daemon' });
    await s.wait({ forText: '$ ' });
    await s.sendText('(setsid sleep 7777 </dev/null >/dev/null 2>&1 &); echo started', { submit: true });
    await s.wait({ forText: /^started$/m });
    // The backgrounded setsid may exec a moment after `started` prints.
    for (let i = 0; i < 100 && processesMentioning('sleep\u00007777').length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(processesMentioning('sleep\u00007777').length).toBe(1);
    await s.kill();
    expect(processesMentioning('sleep\u00007777')).toEqual([]);
  });
});
