/**
 * Invariant 5: the journal is content-free. A secret-looking marker is pushed through every entry
 * point; each must refuse it (or take only its hash), and afterwards the bytes of the database,
 * its WAL and its shared-memory file must not contain it, nor may any error message.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { JOURNAL_FILE, Journal, JournalError, currentHolder, hashOf, type SessionInput } from '../../journal/journal.js';
import { sessionInput, tempDataDir, type TempDir } from './journal-fixtures.js';

const MARKER = 'SeCrEt-Marker sk_live_4f9QzX81 pw=hunter2';
const FRAGMENTS = [MARKER, 'SeCrEt-Marker', 'sk_live_4f9QzX81'];

let tmp: TempDir;
let journal: Journal;
beforeEach(() => {
  tmp = tempDataDir();
  journal = Journal.open(tmp.dir);
});
afterEach(() => {
  journal.close();
  tmp.dispose();
});

const messages: string[] = [];
function refused(label: string, fn: () => unknown): void {
  let caught: unknown;
  try {
    fn();
  } catch (error) {
    caught = error;
  }
  expect(caught, label).toBeInstanceOf(JournalError);
  expect((caught as JournalError).code, label).toBe('JOURNAL_BAD_VALUE');
  messages.push((caught as JournalError).message, JSON.stringify((caught as JournalError).context));
}

function filesContainingMarker(): string[] {
  const found: string[] = [];
  for (const suffix of ['', '-wal', '-shm']) {
    const path = join(tmp.dir, JOURNAL_FILE + suffix);
    if (!existsSync(path)) continue;
    const bytes = readFileSync(path);
    for (const fragment of FRAGMENTS) {
      for (const encoding of ['utf8', 'utf16le'] as const) {
        if (bytes.includes(Buffer.from(fragment, encoding))) found.push(`${suffix || 'db'}: ${fragment} (${encoding})`);
      }
    }
  }
  return found;
}

describe('the journal is content-free', () => {
  it('refuses or hashes a secret passed through every entry point, and its bytes never reach the files', () => {
    const base = sessionInput(tmp.dir, 'drive-1');
    const withField = (patch: Partial<Record<keyof SessionInput, unknown>>): SessionInput => ({ ...base, ...patch }) as SessionInput;

    // Hashed: accepted, and only the digest is stored.
    journal.upsertSession({ ...base, argvHash: hashOf(['/usr/bin/bash', '-c', MARKER]), objectiveHash: hashOf(MARKER) });
    for (let i = 0; i < 50; i++) journal.appendEvent('drive-1', i % 2 ? 'input' : 'output', { keys: 2, paste: false, reason: 'ordinary' });
    journal.recordAnswer('drive-1', `sha256:${hashOf(MARKER)}`, 'Enter');

    // Refused: every string field of every call.
    refused('session id', () => journal.upsertSession(withField({ id: MARKER, name: 'x' })));
    refused('session name', () => journal.upsertSession(withField({ id: 'drive-2', name: MARKER })));
    refused('socket path (inside the data dir)', () => journal.upsertSession(withField({ id: 'drive-2', name: 'drive-2', socketPath: join(tmp.dir, 'tmux', `${MARKER}.sock`) })));
    refused('socket path (outside)', () => journal.upsertSession(withField({ id: 'drive-2', name: 'drive-2', socketPath: `/tmp/${MARKER}.sock` })));
    refused('allowId', () => journal.upsertSession(withField({ allowId: MARKER })));
    refused('argvHash', () => journal.upsertSession(withField({ argvHash: MARKER })));
    refused('objectiveHash', () => journal.upsertSession(withField({ objectiveHash: MARKER })));
    refused('backend', () => journal.upsertSession(withField({ backend: MARKER })));
    refused('state', () => journal.upsertSession(withField({ state: MARKER })));
    refused('classification reason', () => journal.updateSession('drive-1', { classification: { state: 'stuck', reason: MARKER } }));
    refused('classification state', () => journal.updateSession('drive-1', { classification: { state: MARKER as never, reason: 'x' } }));
    refused('failure reason', () => journal.updateSession('drive-1', { failureReason: MARKER }));
    refused('markFailed reason', () => journal.markFailed('drive-1', MARKER));
    refused('exit code', () => journal.updateSession('drive-1', { exit: { code: MARKER as never, signal: null } }));
    refused('interactions', () => journal.updateSession('drive-1', { interactions: MARKER as never }));
    refused('event session id', () => journal.appendEvent(MARKER, 'output'));
    refused('event kind', () => journal.appendEvent('drive-1', MARKER));
    refused('event tag value', () => journal.appendEvent('drive-1', 'input', { text: MARKER }));
    refused('event tag key', () => journal.appendEvent('drive-1', 'input', { [MARKER]: 1 }));
    refused('event tag nested', () => journal.appendEvent('drive-1', 'input', { v: [MARKER] as never }));
    refused('incident session id', () => journal.recordIncident(MARKER, 'malformed_stream'));
    refused('incident kind', () => journal.recordIncident('drive-1', MARKER as never));
    refused('incident tags', () => journal.recordIncident(null, 'cleanup_failure', { error: MARKER }));
    refused('answer digest', () => journal.recordAnswer('drive-1', MARKER, 'Enter'));
    refused('answer key', () => journal.recordAnswer('drive-1', `sha256:${hashOf('x')}`, MARKER));
    refused('wasAnswered digest', () => journal.wasAnswered('drive-1', MARKER));
    refused('lease session id', () => journal.acquireLease(MARKER, currentHolder()));
    refused('lease holder', () => journal.acquireLease('drive-1', { pid: MARKER, startTime: 1 } as never));
    refused('checkLease session id', () => journal.checkLease(MARKER, 1));
    refused('listSessions state', () => journal.listSessions({ states: [MARKER as never] }));
    refused('getSession id', () => journal.getSession(MARKER));
    refused('events session id', () => journal.events(MARKER));

    journal.flush();
    expect(journal.integrityCheck()).toBe('ok');
    expect(journal.events('drive-1')).toHaveLength(50);
    expect(existsSync(join(tmp.dir, `${JOURNAL_FILE}-wal`))).toBe(true);
    expect(filesContainingMarker()).toEqual([]);
    for (const message of messages) for (const fragment of FRAGMENTS) expect(message).not.toContain(fragment);

    journal.close();
    expect(filesContainingMarker()).toEqual([]);
    // The hash is there (the scan would have seen a stored marker): the check is not vacuous.
    expect(readFileSync(join(tmp.dir, JOURNAL_FILE)).includes(Buffer.from(hashOf(MARKER)))).toBe(true);
    journal = Journal.open(tmp.dir);
  });
});
