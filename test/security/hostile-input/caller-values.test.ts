/**
 * Caller values that once reached tmux's format expander, end to end: a `cwd` of `#(touch …)` ran
 * `touch` on the host, outside bwrap (tmux format-expands `new-session -c`), through the library,
 * the CLI's --cwd and the MCP `cwd`. Now the working directory never reaches tmux: the program
 * starts in the clamped directory (bwrap --chdir, or env -C unsandboxed) and nothing runs. Also the
 * name, the arguments, environment values and a data dir whose path holds `#(…)`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Driver } from '../../../lib/index.js';
import { allow, openDriver, processesMentioning, type TestDriver } from '../../helpers.js';
import { CLI, ensureBuilt, runCli, testSetup } from '../../cli/dist.js';

const MARK = mkdtempSync(join(tmpdir(), 'td-marks-'));
const mark = (what: string): string => join(MARK, `pwned-${what}`);

/** The program: writes its cwd, PWD and argv (as UTF-8 bytes, hex) to `$HOME/<file>`, then exits. */
const PROBE = [
  'import os, sys, json',
  'res = {"cwd": os.getcwd(), "pwd": os.environ.get("PWD"), "argv": [os.fsencode(a).hex() for a in sys.argv[2:]], "env": os.environ.get("PASSED")}',
  'p = os.path.join(os.environ["HOME"], sys.argv[1])',
  'open(p + ".part", "w").write(json.dumps(res))',
  'os.rename(p + ".part", p)',
].join('\n');

/**
 * The probe, then it waits for a key that never comes: the CLI's `kill` (a new process) must find
 * it live. A probe that exited at once ended while `create`'s process still held the drive now and
 * then (under load), its row became `exited`, and `kill` then exited 1 (SESSION_NOT_FOUND).
 */
const PROBE_THEN_WAIT = `${PROBE}\nsys.stdin.buffer.read(1)`;

interface Probed {
  readonly cwd: string;
  readonly pwd: string | null;
  readonly argv: string[];
  readonly env: string | null;
}

async function waitForFile(path: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!existsSync(path)) {
    if (Date.now() > deadline) throw new Error(`${path} did not appear within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function nothingRan(): void {
  for (const dir of [MARK, process.cwd(), '/']) {
    for (const f of ['pwned', 'pwned-datadir']) expect(existsSync(join(dir, f)), join(dir, f)).toBe(false);
  }
  expect(existsSync(MARK) ? readdirSync(MARK) : []).toEqual([]);
}

/** cwd values and where the program must find itself (relative to the workspace). */
const CWDS: ReadonlyArray<readonly [cwd: string, expected: string]> = [
  [`#(touch ${mark('cwd')})`, `#(touch ${mark('cwd')})`],
  [`sub/#(touch ${mark('sub')})/x`, `sub/#(touch ${mark('sub')})/x`],
  ['#{pane_id}#{session_name}', '#{pane_id}#{session_name}'],
  [`$(touch ${mark('subst')}) \`touch ${mark('tick')}\``, `$(touch ${mark('subst')}) \`touch ${mark('tick')}\``],
  [`../#(touch ${mark('up')})`, ''],
  [`/#(touch ${mark('abs')})`, ''],
  ["a'b\"c;d\\e%f~g #h", "a'b\"c;d\\e%f~g #h"],
  ['line\nbreak', 'line\nbreak'],
];

describe.each([false, true])('a hostile cwd through the library (sandbox disabled: %s)', (unsandboxed) => {
  let t: TestDriver;
  let configDir: string | undefined;
  beforeAll(async () => {
    const entry = allow('py', '/usr/bin/python3', { passEnv: ['PASSED'] });
    if (!unsandboxed) {
      t = await openDriver([entry]);
      return;
    }
    // unsafeDisableSandbox is taken only from an operator's file.
    configDir = mkdtempSync(join(tmpdir(), 'td-conf-'));
    const file = join(configDir, 'config.json');
    writeFileSync(file, JSON.stringify({ unsafeDisableSandbox: true, allow: [entry] }));
    const dataDir = mkdtempSync(join(tmpdir(), 'td-'));
    const driver = await Driver.open({ dataDir, config: file, logger: { warn: () => undefined } });
    t = {
      driver,
      dataDir,
      cleanup: async () => {
        for (const info of driver.list()) if (info.state === 'live') await driver.get(info.id).kill().catch(() => undefined);
        await driver.close();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  });
  afterAll(async () => {
    await t?.cleanup();
    if (configDir) rmSync(configDir, { recursive: true, force: true });
  });

  it.each(CWDS)('cwd %j: the program starts in the clamped directory and nothing runs', async (cwd, expected) => {
    const out = `probe-${Math.random().toString(16).slice(2)}.json`;
    const s = await t.driver.create({ allowId: 'py', cwd, args: ['-c', PROBE, out] });
    const workspace = realpathSync(join(t.dataDir, 'workspace'));
    await waitForFile(join(workspace, out));
    const got = JSON.parse(readFileSync(join(workspace, out), 'utf8')) as Probed;
    const want = expected === '' ? workspace : join(workspace, expected);
    expect(got.cwd).toBe(want);
    expect(got.pwd).toBe(want);
    await s.kill();
    nothingRan();
  });

  it('arguments and environment values reach the program exactly; hostile names are refused', async () => {
    const args = [`#(touch ${mark('arg')})`, '#{pane_id}', 'a;', ';', '\\;', "'", '-l', '%if 1', '~', '$HOME', 'é😀', 'multi\nline', ''];
    const out = 'args.json';
    const s = await t.driver.create({ allowId: 'py', args: ['-c', PROBE, out, ...args], env: { PASSED: `#(touch ${mark('env')}) $(touch ${mark('env2')})` } });
    const workspace = realpathSync(join(t.dataDir, 'workspace'));
    await waitForFile(join(workspace, out));
    const got = JSON.parse(readFileSync(join(workspace, out), 'utf8')) as Probed;
    expect(got.argv).toEqual(args.map((a) => Buffer.from(a).toString('hex')));
    expect(got.env).toBe(`#(touch ${mark('env')}) $(touch ${mark('env2')})`);
    await s.kill();
    for (const name of [`#(touch ${mark('name')})`, 'a;b', 'x y', '-t', '%0', '=x', 'a:b', 'a.b']) {
      await expect(t.driver.create({ allowId: 'py', name, args: ['-c', 'pass'] })).rejects.toMatchObject({ code: 'BAD_ARGUMENT' });
    }
    nothingRan();
  });
});

describe('a data dir whose path holds #(…)', () => {
  it('opens, launches, pastes, resizes, checks fidelity and kills with nothing run', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'td-#(touch pwned-datadir)-'));
    try {
      const driver = await Driver.open({ dataDir, config: { allow: [allow('bash', '/bin/bash', { env: { PS1: '$ ' } })] } });
      try {
        const s = await driver.create({ allowId: 'bash', args: ['--norc', '--noprofile'], name: 'd' });
        expect((await s.wait({ forText: '$ ', timeoutMs: 10_000 })).outcome).toBe('text');
        await s.sendText('echo "pasted #(x)"\necho two', { paste: 'always', submit: true });
        expect((await s.wait({ forText: /^two$/m, timeoutMs: 10_000 })).outcome).toBe('text');
        await s.resize(90, 20);
        expect((await s.fidelity()).equal).toBe(true);
        await s.kill();
      } finally {
        await driver.close();
      }
      nothingRan();
      expect(processesMentioning(dataDir)).toEqual([]);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('a hostile cwd through the CLI and the MCP server (dist/)', () => {
  let dir: string;
  let dataDir: string;
  let config: string;
  beforeAll(() => {
    ensureBuilt();
    ({ dir, dataDir, config } = testSetup());
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('tmux-drive create --cwd "#(touch …)": the program starts there, nothing runs', async () => {
    const cwd = `#(touch ${mark('cli')})`;
    const created = await runCli(['--data-dir', dataDir, '--config', config, 'create', '--allow', 'python3', '--name', 'cli', '--cwd', cwd, '--', '-c', PROBE_THEN_WAIT, 'cli.json']);
    expect(created.status, created.stderr).toBe(0);
    const workspace = realpathSync(join(dataDir, 'workspace'));
    await waitForFile(join(workspace, 'cli.json'));
    expect((JSON.parse(readFileSync(join(workspace, 'cli.json'), 'utf8')) as Probed).cwd).toBe(join(workspace, cwd));
    expect((await runCli(['--data-dir', dataDir, '--config', config, 'kill', 'cli'])).status).toBe(0);
    nothingRan();
  });

  it('the MCP terminal_session_create cwd "#(touch …)": the program starts there, nothing runs', async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', '--data-dir', dataDir, '--config', config], stderr: 'inherit' });
    const client = new Client({ name: 'hostile-input', version: '0.0.0' });
    await client.connect(transport);
    try {
      const cwd = `#(touch ${mark('mcp')})`;
      const r = (await client.callTool({ name: 'terminal_session_create', arguments: { allowId: 'python3', name: 'mcp', cwd, args: ['-c', PROBE, 'mcp.json'] } })) as { isError?: boolean; content: { text?: string }[] };
      expect(r.isError, r.content.map((c) => c.text).join('')).toBeFalsy();
      const workspace = realpathSync(join(dataDir, 'workspace'));
      await waitForFile(join(workspace, 'mcp.json'));
      expect((JSON.parse(readFileSync(join(workspace, 'mcp.json'), 'utf8')) as Probed).cwd).toBe(join(workspace, cwd));
      await client.callTool({ name: 'terminal_session_kill', arguments: { sessionId: 'mcp' } });
    } finally {
      await client.close();
    }
    nothingRan();
  });
});

afterAll(() => {
  nothingRan();
  rmSync(MARK, { recursive: true, force: true });
});
