/**
 * The policy pieces as a caller meets them: redacted reads and transcripts, the audit log, and the
 * caps of an allow entry (each eviction or refusal names the cap that fired).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readAudit } from '../../journal/audit-log.js';
import { allow, openDriver, type TestDriver } from '../helpers.js';

const SECRETS = [
  'AKIAIOSFODNN7EXAMPLE',
  'ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789',
  'sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ',
  'glpat-abcdefghijklmnopqrst',
];

describe('redaction, audit and limits through the API', () => {
  let t: TestDriver;
  beforeAll(async () => {
    t = await openDriver([
      allow('bash', '/bin/bash', { env: { PS1: '$ ' } }),
      allow('capped', '/bin/bash', { env: { PS1: '$ ' }, limits: { maxInteractions: 2, maxSessions: 1, wallClockMs: 1500 } }),
    ]);
  });
  afterAll(async () => t.cleanup());

  it('redacts secrets a program prints from read() and transcript(), and from the audit of what was typed', async () => {
    const s = await t.driver.create({ allowId: 'bash', args: ['--norc', '--noprofile'], name: 'red' });
    await s.wait({ forText: '$ ' });
    await s.sendText(`printf '%s\\n' ${SECRETS.join(' ')} done-printing`, { submit: true });
    await s.wait({ forText: /^done-printing$/m });
    const r = s.read();
    for (const secret of SECRETS) expect(r.content).not.toContain(secret);
    expect(r.redactions).toBeGreaterThanOrEqual(SECRETS.length);
    expect(r.content).toContain('[REDACTED:');
    expect(r.untrusted).toBe(true);
    const all = s.transcript().map((e) => (typeof e.data === 'string' ? e.data : '')).join('');
    for (const secret of SECRETS) expect(all).not.toContain(secret);
    const audit = readAudit(t.dataDir, { sessionId: 'red' });
    expect(audit.map((a) => a.kind)).toEqual(expect.arrayContaining(['create', 'sendText', 'sendKeys']));
    const typed = audit.find((a) => a.kind === 'sendText');
    expect(typed?.payload).toContain('done-printing');
    for (const secret of SECRETS) expect(JSON.stringify(audit)).not.toContain(secret);
    await s.kill();
    expect(readAudit(t.dataDir, { sessionId: 'red' }).at(-1)?.kind).toBe('kill');
  });

  it('enforces maxInteractions, maxSessions and wallClockMs of an entry, naming the cap', async () => {
    const s = await t.driver.create({ allowId: 'capped', args: ['--norc', '--noprofile'], name: 'capped1' });
    await expect(t.driver.create({ allowId: 'capped', args: ['--norc', '--noprofile'] })).rejects.toMatchObject({ code: 'LIMIT_REACHED', message: expect.stringContaining('limits.maxSessions') });
    await s.wait({ forText: '$ ' });
    await s.sendText('echo one', { submit: true });
    await s.sendText('echo two', { submit: true });
    await expect(s.sendText('echo three')).rejects.toMatchObject({ code: 'LIMIT_REACHED', message: expect.stringContaining('limits.maxInteractions') });
    const r = await s.wait({ forExit: true, timeoutMs: 5000 });
    expect(r.outcome).toBe('exit');
    expect(t.driver.list().find((i) => i.id === 'capped1')).toMatchObject({ state: 'failed', reason: 'evicted:limits.wallclockms' });
  });
});
