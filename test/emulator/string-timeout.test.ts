/**
 * tmux 3.3a abandons a string sequence 5 s after it began (input_start_timer): its parser goes back
 * to the ground state with a default pen and prints what follows. The mirror has no clock in its
 * parser, so a drive notices the open string itself and resyncs from tmux (incident
 * `parser_timeout`): a real drive, a program that starts an OSC and never ends it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allow, openDriver, type TestDriver } from '../helpers.js';

describe('a string sequence left open longer than tmux waits', () => {
  let t: TestDriver;
  beforeAll(async () => {
    t = await openDriver([allow('bash', '/bin/bash', { env: { PS1: '$ ' } })]);
  });
  afterAll(async () => t.cleanup());

  it('the mirror shows what tmux shows after it gave up on the string, with the pen tmux reset', async () => {
    const s = await t.driver.create({ allowId: 'bash', args: ['--norc', '--noprofile'], cols: 60, rows: 10 });
    const incidents: string[] = [];
    s.on('incident', (code) => incidents.push(code));
    try {
      await s.wait({ forText: '$ ', timeoutMs: 10_000 });
      await s.sendText("printf '\\033[1;31mred \\033]0;a title never ended'; sleep 6; printf 'after the timeout'; sleep 100", { submit: true });
      const waited = await s.wait({ forText: 'after the timeout', timeoutMs: 20_000 });
      expect(waited.outcome).toBe('text');
      await s.wait({ forIdleMs: 300 });
      expect(incidents).toContain('parser_timeout');
      expect(s.read({ mode: 'full' }).content).toMatch(/red after the timeout/);
      const report = await s.fidelity();
      expect({ equal: report.equal, first: report.mismatches.slice(0, 3) }).toEqual({ equal: true, first: [] });
    } finally {
      await s.kill();
    }
  }, 60_000);
});
