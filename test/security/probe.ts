/**
 * Runs shell probes inside a driven bash and reads their results from the host. A probe is a
 * script written into the session's workspace (which the jail binds at the same path), run by the
 * driven shell with its output redirected into the workspace; the host reads that file. Nothing is
 * inferred from the screen except the end marker.
 */
import { readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Session } from '../../lib/session/session.js';

export const BASH_ARGS = ['--norc', '--noprofile'];
/** An allow entry's extras for a bash with a plain prompt. */
export const BASH_ENTRY = { env: { PS1: '$ ' } };

let counter = 0;

export interface ProbeResult {
  /** The script's exit status. */
  readonly rc: number;
  /** stdout and stderr together. */
  readonly out: string;
}

/** The workspace of a session without a project, as the jail sees it (same path as the host). */
export function workspaceOf(dataDir: string): string {
  return realpathSync(join(dataDir, 'workspace'));
}

export async function ready(s: Session): Promise<void> {
  const r = await s.wait({ forText: '$ ', timeoutMs: 10_000 });
  if (r.outcome !== 'text') throw new Error(`bash did not show its prompt (${r.outcome})`);
}

/** Runs `script` with bash inside the drive; `dir` is a directory the drive can write and the host can read. */
export async function probe(s: Session, dir: string, script: string, timeoutMs = 10_000): Promise<ProbeResult> {
  const n = ++counter;
  const file = join(dir, `.probe-${process.pid}-${n}`);
  writeFileSync(`${file}.sh`, script, { mode: 0o600 });
  const done = new RegExp(`@@(\\d+)@@${n}@@`);
  await s.sendText(`bash ${file}.sh > ${file}.out 2>&1; echo "@@$?@@${n}@@"`, { submit: true });
  const r = await s.wait({ forText: done, timeoutMs });
  if (r.outcome !== 'text') throw new Error(`probe ${n} did not finish (${r.outcome}): ${s.read().content}`);
  const m = done.exec(s.read({ scrollback: 'all' }).content);
  return { rc: Number(m?.[1] ?? -1), out: readFileSync(`${file}.out`, 'utf8') };
}
