/**
 * A Session over a real program in a pty (the spawn backend), built the way the driver builds one
 * (a Session, its listener passed to the backend's launch, then bind) but with the SessionInit a
 * test chooses: a `beforeInput` that refuses, a profile, caps. The driver always wires the lease
 * as `beforeInput`; here a test can make this process lose the drive at a moment of its choice.
 */
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Session, type SessionInit } from '../../lib/session/session.js';
import { systemClock } from '../../lib/driver/system-clock.js';
import { CURATED_PATH } from '../../lib/policy/child-env.js';
import { SpawnBackend } from '../../backends/spawn/spawn-backend.js';

export interface SpawnSession {
  readonly session: Session;
  close(): Promise<void>;
}

let counter = 0;

export async function spawnSession(argv: readonly string[], init: Partial<SessionInit> = {}): Promise<SpawnSession> {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'td-session-')));
  const id = `session-${process.pid}-${++counter}`;
  const session = new Session({ id, allowId: 'test', cols: 80, rows: 24, scrollback: 1000, ringBytes: 4 << 20, clock: systemClock, createdAt: Date.now(), ...init });
  try {
    const env = { PATH: CURATED_PATH, HOME: dir, LANG: 'C.UTF-8', TERM: 'tmux-256color' };
    session.bind(await SpawnBackend.launch({ argv: ['/usr/bin/env', '--', ...argv], env, cwd: dir, cols: 80, rows: 24, name: id }, session.listener));
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    session,
    async close() {
      try {
        await session.kill();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
