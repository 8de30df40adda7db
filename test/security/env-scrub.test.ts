/**
 * The child's environment is built, never inherited: variables that steer interpreters, the
 * driver or a nested CLI are set in this (host) process before the driver opens and launches,
 * and none of them reaches the driven program, nor any process inside its jail.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import type { Session } from '../../lib/session/session.js';
import { allow, openDriver, type TestDriver } from '../helpers.js';
import { BASH_ARGS, BASH_ENTRY, probe, ready, workspaceOf } from './probe.js';

const CANARY = `canary${randomBytes(6).toString('hex')}`;
const HOSTILE: Record<string, string> = {
  NODE_OPTIONS: `--require /tmp/${CANARY}.js`,
  BASH_ENV: `/tmp/${CANARY}.sh`,
  ENV: `/tmp/${CANARY}.sh`,
  PYTHONSTARTUP: `/tmp/${CANARY}.py`,
  PYTHONPATH: `/tmp/${CANARY}`,
  PERL5OPT: `-M${CANARY}`,
  CLAUDECODE: '1',
  CLAUDE_CODE_X: CANARY,
  CLAUDE_CODE_ENTRYPOINT: CANARY,
  TMUX_DRIVE_X: CANARY,
  TMUX: `/tmp/${CANARY}/default,1,0`,
  TMUX_PANE: '%99',
  LD_PRELOAD: `/nonexistent/${CANARY}.so`,
  LD_LIBRARY_PATH: `/tmp/${CANARY}`,
  PROMPT_COMMAND: `echo ${CANARY}`,
  'BASH_FUNC_ls%%': `() { echo ${CANARY}; }`,
  'BASH_FUNC_echo%%': `() { builtin echo ${CANARY}; }`,
  AWS_SECRET_ACCESS_KEY: CANARY,
  GITHUB_TOKEN: CANARY,
  HOST_ONLY_SETTING: CANARY,
};

const saved = new Map<string, string | undefined>();
let t: TestDriver;
let s: Session;

beforeAll(async () => {
  for (const [k, v] of Object.entries(HOSTILE)) {
    saved.set(k, process.env[k]);
    process.env[k] = v;
  }
  t = await openDriver([
    allow('bash', '/bin/bash', {
      // An operator's fixed env: its scrubbed names are dropped, the rest kept.
      env: { ...BASH_ENTRY.env, OPERATOR_SETTING: 'kept', NODE_OPTIONS: `--require /tmp/${CANARY}-op.js`, BASH_ENV: `/tmp/${CANARY}-op.sh` },
      passEnv: ['CALLER_SETTING'],
    }),
  ]);
  s = await t.driver.create({ allowId: 'bash', args: BASH_ARGS, env: { CALLER_SETTING: 'passed' } });
  await ready(s);
});

afterAll(async () => {
  await t?.cleanup();
  for (const [k, v] of saved) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

/** `env -0` output as a map. */
function parseEnv0(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const entry of text.split('\0')) {
    const eq = entry.indexOf('=');
    if (eq > 0) out.set(entry.slice(0, eq), entry.slice(eq + 1));
  }
  return out;
}

describe('the environment of a driven program', () => {
  it('holds only the curated base, the entry env and passed caller variables', async () => {
    const ws = workspaceOf(t.dataDir);
    const r = await probe(s, ws, 'env -0');
    const env = parseEnv0(r.out);
    for (const name of Object.keys(HOSTILE)) expect(env.has(name), name).toBe(false);
    expect(r.out).not.toContain(CANARY);
    expect(env.get('OPERATOR_SETTING')).toBe('kept');
    expect(env.get('CALLER_SETTING')).toBe('passed');
    expect(env.get('HOME')).toBe(ws);
    expect(env.get('PATH')).toBe('/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin');
    // Anything else comes from bash itself (PWD, SHLVL, _) or from tmux, which sets SHELL (its
    // default-shell, from the passwd entry) and TERM_PROGRAM(_VERSION) in every pane.
    const allowed = new Set(['PATH', 'HOME', 'LANG', 'TERM', 'PS1', 'OPERATOR_SETTING', 'CALLER_SETTING', 'PWD', 'OLDPWD', 'SHLVL', '_', 'COLUMNS', 'LINES', 'SHELL', 'TERM_PROGRAM', 'TERM_PROGRAM_VERSION']);
    expect([...env.keys()].filter((k) => !allowed.has(k))).toEqual([]);
  });

  it('has no exported functions and no interpreter hooks in the interactive shell itself', async () => {
    const ws = workspaceOf(t.dataDir);
    await s.sendText(`declare -F > ${ws}/functions.txt; set > ${ws}/set.txt; echo "fn=$(declare -F | wc -l)"`, { submit: true });
    expect((await s.wait({ forText: /fn=\d+/, timeoutMs: 5000 })).outcome).toBe('text');
    expect(s.read().content).toMatch(/fn=0/);
    const r = await probe(s, ws, 'cat set.txt functions.txt');
    expect(r.out).not.toContain(CANARY);
  });

  it('leaks into no process of the jail (/proc/*/environ)', async () => {
    const r = await probe(s, workspaceOf(t.dataDir), 'for f in /proc/[0-9]*/environ; do tr "\\0" "\\n" < "$f" 2>/dev/null; done; echo scanned');
    expect(r.out).toContain('scanned');
    expect(r.out).not.toContain(CANARY);
  });

  it('reaches python3 without PYTHONSTARTUP or PYTHONPATH effects', async () => {
    const r = await probe(s, workspaceOf(t.dataDir), `python3 -c 'import os, sys; print(os.environ.get("PYTHONSTARTUP"), [p for p in sys.path if "${CANARY}" in p])'`);
    expect(r.out.trim()).toBe('None []');
  });
});
