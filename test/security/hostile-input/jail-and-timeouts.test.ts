/**
 * Two smaller holes of issue 10:
 * - tmux's TMUX and TMUX_PANE name the drive's socket; on 1eceb75 bwrap removed them from the
 *   program but kept them itself, and bwrap is pid 1 of the jail: /proc/1/environ showed them.
 *   Now `env -u` runs before bwrap, so no process of the jail holds them.
 * - A send that times out (a SIGSTOPped tmux server) is still delivered when the server resumes:
 *   the TMUX_TIMEOUT error says `delivery: 'unknown'`, so a caller does not type it twice.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TmuxTimeoutError } from '../../../lib/common/errors.js';
import { findProcesses } from '../../../backends/process/process-tree.js';
import { isStartServerArgv } from '../../../lib/control/tmux-commands.js';
import { allow, openDriver, type TestDriver } from '../../helpers.js';
import { BASH_ARGS, BASH_ENTRY, probe, ready, workspaceOf } from '../probe.js';
import { RAW_RECEIVER } from '../../byte-corpus.js';

let t: TestDriver;
beforeAll(async () => {
  t = await openDriver([allow('bash', '/bin/bash', BASH_ENTRY), allow('py', '/usr/bin/python3')], {}, { tmuxTimeoutMs: 1500 });
});
afterAll(async () => t?.cleanup());

describe('the jail', () => {
  it('has no TMUX or TMUX_PANE in any process, /proc/1/environ (bwrap) included', async () => {
    const s = await t.driver.create({ allowId: 'bash', args: BASH_ARGS, name: 'environ' });
    await ready(s);
    const r = await probe(
      s,
      workspaceOf(t.dataDir),
      'for f in /proc/[0-9]*/environ; do printf "%s " "$f"; if tr "\\0" "\\n" < "$f" | grep -qE "^TMUX(_PANE)?="; then echo HAS; else echo clean; fi; done',
    );
    const rows = r.out.trim().split('\n');
    expect(rows).toContain('/proc/1/environ clean');
    expect(rows.length).toBeGreaterThanOrEqual(3); // bwrap's init, bash, the probe's own shell
    expect(rows.filter((row) => !row.endsWith(' clean'))).toEqual([]);
    // set-clipboard is off: a program's OSC 52 makes no tmux paste buffer (nor reaches an operator's clipboard).
    await s.sendText(String.raw`printf '\033]52;c;aGVsbG8=\007'; echo osc-sent`, { submit: true });
    expect((await s.wait({ forText: /^osc-sent$/m, timeoutMs: 5000 })).outcome).toBe('text');
    expect(execFileSync('tmux', ['-S', join(t.dataDir, 'tmux', 'environ.sock'), 'list-buffers'], { encoding: 'utf8' })).toBe('');
    await s.kill();
  });
});

describe('a send to a stopped tmux server', () => {
  it('fails with TMUX_TIMEOUT and delivery "unknown", and is delivered once the server resumes', async () => {
    const sentinel = `<<END-${randomBytes(4).toString('hex')}>>`;
    const file = join(workspaceOf(t.dataDir), 'received.bin');
    const s = await t.driver.create({ allowId: 'py', name: 'stopped', args: ['-c', RAW_RECEIVER, file, sentinel] });
    expect((await s.wait({ forText: 'READY', timeoutMs: 10_000 })).outcome).toBe('text');
    const [server] = findProcesses((cmdline) => isStartServerArgv(cmdline.split('\0'), join(t.dataDir, 'tmux', 'stopped.sock')));
    expect(server).toBeGreaterThan(0);
    process.kill(server as number, 'SIGSTOP');
    try {
      for (const send of [() => s.sendText('typed once', { paste: 'never' }), () => s.sendText('|pasted\nonce|', { paste: 'always' }), () => s.sendKeys(['Enter'])]) {
        const err = await send().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(TmuxTimeoutError);
        expect(err).toMatchObject({ code: 'TMUX_TIMEOUT', delivery: 'unknown', context: { delivery: 'unknown' } });
        expect((err as Error).message).toMatch(/delivery is unknown/);
      }
    } finally {
      process.kill(server as number, 'SIGCONT');
    }
    await s.sendText(sentinel, { paste: 'never' });
    expect((await s.wait({ forText: 'DONE', timeoutMs: 15_000 })).outcome).toBe('text');
    const got = readFileSync(file);
    expect(got.subarray(0, got.length - sentinel.length).toString()).toBe('typed once|pasted\nonce|\r');
    await s.kill();
  });
});
