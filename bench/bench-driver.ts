/**
 * The library side of every benchmark: a Driver over a private data dir, allowing
 * `bash --norc --noprofile` with PS1='$ ' (sandboxed with bwrap, as the default config has it).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Driver, type Session } from '../lib/index.js';
import { TMUX } from './baseline-server.js';
import { displayMessageArgv } from '../lib/control/tmux-commands.js';

export const BASH_ARGS = ['--norc', '--noprofile'];
const CONSENT = { acknowledgedRisk: true as const, acknowledgedAt: '2026-11-30T00:00:00Z' };

export class BenchDriver {
  private constructor(
    readonly driver: Driver,
    /** Canonical data dir (the driver's). */
    readonly dataDir: string,
    private readonly createdDir: string,
  ) {}

  static async open(opts: { maxSessions?: number } = {}): Promise<BenchDriver> {
    // Short: the drive sockets live under it and sun_path holds 107 bytes.
    const dir = mkdtempSync(join(tmpdir(), 'tdb-'));
    try {
      const driver = await Driver.open({
        dataDir: dir,
        config: {
          worker: { maxSessions: opts.maxSessions ?? 8 },
          allow: [{ id: 'bash', match: { path: '/bin/bash' }, env: { PS1: '$ ' }, consent: CONSENT }],
        },
      });
      return new BenchDriver(driver, driver.dataDir, dir);
    } catch (err) {
      rmSync(dir, { recursive: true, force: true });
      throw err;
    }
  }

  /** The directory every drive sees as its (writable) workspace, at the same path inside the jail. */
  get workspace(): string {
    return join(this.dataDir, 'workspace');
  }

  socketOf(name: string): string {
    return join(this.dataDir, 'tmux', `${name}.sock`);
  }

  /** A bash drive at its prompt. */
  async bash(name: string, cols: number, rows: number): Promise<Session> {
    const s = await this.driver.create({ allowId: 'bash', args: BASH_ARGS, name, cols, rows });
    const ready = await s.wait({ forText: '$ ', timeoutMs: 10_000 });
    if (ready.outcome !== 'text') throw new Error(`bash drive ${name} showed no prompt (${ready.outcome})`);
    return s;
  }

  /** Host pid of a drive's tmux server, asked of tmux itself through a subprocess (outside any measurement). */
  serverPid(name: string): Promise<number> {
    return new Promise((resolve, reject) => {
      execFile(TMUX, ['-S', this.socketOf(name), ...displayMessageArgv(name, '#{pid}')], { timeout: 5000 }, (err, stdout) => {
        if (err) reject(err);
        else resolve(Number(stdout.trim()));
      });
    });
  }

  /** Kills every session (verified by the library), closes the driver, removes the data dir. */
  async close(): Promise<void> {
    const failures: string[] = [];
    await Promise.all(
      this.driver.list().map(async (info) => {
        if (info.state === 'failed') return;
        await this.driver.get(info.id).kill().catch((err: unknown) => failures.push(`${info.id}: ${String(err)}`));
      }),
    );
    await this.driver.close();
    rmSync(this.createdDir, { recursive: true, force: true });
    if (failures.length > 0) throw new Error(`kill failed for ${failures.join('; ')}`);
  }
}
