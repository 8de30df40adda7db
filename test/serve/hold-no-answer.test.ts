/**
 * While a person holds a drive (the operator hold), the host answers no dialog on it: the dialog
 * is theirs, and it is escalated as `dialog_operator_hold` instead. Against a real serving host (in
 * this process), real python3 drives in tmux showing a dialog the allow entry's profile marks safe:
 * the drive nobody holds is auto-answered (the control), the held one is not.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve, type ServingHost } from '../../lib/serve/serve.js';
import { Client } from '../../lib/client/client.js';
import type { Attention } from '../../lib/perceive/status.js';
import { allow } from '../helpers.js';
import { sweep, tempDataDir } from './harness.js';

const ASKER = { id: 'asker', dialogs: [{ id: 'continue', pattern: 'Continue\\?', kind: 'confirm', answer: ['y', 'Enter'], safe: true }] };
/** The dialog shows after 1.5 s: time for the person to take the drive over first. */
const ASK = 'import time\ntime.sleep(1.5)\na = input("Continue? (y/n) ")\nprint("GOT " + a, flush=True)\ninput("> ")';

const dataDir = tempDataDir();
const profiles = mkdtempSync(join(tmpdir(), 'td-prof-'));
let host: ServingHost;
let owner: Client;

beforeAll(async () => {
  writeFileSync(join(profiles, 'asker.json'), JSON.stringify(ASKER));
  host = await serve({ dataDir, config: { allow: [allow('asker', '/usr/bin/python3', { autoAnswer: 'safe-only' })] }, profileDirs: [profiles], logger: { warn: () => undefined } });
  owner = await Client.connect(dataDir);
}, 60_000);

afterAll(async () => {
  for (const i of await owner.list().catch(() => [])) if (i.state === 'live') await owner.drive(i.id).kill().catch(() => undefined);
  await owner?.close();
  await host?.close();
  sweep(dataDir);
  rmSync(profiles, { recursive: true, force: true });
});

describe('an operator hold and auto-answer', () => {
  it('the held drive is not auto-answered (escalated as dialog_operator_hold); the drive nobody holds is', async () => {
    const free = await owner.create({ allowId: 'asker', name: 'free', args: ['-c', ASK] });
    const held = await owner.create({ allowId: 'asker', name: 'held', args: ['-c', ASK] });
    await held.hold();
    const attention: Attention[] = [];
    held.on('attention', (a) => attention.push(a));
    // The control: the same dialog on the drive nobody holds is answered by the host.
    expect((await free.wait({ forText: 'GOT y', timeoutMs: 15_000 })).outcome).toBe('text');
    expect((await held.wait({ forText: 'Continue?', timeoutMs: 15_000 })).outcome).toBe('text');
    const deadline = Date.now() + 10_000;
    while (!attention.some((a) => a.reason === 'dialog_operator_hold') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(attention.map((a) => a.reason)).toContain('dialog_operator_hold');
    expect((await held.read()).content).not.toContain('GOT');
    // The person answers it themselves, through their hold.
    await held.sendText('n', { submit: true });
    expect((await held.wait({ forText: 'GOT n', timeoutMs: 10_000 })).outcome).toBe('text');
    expect(await held.release()).toBe(true);
  }, 60_000);
});
