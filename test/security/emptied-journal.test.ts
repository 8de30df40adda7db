/**
 * Issue 10, item 6: an emptied journal silently forgot live drives. Truncating journal.sqlite3 to
 * 0 bytes (or deleting it) made Driver.open start a fresh journal while the drive's program kept
 * running, unreachable and unlisted. Now a live tmux server of the data dir that the journal has
 * no row for is never silent: open() refuses with JOURNAL_ORPHANS naming it (changing nothing), and
 * the operator may adopt it explicitly (`adoptOrphans: true`, CLI `--adopt-orphans`): a `detached`
 * row with allowId `adopted`, an `orphan_adopted` incident, then the usual re-attach. A server that
 * another live process still drives is never adopted. Real tmux, real bwrap, real bash; the second
 * host is a real child process running the built library (dist/).
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ADOPTED_ALLOW_ID, Driver, TmuxDriveError } from '../../lib/index.js';
import { Journal } from '../../journal/journal.js';
import { validateConfig } from '../../lib/policy/config.js';
import { socketAnswers } from '../../backends/tmux/tmux-host.js';
import { CONSENT, processesMentioning } from '../helpers.js';
import { ensureBuilt, runCli } from '../cli/dist.js';

const CONFIG = { allow: [{ id: 'bash', match: { path: '/bin/bash' }, env: { PS1: '$ ' }, consent: CONSENT }] };
const DIST = resolve(__dirname, '../../dist/lib/index.js');

const cleanups: Array<() => Promise<void> | void> = [];

beforeAll(() => {
  ensureBuilt();
});

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A data dir with one live, detached drive `name` (bash), its driver closed. */
async function dataDirWithDrive(name: string): Promise<string> {
  const dataDir = mkdtempSync(join(tmpdir(), 'td-orph-'));
  cleanups.push(() => {
    // Whatever the test left running: end every process of the data dir, loudly counted.
    for (const pid of processesMentioning(dataDir)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    rmSync(dataDir, { recursive: true, force: true });
  });
  const d = await Driver.open({ dataDir, config: CONFIG });
  const s = await d.create({ allowId: 'bash', args: ['--norc', '--noprofile'], name });
  await s.wait({ forText: '$ ' });
  await s.sendText('echo before-$((6 * 7))', { submit: true });
  await s.wait({ forText: 'before-42' });
  await d.close();
  return dataDir;
}

function journalFiles(dataDir: string): string[] {
  return ['journal.sqlite3', 'journal.sqlite3-wal', 'journal.sqlite3-shm'].map((f) => join(dataDir, f));
}

async function openError(opts: Parameters<typeof Driver.open>[0]): Promise<TmuxDriveError> {
  const err = await Driver.open(opts).then(
    async (d) => {
      await d.close();
      return undefined;
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(TmuxDriveError);
  return err as TmuxDriveError;
}

async function endDrive(dataDir: string, name: string): Promise<void> {
  const d = await Driver.open({ dataDir, config: CONFIG, adoptOrphans: true });
  try {
    if (d.list().some((i) => i.id === name && i.state === 'live')) await d.get(name).kill();
  } finally {
    await d.close();
  }
}

describe('a journal emptied or deleted under a live drive', () => {
  it.each([
    ['truncated to 0 bytes', (dataDir: string) => journalFiles(dataDir).forEach((f) => existsSync(f) && truncateSync(f, 0))],
    ['deleted', (dataDir: string) => journalFiles(dataDir).forEach((f) => rmSync(f, { force: true }))],
  ])('%s: open() refuses with JOURNAL_ORPHANS naming the drive, and changes nothing', async (_how, lose) => {
    const dataDir = await dataDirWithDrive('keep');
    const socket = join(dataDir, 'tmux', 'keep.sock');
    cleanups.push(() => endDrive(dataDir, 'keep'));
    lose(dataDir);
    for (let attempt = 0; attempt < 2; attempt++) {
      const err = await openError({ dataDir, config: CONFIG });
      expect(err.code).toBe('JOURNAL_ORPHANS');
      expect(err.message).toContain('keep');
      expect(err.message).toContain('adoptOrphans');
      expect(err.context).toMatchObject({ orphans: [{ name: 'keep', socket }] });
    }
    // Nothing was adopted or written, and the program still runs.
    const j = Journal.open(dataDir);
    expect(j.listSessions()).toEqual([]);
    expect(j.incidents()).toEqual([]);
    j.close();
    expect(await socketAnswers(socket, 2000)).toBe(true);
  });

  it('adoptOrphans: re-attached under its name, with an incident, driveable, its screen intact', async () => {
    const dataDir = await dataDirWithDrive('adoptme');
    journalFiles(dataDir).forEach((f) => rmSync(f, { force: true }));
    const warnings: string[] = [];
    const d = await Driver.open({ dataDir, config: CONFIG, adoptOrphans: true, logger: { warn: (m) => warnings.push(m) } });
    cleanups.push(() => d.close());
    expect(d.list()).toEqual([expect.objectContaining({ id: 'adoptme', state: 'live', allowId: ADOPTED_ALLOW_ID, durable: true })]);
    expect(warnings.some((w) => w.includes('adopted drive "adoptme"'))).toBe(true);
    const s = d.get('adoptme');
    expect(s.read().content).toContain('before-42');
    expect((await s.fidelity()).equal).toBe(true);
    await s.sendText('echo after-$((40 + 2))', { submit: true });
    expect((await s.wait({ forText: /^after-42$/m, timeoutMs: 10_000 })).outcome).toBe('text');
    expect(d.events('adoptme').map((e) => e.kind)).toContain('reattach');
    await s.kill();
    await d.close();
    const j = Journal.open(dataDir);
    expect(j.incidents({ sessionId: 'adoptme' }).map((i) => i.kind)).toContain('orphan_adopted');
    expect(j.getSession('adoptme')).toMatchObject({ state: 'exited', allowId: ADOPTED_ALLOW_ID });
    j.close();
  });

  it('no allow entry may be called "adopted": its limits and answers would apply to drives nobody knows', () => {
    expect(() => validateConfig({ allow: [{ id: ADOPTED_ALLOW_ID, match: { path: '/bin/bash' }, consent: CONSENT }] }, { fromFile: true })).toThrow(
      expect.objectContaining({ code: 'CONFIG_INVALID', issues: [{ path: 'allow.0.id', message: expect.stringContaining('reserved') }] }),
    );
  });

  it('the CLI says how to adopt, and --adopt-orphans does it', async () => {
    const dataDir = await dataDirWithDrive('cli-orphan');
    cleanups.push(() => endDrive(dataDir, 'cli-orphan'));
    const config = join(dataDir, '..', `${dataDir.split('/').pop()}.yaml`);
    writeFileSync(config, `allow:\n  - id: bash\n    match: { path: /bin/bash }\n    consent: { acknowledgedRisk: true, acknowledgedAt: '${CONSENT.acknowledgedAt}' }\n`);
    cleanups.push(() => rmSync(config, { force: true }));
    journalFiles(dataDir).forEach((f) => existsSync(f) && truncateSync(f, 0));
    const refused = await runCli(['--data-dir', dataDir, '--config', config, '--json', 'list']);
    expect(refused.status).toBe(1);
    expect(JSON.parse(refused.stdout)).toMatchObject({ error: { code: 'JOURNAL_ORPHANS', message: expect.stringContaining('--adopt-orphans') } });
    const adopted = await runCli(['--data-dir', dataDir, '--config', config, '--adopt-orphans', '--json', 'list']);
    expect(adopted.status, adopted.stderr).toBe(0);
    expect(adopted.stderr).toContain('adopted drive "cli-orphan"');
    expect(JSON.stringify(JSON.parse(adopted.stdout))).toContain('cli-orphan');
    const listed = await runCli(['--data-dir', dataDir, '--config', config, '--json', 'list']);
    expect(listed.status, listed.stderr).toBe(0);
  });

  it('a drive another live process still drives is never adopted (no double drive): refused naming that pid', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'td-orph-'));
    let host: ChildProcess | undefined;
    cleanups.push(() => {
      host?.kill('SIGKILL');
      for (const pid of processesMentioning(dataDir)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          /* gone */
        }
      }
      rmSync(dataDir, { recursive: true, force: true });
    });
    host = await startHost(dataDir, 'held');
    // The operator empties the journal while the daemon runs: truncated, the daemon's WAL makes the
    // file unreadable (a typed refusal too); deleted, the daemon keeps writing its unlinked copy.
    truncateSync(join(dataDir, 'journal.sqlite3'), 0);
    const unreadable = await openError({ dataDir, config: CONFIG, adoptOrphans: true });
    expect(unreadable.code).toBe('JOURNAL_UNREADABLE');
    journalFiles(dataDir).forEach((f) => rmSync(f, { force: true }));
    const err = await openError({ dataDir, config: CONFIG, adoptOrphans: true });
    expect(err.code).toBe('JOURNAL_ORPHANS');
    expect(err.context).toMatchObject({ orphans: [{ name: 'held', heldBy: host.pid }] });
    expect(err.message).toContain(`driven by pid ${host.pid}`);
    // The holder still drives it: its control client is attached and answers.
    host.stdin?.write('ping\n');
    await new Promise<void>((ok, fail) => {
      const t = setTimeout(() => fail(new Error('the holder stopped answering')), 10_000);
      host?.stdout?.on('data', (b: Buffer) => {
        if (b.toString().includes('PONG-42')) {
          clearTimeout(t);
          ok();
        }
      });
    });
  });
});

/** A host process (dist/) that creates drive `name` and answers "ping" lines by typing into it. */
function startHost(dataDir: string, name: string): Promise<ChildProcess> {
  const script = `
    import { Driver } from ${JSON.stringify(DIST)};
    import { createInterface } from 'node:readline';
    const d = await Driver.open({ dataDir: ${JSON.stringify(dataDir)}, config: ${JSON.stringify(CONFIG)} });
    const s = await d.create({ allowId: 'bash', args: ['--norc', '--noprofile'], name: ${JSON.stringify(name)} });
    await s.wait({ forText: '$ ' });
    process.stdout.write('READY\\n');
    createInterface({ input: process.stdin }).on('line', async () => {
      await s.sendText('echo PONG-$((40 + 2))', { submit: true });
      const r = await s.wait({ forText: /^PONG-42$/m, timeoutMs: 10000 });
      process.stdout.write(r.outcome === 'text' ? 'PONG-42\\n' : 'NO-PONG\\n');
    });
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  return new Promise((ok, fail) => {
    child.stdout?.on('data', (d: Buffer) => {
      if (d.toString().includes('READY')) ok(child);
    });
    child.on('exit', (code) => fail(new Error(`host exited early with ${code}`)));
  });
}
