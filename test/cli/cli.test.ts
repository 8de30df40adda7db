/**
 * The CLI end to end, each command a new host process (durability carries the drive between
 * them): create → send → wait → read → status → kill; usage errors; one-line errors; attach
 * without a terminal; an asciicast export; doctor on this machine.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pty from 'node-pty';
import { processesMentioning } from '../helpers.js';
import { CLI, ensureBuilt, runCli, testSetup, type Run } from './dist.js';

let dir: string;
let dataDir: string;
let config: string;

const td = (...args: string[]): Promise<Run> => runCli(['--data-dir', dataDir, '--config', config, ...args]);

/** Exactly one line, `tmux-drive: CODE: message`. */
function oneErrorLine(r: Run, code: string): void {
  const lines = r.stderr.split('\n').filter((l) => l.length > 0);
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(new RegExp(`^tmux-drive: ${code}: \\S`));
}

beforeAll(() => {
  ensureBuilt();
  ({ dir, dataDir, config } = testSetup());
});

afterAll(async () => {
  // Whatever a failed test left running: kill through the CLI itself.
  const list = await td('list', '--json');
  if (list.status === 0) {
    for (const s of (JSON.parse(list.stdout) as { sessions: { id: string; state: string }[] }).sessions) {
      if (s.state === 'live') await td('kill', s.id);
    }
  }
  rmSync(dir, { recursive: true, force: true });
});

describe('tmux-drive CLI across processes', () => {
  it('creates a drive, types, waits, reads, classifies and kills it: one process per command', async () => {
    const created = await td('create', '--allow', 'bash', '--name', 'x', '--', '--norc', '--noprofile');
    expect(created.stderr).toBe('');
    expect(created.status).toBe(0);
    expect(created.stdout).toContain('created x');
    const socket = join(dataDir, 'tmux', 'x.sock');
    // The CLI process is gone; the drive is not.
    expect(processesMentioning(socket).length).toBeGreaterThan(0);

    const prompt = await td('wait', 'x', '--text', '$ ');
    expect(prompt.status).toBe(0);

    const sent = await td('send', 'x', 'echo hi-$((40 + 2))', '--submit');
    expect(sent.status, sent.stderr).toBe(0);

    const waited = await td('wait', 'x', '--text', 'hi-42', '--json');
    expect(waited.status, waited.stderr).toBe(0);
    expect(JSON.parse(waited.stdout)).toMatchObject({ id: 'x', outcome: 'text' });

    const read = await td('read', 'x');
    expect(read.status).toBe(0);
    expect(read.stdout).toMatch(/^hi-42$/m);

    const readJson = await td('read', 'x', '--json', '--format', 'ansi');
    expect(JSON.parse(readJson.stdout)).toMatchObject({ format: 'ansi', cols: 80, rows: 24, untrusted: true });

    const status = await td('status', 'x', '--json');
    expect(status.status).toBe(0);
    const st = JSON.parse(status.stdout) as { state: string; confidence: string; reason: string };
    expect(st).toMatchObject({ state: 'awaiting-input', confidence: 'high' });
    expect(typeof st.reason).toBe('string');

    const list = await td('list', '--json');
    expect(JSON.parse(list.stdout).sessions).toEqual([expect.objectContaining({ id: 'x', allowId: 'bash', state: 'live', durable: true })]);

    const killed = await td('kill', 'x');
    expect(killed.status).toBe(0);
    expect(killed.stdout.trim()).toBe('killed x');
    expect(processesMentioning(socket)).toEqual([]);

    const gone = await td('read', 'x');
    expect(gone.status).toBe(1);
    oneErrorLine(gone, 'SESSION_NOT_FOUND');
  });

  it('keys, resize, signal, wait timeouts (exit 124 with producing and a hint), attach without a terminal', async () => {
    expect((await td('create', '--allow', 'bash', '--name', 'k', '--cols', '100', '--rows', '30', '--', '--norc', '--noprofile')).status).toBe(0);
    expect((await td('wait', 'k', '--text', '$ ')).status).toBe(0);
    expect((await td('send', 'k', 'sleep 30')).status).toBe(0);
    expect((await td('key', 'k', 'Enter')).status).toBe(0);
    const busy = await td('wait', 'k', '--text', 'never-printed', '--timeout', '1500', '--json');
    expect(busy.status).toBe(124);
    expect(JSON.parse(busy.stdout)).toMatchObject({ outcome: 'timeout', producing: false, hint: expect.any(String) });
    expect((await td('signal', 'k', 'interrupt')).status).toBe(0);
    expect((await td('wait', 'k', '--regex', '^\\$ $', '--timeout', '5000')).status).toBe(0);
    const resized = await td('resize', 'k', '90', '20', '--json');
    expect(JSON.parse(resized.stdout)).toEqual({ id: 'k', cols: 90, rows: 20 });
    expect(JSON.parse((await td('read', 'k', '--json')).stdout)).toMatchObject({ cols: 90, rows: 20 });

    const attach = await td('attach', 'k', '--read-only');
    expect(attach.status).toBe(0);
    expect(attach.stdout.trim()).toMatch(/tmux -S \S+\/k\.sock attach-session -r -t =k:$/);
    const attachJson = JSON.parse((await td('attach', 'k', '--json')).stdout) as { argv: string[] };
    expect(attachJson.argv.slice(-3)).toEqual(['attach-session', '-t', '=k:']);

    const badKey = await td('key', 'k', 'Frob');
    expect(badKey.status).toBe(2);
    oneErrorLine(badKey, 'UNKNOWN_KEY_NAME');
    expect((await td('kill', 'k')).status).toBe(0);
  });

  it('a drive that ended between commands is never listed live; prune ends its kept server and forgets it', async () => {
    // Ends 3 s after create, while no CLI process holds it; nonzero, so its server is kept.
    const program = 'sleep 3; exit 5 # ends-between-commands';
    expect((await td('create', '--allow', 'bash', '--name', 'ends', '--', '--norc', '--noprofile', '-c', program)).status).toBe(0);
    // Until the program is gone (its 3 s start late on a loaded machine), without a CLI holding it.
    const deadline = Date.now() + 20_000;
    do await new Promise((r) => setTimeout(r, 500));
    while (spawnSync('pgrep', ['-f', `^[^ ]*bash --norc --noprofile -c ${program}$`]).status === 0 && Date.now() < deadline);
    const listed = JSON.parse((await td('list', '--json')).stdout) as { sessions: { id: string; state: string; exit?: { code: number } }[] };
    expect(listed.sessions.find((x) => x.id === 'ends')).toMatchObject({ state: 'exited', exit: { code: 5 } });
    const again = JSON.parse((await td('list', '--json')).stdout) as { sessions: { id: string; state: string }[] };
    expect(again.sessions.filter((x) => x.id === 'ends' && x.state === 'live')).toEqual([]);
    const socket = join(dataDir, 'tmux', 'ends.sock');
    expect(processesMentioning(socket).length).toBeGreaterThan(0);
    // kill of a drive that had already ended: the end a script asks for holds, so exit 0, said plainly.
    const killed = await td('kill', 'ends', '--json');
    expect(killed.status).toBe(0);
    expect(JSON.parse(killed.stdout)).toEqual({ id: 'ends', killed: false, state: 'exited' });
    expect((await td('kill', 'ends')).stdout.trim()).toBe('ends had already ended (exited); nothing to kill (prune forgets it and ends a kept server)');
    expect((await td('kill', 'never-made')).status).not.toBe(0);
    const pruned = await td('prune', '--json');
    expect(pruned.status).toBe(0);
    // The drives this file killed before are finished too (kept as exited rows): prune takes them all.
    const all = (JSON.parse(pruned.stdout) as { pruned: { id: string; state: string; pruned: boolean }[] }).pruned;
    expect(all).toContainEqual(expect.objectContaining({ id: 'ends', state: 'exited', exit: expect.objectContaining({ code: 5 }), pruned: true }));
    expect(all.filter((d) => !d.pruned || d.state === 'live')).toEqual([]);
    expect(processesMentioning(socket)).toEqual([]);
    expect((await td('prune')).stdout.trim()).toBe('no finished drives');
  });

  it('attaches this terminal when stdin is one: the operator sees the drive, detaches with C-b d, and the drive lives on', async () => {
    expect((await td('create', '--allow', 'bash', '--name', 'op', '--', '--norc', '--noprofile')).status).toBe(0);
    expect((await td('send', 'op', 'echo operator-$((5 * 5))', '--submit')).status).toBe(0);
    expect((await td('wait', 'op', '--text', 'operator-25')).status).toBe(0);
    const term = pty.spawn(process.execPath, [CLI, '--data-dir', dataDir, '--config', config, 'attach', 'op'], {
      cols: 100,
      rows: 30,
      env: { ...process.env, TERM: 'xterm-256color' } as Record<string, string>,
    });
    let seen = '';
    const exited = new Promise<number>((ok) => term.onExit(({ exitCode }) => ok(exitCode)));
    await new Promise<void>((ok, fail) => {
      const timer = setTimeout(() => fail(new Error(`no drive screen on the attached terminal: ${JSON.stringify(seen)}`)), 10_000);
      term.onData((d) => {
        seen += d;
        if (seen.includes('operator-25')) {
          clearTimeout(timer);
          ok();
        }
      });
    });
    // C-b d: detach. On a loaded machine tmux may still be settling in: say it again if needed.
    term.write('\x02d');
    const again = setInterval(() => term.write('\x02d'), 3000);
    try {
      expect(await exited).toBe(0);
    } finally {
      clearInterval(again);
    }
    const after = await td('read', 'op');
    expect(after.stdout).toMatch(/^operator-25$/m);
    expect((await td('kill', 'op')).status).toBe(0);
  });

  it('exports the transcript as asciicast v2 (JSON lines, header then events)', async () => {
    expect((await td('create', '--allow', 'bash', '--name', 'cast', '--', '--norc', '--noprofile')).status).toBe(0);
    expect((await td('send', 'cast', 'echo recorded-$((6 * 7))', '--submit')).status).toBe(0);
    expect((await td('wait', 'cast', '--text', 'recorded-42')).status).toBe(0);
    const r = await td('transcript', 'cast', '--asciicast');
    expect(r.status, r.stderr).toBe(0);
    const lines = r.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as unknown);
    expect(lines[0]).toMatchObject({ version: 2, width: 80, height: 24, timestamp: expect.any(Number), env: { TERM: expect.any(String) } });
    const events = lines.slice(1) as [number, string, string][];
    expect(events.length).toBeGreaterThan(0);
    for (const e of events) {
      expect(e).toHaveLength(3);
      expect(['o', 'i', 'r', 'm']).toContain(e[1]);
    }
    expect(events.filter((e) => e[1] === 'o').map((e) => e[2]).join('')).toContain('recorded-42');
    const json = JSON.parse((await td('transcript', 'cast', '--json')).stdout) as { entries: { kind: string }[] };
    expect(json.entries.some((e) => e.kind === 'gap')).toBe(true);
    expect((await td('kill', 'cast')).status).toBe(0);
  });

  it('rejects bad usage with exit 2 and one line on stderr, before touching anything', async () => {
    const cases: string[][] = [
      ['frobnicate'],
      ['read'],
      ['list', '--frob'],
      ['create', '--name', 'y'],
      ['create', '--allow', 'bash', 'stray'],
      ['read', 'x', '--format', 'pdf'],
      ['resize', 'x', 'wide', '20'],
      ['wait', 'x', '--text', 'a', '--regex', 'b'],
      ['signal', 'x', 'SIGFOO'],
      ['--bogus', 'list'],
      [],
    ];
    for (const args of cases) {
      const r = await runCli(['--data-dir', join(dir, 'untouched'), ...args]);
      expect(r.status, args.join(' ')).toBe(2);
      if (args.length > 0) oneErrorLine(r, 'BAD_ARGUMENT');
      expect(r.stdout).toBe('');
    }
    // Usage errors are caught before a driver opens: no data dir was created.
    expect(spawnSync('ls', [join(dir, 'untouched')]).status).not.toBe(0);
    const json = await runCli(['--json', 'read']);
    expect(json.status).toBe(2);
    expect(JSON.parse(json.stdout)).toEqual({ error: { code: 'BAD_ARGUMENT', message: expect.stringContaining('read') } });
  });

  it('reports policy and config errors as one line (and a JSON error object with --json)', async () => {
    const denied = await td('create', '--allow', 'vim', '--json');
    expect(denied.status).toBe(1);
    oneErrorLine(denied, 'NOT_ALLOWED');
    expect(JSON.parse(denied.stdout)).toMatchObject({ error: { code: 'NOT_ALLOWED' } });

    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'allow: []\nworker: { maxSessions: 0, bogus: 1 }\n');
    const invalid = await runCli(['--data-dir', dataDir, '--config', bad, '--json', 'list']);
    expect(invalid.status).toBe(1);
    oneErrorLine(invalid, 'CONFIG_INVALID');
    const err = JSON.parse(invalid.stdout) as { error: { issues: { path: string }[] } };
    expect(err.error.issues.map((i) => i.path).sort()).toEqual(['worker.bogus', 'worker.maxSessions']);
  });

  it('prints help and the version', async () => {
    const help = await runCli(['--help']);
    expect(help.status).toBe(0);
    for (const cmd of ['create', 'list', 'read', 'send', 'key', 'wait', 'status', 'resize', 'signal', 'kill', 'attach', 'transcript', 'doctor', 'mcp']) {
      expect(help.stdout).toMatch(new RegExp(`^  ${cmd} `, 'm'));
    }
    expect((await runCli(['wait', '--help'])).stdout).toContain('usage: tmux-drive wait ID');
    const pkg = JSON.parse(readFileSync(join(__dirname, '../../package.json'), 'utf8')) as { version: string };
    expect((await runCli(['--version'])).stdout.trim()).toBe(`tmux-drive ${pkg.version}`);
  });
});

describe('tmux-drive doctor', () => {
  it('reports this machine truthfully', async () => {
    const r = await td('doctor', '--json');
    const report = JSON.parse(r.stdout) as { ok: boolean; checks: { name: string; ok: boolean; required: boolean; detail: string }[] };
    const check = (name: string) => report.checks.find((c) => c.name === name);
    const tmuxV = spawnSync('tmux', ['-V'], { encoding: 'utf8' }).stdout.trim();
    expect(check('tmux')).toMatchObject({ ok: true, detail: expect.stringContaining(tmuxV) });
    const jail = spawnSync('bwrap', ['--ro-bind', '/', '/', '--unshare-all', '--die-with-parent', '/bin/true']);
    expect(check('bwrap')?.ok).toBe(jail.status === 0);
    expect(check('data dir')).toMatchObject({ ok: true });
    expect(check('config')).toMatchObject({ ok: true, detail: expect.stringContaining('2 allow entries (bash, python3)') });
    expect(check('node-pty')?.ok).toBe(true);
    expect(check('shm view')).toMatchObject({ ok: true, required: false });
    expect(check('allow bash')?.ok).toBe(true);
    expect(r.status).toBe(report.ok ? 0 : 1);
    const text = await td('doctor');
    for (const line of text.stdout.split('\n').filter((l) => /^\S/.test(l))) expect(line).toMatch(/^(ok  |FAIL|warn)  /);
  });

  it('fails with the fix when tmux and bwrap are missing', async () => {
    const r = await runCli(['--data-dir', dataDir, '--config', config, 'doctor'], { env: { ...process.env, PATH: '/nonexistent' } });
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/^FAIL {2}tmux .*\n\s+fix: install tmux 3\.2 or later/m);
    expect(r.stdout).toMatch(/^FAIL {2}bwrap .*\n\s+fix: apt-get install bubblewrap/m);
    oneErrorLine(r, 'DOCTOR_FAILED');
  });
});
