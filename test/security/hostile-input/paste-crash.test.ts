/**
 * Typed text never outlives its paste on disk. A host (a child process running dist/: `npm run
 * build` first) drives a paste of a large secret while the drive's tmux server is SIGSTOPped, and
 * is SIGKILLed with the paste in flight. On 1eceb75 the text sat in `<dataDir>/tmux/.td-*`,
 * unredacted, also after the next open. Now a paste is `set-buffer` commands: nothing is written
 * to disk, and the next host's attach deletes the paste buffer a half-done paste left in tmux.
 * A paste file an older version left is swept when a driver opens.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, execFileSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { Driver } from '../../../lib/index.js';
import { findProcesses } from '../../../backends/process/process-tree.js';
import { isStartServerArgv } from '../../../lib/control/tmux-commands.js';
import { ensureBuilt } from '../../cli/dist.js';
import { CONSENT, killGone, processesMentioning } from '../../helpers.js';

const DIST = resolve(__dirname, '../../../dist/lib/index.js');
/** A program that takes its input and keeps nothing of it. */
const SINK = 'import os, sys, tty\ntty.setraw(0)\nos.write(1, b"READY\\r\\n")\nwhile os.read(0, 65536): pass\n';
const CONFIG = { allow: [{ id: 'sink', match: { path: '/usr/bin/python3' }, consent: CONSENT }] };

const HOST = `
import { Driver } from ${JSON.stringify(DIST)};
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
const [dataDir, textFile, sink, config] = process.argv.slice(1);
const say = (o) => process.stdout.write(JSON.stringify(o) + '\\n');
const driver = await Driver.open({ dataDir, config: JSON.parse(config), tmuxTimeoutMs: 60000 });
const s = await driver.create({ allowId: 'sink', name: 'paste', args: ['-c', sink] });
await s.wait({ forText: 'READY', timeoutMs: 20000 });
say({ ready: process.pid });
createInterface({ input: process.stdin }).on('line', (line) => {
  if (line !== 'paste') return;
  say({ pasting: true });
  s.sendText(readFileSync(textFile, 'utf8'), { paste: 'always' }).then(() => say({ sent: true }), (e) => say({ error: e.code }));
});
`;

/** Every file under `dir` whose bytes contain `needle`. */
function filesHolding(dir: string, needle: Buffer): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const st = statSync(path, { throwIfNoEntry: false });
    if (!st) continue;
    if (st.isDirectory()) out.push(...filesHolding(path, needle));
    else if (st.isFile() && readFileSync(path).includes(needle)) out.push(path);
  }
  return out;
}

function lines(child: ChildProcessWithoutNullStreams): AsyncIterator<Record<string, unknown>> {
  const rl = createInterface({ input: child.stdout });
  const it = rl[Symbol.asyncIterator]();
  return {
    next: async () => {
      const r = await it.next();
      return r.done ? r : { done: false, value: JSON.parse(r.value) as Record<string, unknown> };
    },
  };
}

let base: string;
beforeAll(() => {
  ensureBuilt();
  base = mkdtempSync(join(tmpdir(), 'td-paste-'));
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

describe('a host killed in the middle of a paste', () => {
  it('leaves the typed text nowhere on disk, before and after the next open, and not in tmux', async () => {
    const dataDir = join(base, 'data');
    // Secret-shaped, so the audit log (which records sends, redacted) keeps none of it either.
    const secret = `password=hunter2${randomBytes(8).toString('hex')}`;
    const text = `${secret}\n${'filler line of a large paste\n'.repeat(40_000)}`;
    const textFile = join(base, 'text');
    writeFileSync(textFile, text);
    const host = spawn(process.execPath, ['--input-type=module', '-e', HOST, dataDir, textFile, SINK, JSON.stringify(CONFIG)], { stdio: ['pipe', 'pipe', 'inherit'] });
    let server = -1;
    try {
      const replies = lines(host);
      expect((await replies.next()).value).toMatchObject({ ready: host.pid });
      const socket = join(dataDir, 'tmux', 'paste.sock');
      [server] = findProcesses((cmdline) => isStartServerArgv(cmdline.split('\0'), socket));
      expect(server).toBeGreaterThan(0);
      process.kill(server as number, 'SIGSTOP');
      host.stdin.write('paste\n');
      expect((await replies.next()).value).toMatchObject({ pasting: true });
      // The paste is on its way (a file written, on 1eceb75) while tmux cannot answer it.
      await new Promise((r) => setTimeout(r, 1500));
      host.kill('SIGKILL');
      await new Promise((r) => host.once('exit', r));
      rmSync(textFile);
      const needle = Buffer.from(secret);
      expect(filesHolding(base, needle)).toEqual([]);

      process.kill(server as number, 'SIGCONT');
      const driver = await Driver.open({ dataDir, config: CONFIG });
      try {
        expect(filesHolding(base, needle)).toEqual([]);
        const buffers = execFileSync('tmux', ['-S', socket, 'list-buffers', '-F', '#{buffer_name}'], { encoding: 'utf8' });
        expect(buffers.split('\n')).not.toContain('td-paste');
        await driver.get('paste').kill();
      } finally {
        await driver.close();
      }
      expect(filesHolding(base, needle)).toEqual([]);
    } finally {
      if (server > 0) {
        try {
          process.kill(server, 'SIGCONT');
        } catch {
          /* gone */
        }
      }
      host.kill('SIGKILL');
      killGone(processesMentioning(dataDir));
    }
  });

  it('sweeps a paste file an older version left, when a driver opens', async () => {
    const dataDir = join(base, 'legacy');
    const driver = await Driver.open({ dataDir, config: CONFIG });
    await driver.close();
    const legacy = join(dataDir, 'tmux', `.td-${randomBytes(6).toString('hex')}`);
    writeFileSync(legacy, 'password=hunter2 typed before a crash');
    const reopened = await Driver.open({ dataDir, config: CONFIG });
    await reopened.close();
    expect(existsSync(legacy)).toBe(false);
  });
});
