/** Shared scaffolding for the journal tests: a private data dir and an ordinary session. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hashOf, type SessionInput } from '../../journal/journal.js';

export interface TempDir {
  readonly dir: string;
  dispose(): void;
}

export function tempDataDir(): TempDir {
  const dir = mkdtempSync(join(tmpdir(), 'td-journal-'));
  return { dir, dispose: () => rmSync(dir, { recursive: true, force: true }) };
}

export function sessionInput(dataDir: string, id = 'drive-1', extra: Partial<SessionInput> = {}): SessionInput {
  return {
    id,
    name: id,
    socketPath: join(dataDir, 'tmux', `${id}.sock`),
    allowId: 'bash',
    argvHash: hashOf(['/usr/bin/bash', '--norc']),
    backend: 'tmux',
    durable: true,
    state: 'live',
    ...extra,
  };
}

/** Lets a pending setImmediate run (the end-of-tick flush). */
export const nextTick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
