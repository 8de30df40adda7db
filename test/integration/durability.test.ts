/**
 * A host dies (SIGKILL) and the next one re-attaches by stable name: an exact screen, one copy of
 * the program, a journal with no content in it. Hosts are real child processes running the built
 * library (dist/), as a daemon would.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Driver } from '../../lib/index.js';
import { CONSENT, processesMentioning } from '../helpers.js';
import { processTree } from '../../backends/process/process-tree.js';

/** The bash processes under the drive's tmux server. */
function drivenBashes(socket: string): number[] {
  const server = processesMentioning(socket).find((pid) => readFileSync(`/proc/${pid}/cmdline`, 'latin1').includes('start-server'));
  return server === undefined ? [] : processTree(server).filter((p) => p.comm === 'bash').map((p) => p.pid);
}

const DIST = resolve(__dirname, '../../dist/lib/index.js');
const CONFIG = { allow: [{ id: 'bash', match: { path: '/bin/bash' }, env: { PS1: '$ ' }, consent: CONSENT }] };
const SECRET = 'ghp_R3allyS3cretT0kenValue0123456789abcd';
const MARKER = 'unique-marker-7f3a9c';

/** A host process that creates drive `name`, types into it, says READY and then waits to be killed. */
function startHost(dataDir: string, name: string): Promise<ChildProcess> {
  const script = `
    import { Driver } from ${JSON.stringify(DIST)};
    const d = await Driver.open({ dataDir: ${JSON.stringify(dataDir)}, config: ${JSON.stringify(CONFIG)} });
    const s = await d.create({ allowId: 'bash', args: ['--norc', '--noprofile'], name: ${JSON.stringify(name)} });
    await s.wait({ forText: '$ ' });
    await s.sendText('export TOKEN=${SECRET}; echo ${MARKER}-$((40 + 2))', { submit: true });
    await s.wait({ forText: '${MARKER}-42' });
    process.stdout.write('READY\\n');
    setInterval(() => {}, 1000);
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((ok, fail) => {
    child.stdout?.on('data', (d: Buffer) => {
      if (d.toString().includes('READY')) ok(child);
    });
    child.on('exit', (code) => fail(new Error(`host exited early with ${code}`)));
  });
}

function killHard(child: ChildProcess): Promise<void> {
  return new Promise((ok) => {
    child.once('exit', () => ok());
    child.kill('SIGKILL');
  });
}

describe('re-attach after a host crash', () => {
  let dataDir: string;
  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'td-'));
  });
  afterAll(async () => {
    const d = await Driver.open({ dataDir, config: CONFIG });
    for (const info of d.list()) if (info.state === 'live') await d.get(info.id).kill();
    await d.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('re-attaches to the live drive with an exact screen and one copy of the program', async () => {
    const host = await startHost(dataDir, 'dur');
    const socket = join(dataDir, 'tmux', 'dur.sock');
    const before = drivenBashes(socket);
    expect(before.length).toBe(1);
    await killHard(host);
    const d = await Driver.open({ dataDir, config: CONFIG });
    try {
      expect(d.list()).toEqual([expect.objectContaining({ id: 'dur', state: 'live', durable: true })]);
      const s = d.get('dur');
      expect(s.read().content).toContain(`${MARKER}-42`);
      expect((await s.fidelity()).equal).toBe(true);
      expect(s.transcript().some((e) => e.kind === 'gap')).toBe(true);
      await s.sendText('echo again-$((1 + 1))', { submit: true });
      expect((await s.wait({ forText: /^again-2$/m })).outcome).toBe('text');
      // Exactly one bash for this drive: the program was never started twice.
      expect(drivenBashes(socket)).toEqual(before);
    } finally {
      await d.close();
    }
  });

  it('keeps no screen content, typed text or secret in the journal (file and WAL bytes)', () => {
    const files = readdirSync(dataDir).filter((f) => f.startsWith('journal'));
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) {
      const bytes = readFileSync(join(dataDir, f));
      expect(bytes.includes(Buffer.from(SECRET)), f).toBe(false);
      expect(bytes.includes(Buffer.from(MARKER)), f).toBe(false);
      expect(bytes.includes(Buffer.from('again-')), f).toBe(false);
    }
  });

  it('refuses input to a second host while the first one lives', async () => {
    const host = await startHost(dataDir, 'held');
    try {
      const d = await Driver.open({ dataDir, config: CONFIG });
      try {
        expect(() => d.get('held')).toThrow(expect.objectContaining({ code: 'LEASE_HELD' }));
        // Listed, so a caller can see it exists, but as held by the other (live) host.
        expect(d.list().find((i) => i.id === 'held')).toMatchObject({ state: 'live', heldBy: host.pid });
      } finally {
        await d.close();
      }
    } finally {
      await killHard(host);
    }
  });

  it('reports a drive whose server was killed behind its back as failed, and never relaunches it', async () => {
    const d1 = await Driver.open({ dataDir, config: CONFIG });
    const s = await d1.create({ allowId: 'bash', args: ['--norc', '--noprofile'], name: 'gone' });
    await s.wait({ forText: '$ ' });
    await d1.close();
    const socket = join(dataDir, 'tmux', 'gone.sock');
    const server = processesMentioning(socket).find((pid) => readFileSync(`/proc/${pid}/cmdline`, 'latin1').includes('start-server'));
    expect(server).toBeDefined();
    process.kill(server!, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 200));
    const d2 = await Driver.open({ dataDir, config: CONFIG });
    try {
      expect(d2.list().find((i) => i.id === 'gone')).toMatchObject({ state: 'failed', reason: 'server_gone' });
      expect(processesMentioning(socket)).toEqual([]);
    } finally {
      await d2.close();
    }
  });
});
