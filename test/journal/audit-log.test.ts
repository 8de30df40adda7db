/** The audit log: one JSON line per action, appended (O_APPEND, 0600), never rewritten. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AUDIT_FILE, AuditLog, readAudit } from '../../journal/audit-log.js';
import { JournalError } from '../../journal/journal-error.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'td-audit-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const at = (iso: string) => () => Date.parse(iso);

describe('AuditLog', () => {
  it('writes one JSON line per record and reads them back in order', () => {
    const log = AuditLog.open(dir, { now: at('2026-11-30T12:00:00.000Z') });
    log.record({ sessionId: 'td-1', kind: 'create', payload: '/usr/bin/python3 -q', tags: { allowId: 'python3', cols: 80, rows: 24 } });
    log.record({ sessionId: 'td-1', kind: 'sendText', payload: 'print("a")\nprint("b")', tags: { paste: true, submit: true } });
    log.record({ sessionId: 'td-1', kind: 'sendKeys', payload: 'C-c Enter' });
    log.record({ sessionId: 'td-2', kind: 'resize', payload: '', tags: { cols: 100, rows: 30 } });
    log.record({ sessionId: 'td-1', kind: 'signal', payload: 'interrupt' });
    log.record({ sessionId: 'td-1', kind: 'kill', payload: '' });
    log.close();
    const text = readFileSync(join(dir, AUDIT_FILE), 'utf8');
    expect(text.split('\n')).toHaveLength(7); // six lines and the final newline
    expect(JSON.parse(text.split('\n')[1] ?? '')).toEqual({
      time: '2026-11-30T12:00:00.000Z',
      sessionId: 'td-1',
      kind: 'sendText',
      payload: 'print("a")\nprint("b")',
      tags: { paste: true, submit: true },
    });
    const all = readAudit(dir);
    expect(all.map((r) => r.kind)).toEqual(['create', 'sendText', 'sendKeys', 'resize', 'signal', 'kill']);
    expect(all[2]).toMatchObject({ payload: 'C-c Enter', tags: {} });
    expect(readAudit(dir, { sessionId: 'td-2' })).toEqual([expect.objectContaining({ kind: 'resize', tags: { cols: 100, rows: 30 } })]);
  });

  it('creates the file 0600 and brings an existing one back to 0600', () => {
    AuditLog.open(dir).close();
    expect(statSync(join(dir, AUDIT_FILE)).mode & 0o777).toBe(0o600);
    const other = mkdtempSync(join(tmpdir(), 'td-audit-'));
    try {
      writeFileSync(join(other, AUDIT_FILE), '', { mode: 0o644 });
      AuditLog.open(other).close();
      expect(statSync(join(other, AUDIT_FILE)).mode & 0o777).toBe(0o600);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

  it('creates a missing data dir 0700', () => {
    const nested = join(dir, 'state', 'tmux-drive');
    AuditLog.open(nested).close();
    expect(statSync(nested).mode & 0o777).toBe(0o700);
    expect(existsSync(join(nested, AUDIT_FILE))).toBe(true);
  });

  it('appends: reopening keeps what was there, and a concurrent writer is never overwritten', () => {
    const first = AuditLog.open(dir);
    first.record({ sessionId: 'a', kind: 'sendText', payload: 'one' });
    first.close();
    const log = AuditLog.open(dir);
    const second = AuditLog.open(dir); // another process sharing the data dir
    log.record({ sessionId: 'a', kind: 'sendText', payload: 'two' });
    second.record({ sessionId: 'b', kind: 'sendText', payload: 'three' });
    // A plain (non-append) descriptor would write 'four' over 'three' at its own offset.
    log.record({ sessionId: 'a', kind: 'sendText', payload: 'four' });
    appendFileSync(join(dir, AUDIT_FILE), `${JSON.stringify({ time: new Date(0).toISOString(), sessionId: 'c', kind: 'kill', payload: '', tags: {} })}\n`);
    second.record({ sessionId: 'b', kind: 'sendText', payload: 'five' });
    log.close();
    second.close();
    expect(readAudit(dir).map((r) => r.payload)).toEqual(['one', 'two', 'three', 'four', '', 'five']);
  });

  it('keeps each record on one line whatever the payload holds', () => {
    const log = AuditLog.open(dir);
    const nasty = 'a\nb\r\nc\u2028d\u0000e\u001b[31m"}\n{"time":"forged"';
    log.record({ sessionId: 's', kind: 'sendText', payload: nasty });
    log.record({ sessionId: 's', kind: 'sendText', payload: 'lone \ud800 surrogate' });
    log.close();
    const lines = readFileSync(join(dir, AUDIT_FILE), 'utf8').split('\n');
    expect(lines).toHaveLength(3);
    const back = readAudit(dir);
    expect(back[0]?.payload).toBe(nasty);
    expect(back).toHaveLength(2);
  });

  it('spells each line exactly as JSON.stringify of the record, whatever the payload and tags hold', () => {
    // The line is built from its pieces (no record object per key): byte for byte the old shape.
    const log = AuditLog.open(dir, { now: at('2026-11-30T12:00:00.000Z'), maxPayloadChars: 40 });
    const payloads = ['x', '', 'a"b\\c', '\n\r\u2028\u2029', '\u001b[31m\u0000\u007f', 'caf\u00e9 \ud83d\ude00', '\ud800 lone', '","kind":"kill', 'y'.repeat(41)];
    const tags = [{ paste: false, submit: false }, { count: 3 }, { note: 'q"\\' }, undefined];
    const expected: string[] = [];
    for (const [i, payload] of payloads.entries()) {
      const t = tags[i % tags.length];
      log.record({ sessionId: 'td-1', kind: 'sendText', payload, ...(t ? { tags: t } : {}) });
      const cut = payload.length > 40 ? { ...t, payloadChars: payload.length, truncated: true } : { ...t };
      expected.push(JSON.stringify({ time: '2026-11-30T12:00:00.000Z', sessionId: 'td-1', kind: 'sendText', payload: payload.slice(0, 40), tags: cut }));
    }
    log.record({ sessionId: null, kind: 'call', payload: '', tags: { verb: 'list', ok: true } });
    expected.push(JSON.stringify({ time: '2026-11-30T12:00:00.000Z', sessionId: null, kind: 'call', payload: '', tags: { verb: 'list', ok: true } }));
    log.close();
    expect(readFileSync(join(dir, AUDIT_FILE), 'utf8')).toBe(expected.map((l) => `${l}\n`).join(''));
  });

  it('gives each record its own time, id and tags, as a fresh Date and JSON.stringify would', () => {
    // The time of a second, the last session id and frozen tags are kept between records.
    const times = [0, 999, 1000, 1000.9, 1_764_662_400_123, 1_764_662_400_999.5, 1_764_662_401_000, 1_764_662_400_007, -1, -1500.5, 253_402_300_799_999, 253_402_300_800_000, 1_764_662_400_050];
    let i = 0;
    const log = AuditLog.open(dir, { now: () => times[i++] ?? 0 });
    const frozen = Object.freeze({ paste: false, submit: false });
    let current = 0;
    const getter = Object.freeze(Object.defineProperty({}, 'n', { enumerable: true, get: () => current }));
    const open = { count: 1 };
    const expected: string[] = [];
    for (const [k, ms] of times.entries()) {
      const sessionId = k % 3 === 2 ? 'td-2' : 'td-1';
      const tags = k % 4 === 0 ? frozen : k % 4 === 1 ? getter : k % 4 === 2 ? open : undefined;
      current = k; // a frozen object whose getter answers differently is spelled as it is now
      log.record({ sessionId, kind: 'sendKeys', payload: 'x', ...(tags ? { tags } : {}) });
      const spelled = tags === getter ? { n: k } : { ...tags };
      expected.push(JSON.stringify({ time: new Date(ms).toISOString(), sessionId, kind: 'sendKeys', payload: 'x', tags: spelled }));
      open.count += 1; // a tags object that changes between records is spelled as it is now
    }
    log.close();
    expect(readFileSync(join(dir, AUDIT_FILE), 'utf8')).toBe(expected.map((l) => `${l}\n`).join(''));
  });

  it('refuses a bad session id after a good one, and a time that is not one', () => {
    const log = AuditLog.open(dir, { now: () => Number.NaN });
    expect(() => log.record({ sessionId: 'td-1', kind: 'kill', payload: '' })).toThrow(RangeError);
    const ok = AuditLog.open(dir);
    ok.record({ sessionId: 'td-1', kind: 'kill', payload: '' });
    expect(() => ok.record({ sessionId: 'td 1', kind: 'kill', payload: '' })).toThrow(expect.objectContaining({ code: 'JOURNAL_BAD_VALUE' }));
    log.close();
    ok.close();
  });

  it('cuts an oversized payload and says so in its tags', () => {
    const log = AuditLog.open(dir, { maxPayloadChars: 10 });
    log.record({ sessionId: 's', kind: 'sendText', payload: 'x'.repeat(25), tags: { paste: true } });
    log.close();
    expect(readAudit(dir)[0]).toMatchObject({ payload: 'x'.repeat(10), tags: { paste: true, payloadChars: 25, truncated: true } });
  });

  it('rejects malformed entries with a typed error that does not echo them', () => {
    const log = AuditLog.open(dir);
    const cases: unknown[] = [
      { sessionId: '../x', kind: 'sendText', payload: '' },
      { sessionId: 's', kind: 'exec', payload: '' },
      { sessionId: 's', kind: 'sendText', payload: 42 },
      { sessionId: 's', kind: 'sendText', payload: '', tags: { 'bad key': 1 } },
      { sessionId: 's', kind: 'sendText', payload: '', tags: { note: 'hunter2'.repeat(100) } },
      { sessionId: 's', kind: 'sendText', payload: '', tags: { nested: { a: 1 } } },
      { sessionId: 's', kind: 'sendText', payload: '', tags: { n: Number.NaN } },
    ];
    for (const entry of cases) {
      const err = (() => {
        try {
          log.record(entry as never);
        } catch (e) {
          return e;
        }
        return undefined;
      })();
      expect(err).toBeInstanceOf(JournalError);
      expect(err).toMatchObject({ code: 'JOURNAL_BAD_VALUE' });
      expect((err as Error).message).not.toContain('hunter2');
    }
    log.close();
    expect(readAudit(dir)).toEqual([]);
  });

  it('refuses to write after close, and close is idempotent', () => {
    const log = AuditLog.open(dir);
    log.close();
    log.close();
    expect(log.closed).toBe(true);
    expect(() => log.record({ sessionId: 's', kind: 'kill', payload: '' })).toThrow(expect.objectContaining({ code: 'JOURNAL_CLOSED' }));
  });

  it('refuses a symlink planted where the log goes', () => {
    const target = join(dir, 'elsewhere');
    writeFileSync(target, 'keep me\n');
    symlinkSync(target, join(dir, AUDIT_FILE));
    expect(() => AuditLog.open(dir)).toThrow(expect.objectContaining({ code: 'JOURNAL_UNREADABLE' }));
    expect(readFileSync(target, 'utf8')).toBe('keep me\n');
  });
});

describe('readAudit', () => {
  it('is empty when there is no log', () => {
    expect(readAudit(dir)).toEqual([]);
  });

  it('leaves out a last line cut short by a crash, and the next open ends it so records stay whole', () => {
    const log = AuditLog.open(dir);
    log.record({ sessionId: 's', kind: 'sendText', payload: 'whole' });
    log.close();
    appendFileSync(join(dir, AUDIT_FILE), '{"time":"2026-11-30T00:00:00.000Z","sessionId":"s","kind":"send');
    expect(readAudit(dir).map((r) => r.payload)).toEqual(['whole']);
    const again = AuditLog.open(dir);
    again.record({ sessionId: 's', kind: 'sendText', payload: 'after' });
    again.close();
    // The fragment is now a line of its own: an error by default, reported and skipped on request.
    expect(() => readAudit(dir)).toThrow(expect.objectContaining({ code: 'JOURNAL_UNREADABLE', context: expect.objectContaining({ line: 2 }) }));
    const malformed: number[] = [];
    expect(readAudit(dir, { onMalformed: (n) => malformed.push(n) }).map((r) => r.payload)).toEqual(['whole', 'after']);
    expect(malformed).toEqual([2]);
  });

  it('names the line that is not a record', () => {
    writeFileSync(join(dir, AUDIT_FILE), '{"time":"t","sessionId":"s","kind":"kill","payload":"","tags":{}}\nnot json\n');
    expect(() => readAudit(dir)).toThrow(expect.objectContaining({ code: 'JOURNAL_UNREADABLE', context: expect.objectContaining({ line: 2 }) }));
  });
});
