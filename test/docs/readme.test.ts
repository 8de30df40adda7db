/**
 * README's library example, run against a real python3 in a real drive: right after a `forText`
 * wait the answer has only just arrived and status() often reads `working` / `output_flowing` (the
 * README once said `awaiting-input` there); after a short idle wait the prompt reads `awaiting-input`.
 * The README's text is checked to say both.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../../tools/config-schema.js';
import { allow, openDriver, type TestDriver } from '../helpers.js';

const readme = readFileSync(join(repoRoot(), 'README.md'), 'utf8');
let t: TestDriver;

beforeAll(async () => {
  t = await openDriver([allow('python3', '/usr/bin/python3')]);
});

afterAll(async () => {
  await t?.cleanup();
});

describe("README's example", () => {
  it('says what status() reads right after the text wait, and after the screen settles', () => {
    expect(readme).toMatch(/console\.log\(s\.status\(\)\.reason\);\s*\/\/ often 'output_flowing' \(working\)/);
    expect(readme).toMatch(/await s\.wait\(\{ forIdleMs: 300 \}\);[^\n]*\nconsole\.log\(s\.status\(\)\);\s*\/\/ \{ state: 'awaiting-input'/);
  });

  it('behaves as it says with a real python3', async () => {
    const s = await t.driver.create({ allowId: 'python3', args: ['-q'], cols: 100, rows: 30, name: 'calc' });
    await s.wait({ forText: '>>> ' });
    await s.sendText('2 ** 100', { submit: true });
    expect((await s.wait({ forText: '1267650600228229401496703205376' })).outcome).toBe('text');
    expect(s.read().content).toContain('1267650600228229401496703205376');
    // Right after the match the answer has only just arrived: output_flowing unless this (loaded)
    // machine took longer than the flowing window to get here, so it is not asserted.
    expect((await s.wait({ forIdleMs: 300 })).outcome).toBe('idle');
    expect(s.status()).toMatchObject({ state: 'awaiting-input', confidence: 'high', reason: 'cursor_parked' });
    await s.kill();
  });
});
