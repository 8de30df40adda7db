/** The built CLI (dist/), as an operator or an agent runs it: a new process per command. */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { CONSENT } from '../helpers.js';

export const ROOT = resolve(__dirname, '../..');
export const CLI = join(ROOT, 'dist/lib/cli/main.js');

/** Builds dist/ only when it is missing (`npm test` builds before vitest anyway). */
export function ensureBuilt(): void {
  if (!existsSync(CLI)) execFileSync('npx', ['tsc', '-p', 'tsconfig.json'], { cwd: ROOT, stdio: 'inherit' });
}

export interface Run {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

const CLI_TIMEOUT_MS = 30_000;

/** One CLI process; resolves when it exits (never throws on a non-zero status). */
export function runCli(args: readonly string[], opts: { env?: NodeJS.ProcessEnv; input?: string } = {}): Promise<Run> {
  return new Promise((ok, fail) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: opts.env ?? process.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    // A CLI call that hangs fails the test with what it printed, instead of the test's own timeout.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new Error(`tmux-drive ${args.join(' ')} did not finish in ${CLI_TIMEOUT_MS} ms; stderr: ${stderr}`));
    }, CLI_TIMEOUT_MS);
    child.once('error', fail);
    child.once('close', (status) => {
      clearTimeout(timer);
      ok({ status, stdout, stderr });
    });
    child.stdin.end(opts.input ?? '');
  });
}

/** A private data dir and an operator config file (YAML) allowing bash and python3. */
export function testSetup(): { dir: string; dataDir: string; config: string } {
  const dir = mkdtempSync(join(tmpdir(), 'td-cli-'));
  const config = join(dir, 'config.yaml');
  const consent = `{ acknowledgedRisk: ${CONSENT.acknowledgedRisk}, acknowledgedAt: '${CONSENT.acknowledgedAt}' }`;
  writeFileSync(
    config,
    [
      'allow:',
      '  - id: bash',
      '    match: { path: /bin/bash }',
      "    env: { PS1: '$ ' }",
      `    consent: ${consent}`,
      '  - id: python3',
      '    match: { path: /usr/bin/python3 }',
      `    consent: ${consent}`,
      '',
    ].join('\n'),
  );
  return { dir, dataDir: join(dir, 'data'), config };
}
