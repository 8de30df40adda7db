/**
 * A dialog that settles while the drive is still being launched: the driver makes the Session,
 * passes its listener to the backend's launch, and binds the backend only when launch returns (a
 * tmux attach handshake of several round trips, slow on a loaded host). Output, the quiet watch
 * and the auto-answer run meanwhile. Seen in the claude-trust-safe-only replay under load: the
 * trust gate was published 0.2 s before create() returned and was never answered (no keys sent).
 * Here a real program in a real pty (spawn backend) with the bind held back until the dialog has
 * been published stands in for the slow handshake, which cannot be made slow on demand.
 */
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../backends/process/system-clock.js';
import { SpawnBackend } from '../../backends/spawn/spawn-backend.js';
import { compileProfile } from '../../lib/perceive/profile.js';
import { CURATED_PATH } from '../../lib/policy/child-env.js';
import type { SessionStatus } from '../../lib/perceive/status.js';
import { Session } from '../../lib/session/session.js';

const ASKER = { id: 'asker', dialogs: [{ id: 'continue', pattern: 'Continue\\?', kind: 'confirm', answer: ['y', 'Enter'], safe: true }] };
const ASK = 'a = input("Continue? (y/n) ")\nprint("GOT " + a, flush=True)\ninput("> ")';

describe('auto-answer of a dialog published before the backend is bound', () => {
  it('is answered once the backend is bound, not failed for want of one', async () => {
    const issues: never[] = [];
    const profile = compileProfile(ASKER, 'test', issues);
    if (!profile) throw new Error(JSON.stringify(issues));
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'td-answer-bind-')));
    const session = new Session({ id: `answer-bind-${process.pid}`, allowId: 'test', cols: 80, rows: 24, scrollback: 1000, ringBytes: 4 << 20, clock: systemClock, createdAt: Date.now(), profile, autoAnswer: 'safe-only' });
    const attention: string[] = [];
    const answered: string[] = [];
    session.on('attention', (a) => void attention.push(a.reason));
    const answer = new Promise<void>((resolve) => session.on('answered', (_digest, keys) => (answered.push(keys.join(' ')), resolve())));
    const dialogPublished = new Promise<SessionStatus>((resolve) => session.on('state', (st) => st.dialog && resolve(st)));
    const env = { PATH: CURATED_PATH, HOME: dir, LANG: 'C.UTF-8', TERM: 'tmux-256color' };
    const backend = await SpawnBackend.launch({ argv: ['/usr/bin/env', '--', '/usr/bin/python3', '-c', ASK], env, cwd: dir, cols: 80, rows: 24, name: 'answer-bind' }, session.listener);
    try {
      const published = await Promise.race([dialogPublished, new Promise<undefined>((r) => setTimeout(r, 5000, undefined))]);
      expect(published?.reason, 'the dialog was published before bind').toBe('dialog_detected');
      // The answerer has had its turn before bind: the old code failed it here.
      await new Promise((r) => setTimeout(r, 200));
      session.bind(backend);
      expect((await session.wait({ forText: 'GOT y', timeoutMs: 5000 })).outcome, `attention: ${JSON.stringify(attention)}`).toBe('text');
      // Confirmed when the screen changed and settled: the event comes after the echo.
      await Promise.race([answer, new Promise((r) => setTimeout(r, 5000))]);
      expect(answered).toEqual(['y Enter']);
      expect(attention).not.toContain('answer_failed');
    } finally {
      await session.kill().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    }
  }, 20_000);
});
