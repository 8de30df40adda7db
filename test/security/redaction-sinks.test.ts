/**
 * Issue 10, item 3: no secret of the corpus (test/security/redaction-corpus.ts) leaks through any
 * sink, on real drives: tmux, bwrap and a real bash, with real programs printing (cat; python3
 * writing each secret in two pieces so it arrives in two chunks of output) and with the corpus
 * pasted into bash's readline, which echoes it highlighted. Each variant runs on its own drive:
 *
 *   plain-80      every format as is, 80 columns
 *   styled-80     SGR right before, inside and right after each secret
 *   wrapped-80    each secret starting mid-row so it wraps at the right margin, 80 columns
 *   wrapped-40    the same at 40 columns
 *   split-80      python3 writes each (styled) format in two writes, cut inside the secret
 *   pasted-80     pasted (bracketed paste) into bash, then discarded with C-c, 80 columns
 *   pasted-40     the same at 40 columns
 *
 * Sinks: text/ansi/html full reads with all the history, text full/digest/diff reads of each
 * screen, the transcript (whole and page by page), the asciicast of the transcript and of the raw
 * output chunks as they arrived, the audit log, a create's argv in the audit log, and the journal
 * (sqlite file, WAL and shm: content-free, so none of the corpus at all). A leak is any piece of a
 * secret (8 characters, 12 for hex) in a sink, as stored or as a reader sees it (escapes and tags
 * removed, rows joined). The formats × sinks checked are printed at the end.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readAudit } from '../../journal/audit-log.js';
import { JOURNAL_FILE } from '../../journal/journal.js';
import { formatAsciicast, toAsciicast } from '../../lib/session/asciicast.js';
import type { Session } from '../../lib/session/session.js';
import type { TranscriptEntry } from '../../lib/session/transcript.js';
import { allow, openDriver, type TestDriver } from '../helpers.js';
import { BASH_ARGS, BASH_ENTRY, ready, workspaceOf } from './probe.js';
import { FORMATS, leakedPieces, seen, splitPoint, styled, wrappedAt, type SecretFormat, type Style } from './redaction-corpus.js';

const ROWS = 60;
/** Screen rows a batch may fill: the rest holds the command line, the end marker and the prompt. */
const BATCH_ROWS = ROWS - 10;
const MAX_READ = 16 * 1024 * 1024;
const STYLES: readonly Style[] = ['before', 'inside', 'after'];

type Mode = 'print' | 'split' | 'paste';

interface Variant {
  readonly id: string;
  readonly cols: number;
  readonly mode: Mode;
  /** The texts printed (or pasted) for a format. */
  readonly texts: (f: SecretFormat) => readonly string[];
  readonly formats: readonly SecretFormat[];
}

// Nobody copies raw escape codes into a paste (a terminal copies text): the one format made of
// them is printed, not pasted.
const PASTABLE = FORMATS.filter((f) => !f.text.includes('\x1b'));

const VARIANTS: readonly Variant[] = [
  { id: 'plain-80', cols: 80, mode: 'print', texts: (f) => [f.text], formats: FORMATS },
  { id: 'styled-80', cols: 80, mode: 'print', texts: (f) => STYLES.map((s) => styled(f, s)), formats: FORMATS },
  { id: 'wrapped-80', cols: 80, mode: 'print', texts: (f) => [wrappedAt(f, 80)], formats: FORMATS },
  { id: 'wrapped-40', cols: 40, mode: 'print', texts: (f) => [wrappedAt(f, 40)], formats: FORMATS },
  { id: 'split-80', cols: 80, mode: 'split', texts: (f) => [styled(f, 'before')], formats: FORMATS },
  { id: 'pasted-80', cols: 80, mode: 'paste', texts: (f) => [f.text], formats: PASTABLE },
  { id: 'pasted-40', cols: 40, mode: 'paste', texts: (f) => [f.text], formats: PASTABLE },
];

const label = (v: Variant, f: SecretFormat, i: number): string => `==F.${f.id}.${v.id}.${i}==`;

function rowsOf(text: string, cols: number): number {
  return text.split('\n').reduce((n, line) => n + Math.max(1, Math.ceil(line.replace(/\x1b\[[0-9;]*[A-Za-z]/g, '').length / cols)), 0);
}

/** The variant's formats in batches that each fit on one screen (digest and diff see the screen only). */
function batches(v: Variant): SecretFormat[][] {
  const out: SecretFormat[][] = [];
  let cur: SecretFormat[] = [];
  let rows = 0;
  for (const f of v.formats) {
    const n = v.texts(f).reduce((sum, text) => sum + 1 + rowsOf(`${v.mode === 'paste' ? '$ ' : ''}${text}`, v.cols), 0);
    if (rows + n > BATCH_ROWS && cur.length > 0) {
      out.push(cur);
      cur = [];
      rows = 0;
    }
    cur.push(f);
    rows += n;
  }
  if (cur.length > 0) out.push(cur);
  return out;
}

const SINKS = [
  'read text +history',
  'read ansi +history',
  'read html +history',
  'read text screen',
  'read ansi screen',
  'read html screen',
  'read digest',
  'read diff',
  'transcript',
  'transcript paged',
  'asciicast',
  'asciicast raw chunks',
  'audit',
] as const;
type Sink = (typeof SINKS)[number];

interface Check {
  readonly variant: string;
  readonly sink: string;
  readonly format: string;
  /** The format's label reached the sink (the content was there to be redacted). */
  readonly reached: boolean;
  readonly leaks: readonly string[];
}

const checks: Check[] = [];

function check(variant: string, sink: string, formats: readonly SecretFormat[], text: string, labelOf?: (f: SecretFormat) => readonly string[]): void {
  const view = seen(text);
  for (const f of formats) {
    const labels = labelOf?.(f) ?? [];
    checks.push({ variant, sink, format: f.id, reached: labels.length > 0 && labels.every((l) => view.includes(l)), leaks: leakedPieces(f, text) });
  }
}

/** Every output chunk of a transcript as one stream, then the typed input as another. */
function streams(entries: readonly TranscriptEntry[]): string {
  const text = (kind: TranscriptEntry['kind']): string =>
    entries
      .filter((e) => e.kind === kind)
      .map((e) => (typeof e.data === 'string' ? e.data : e.data ? new TextDecoder().decode(e.data) : ''))
      .join('');
  return `${text('output')}\n${text('input')}`;
}

/** The events' data of an asciicast (its JSON lines parsed back), output then input. */
function castStreams(cast: string): string {
  const events = cast
    .trim()
    .split('\n')
    .slice(1)
    .map((l) => JSON.parse(l) as [number, string, string]);
  return `${events.filter((e) => e[1] === 'o').map((e) => e[2]).join('')}\n${events.filter((e) => e[1] === 'i').map((e) => e[2]).join('')}`;
}

const SPLIT_PY = `
import json, sys, time
for label, text, cut in json.load(open(sys.argv[1], encoding="utf-8")):
    sys.stdout.write(label + "\\n")
    sys.stdout.write(text[:cut])
    sys.stdout.flush()
    time.sleep(0.04)
    sys.stdout.write(text[cut:] + "\\n")
    sys.stdout.flush()
print(sys.argv[2].replace("+", ""))
`;

describe('redaction through every sink, on real drives (issue 10 item 3)', () => {
  let t: TestDriver;
  let ws: string;

  beforeAll(async () => {
    t = await openDriver([allow('bash', '/bin/bash', BASH_ENTRY)], { defaults: { cols: 80, rows: ROWS, scrollback: 5000 }, worker: { ringBytes: 16 * 1024 * 1024 } });
  });

  afterAll(async () => {
    await t?.cleanup();
  });

  async function runVariant(v: Variant): Promise<void> {
    // A retried run replaces the checks of the failed one.
    for (let i = checks.length - 1; i >= 0; i--) if ((checks[i] as Check).variant === v.id) checks.splice(i, 1);
    const s: Session = await t.driver.create({ allowId: 'bash', args: BASH_ARGS, cols: v.cols, rows: ROWS, name: `red-${v.id}` });
    ws = workspaceOf(t.dataDir);
    // The raw chunks as they arrived, and what was typed: the asciicast export's own input.
    const raw: TranscriptEntry[] = [];
    let seq = 0;
    const sub = s.on('output', (data) => raw.push({ seq: ++seq, time: Date.now(), kind: 'output', data: data.slice() }));
    const typed = (text: string): void => void raw.push({ seq: ++seq, time: Date.now(), kind: 'input', data: text });
    const parts: Record<Sink, string[]> = Object.fromEntries(SINKS.map((k) => [k, []])) as unknown as Record<Sink, string[]>;
    try {
      await ready(s);
      for (const [k, batch] of batches(v).entries()) {
        const tag = `${v.id}-${k}`;
        const items = batch.flatMap((f) => v.texts(f).map((text, i) => ({ f, label: label(v, f, i), text })));
        if (v.mode === 'paste') {
          const text = items.map((x) => `${x.label}\n${x.text}`).join('\n');
          typed(text);
          await s.sendText(text, { paste: 'always' });
          await s.wait({ forIdleMs: 400, timeoutMs: 20_000 });
        } else {
          let command: string;
          if (v.mode === 'split') {
            const file = join(ws, `${tag}.json`);
            writeFileSync(file, JSON.stringify(items.map((x) => [x.label, x.text, splitPoint(x.f) + '\x1b[1;32m'.length])));
            writeFileSync(join(ws, 'split.py'), SPLIT_PY);
            command = `/usr/bin/python3 split.py ${tag}.json @@+done-${tag}@@`;
          } else {
            writeFileSync(join(ws, `${tag}.txt`), items.map((x) => `${x.label}\n${x.text}\n`).join(''));
            command = `cat ${tag}.txt; echo "@@""done-${tag}@@"`;
          }
          typed(`${command}\r`);
          await s.sendText(command, { submit: true });
          const done = await s.wait({ forText: new RegExp(`^@@done-${tag}@@$`, 'm'), timeoutMs: 30_000 });
          expect(done.outcome, `batch ${tag}`).toBe('text');
          await s.wait({ forIdleMs: 150 });
        }
        parts['read text screen'].push(s.read({ mode: 'full', maxBytes: MAX_READ }).content);
        parts['read ansi screen'].push(s.read({ format: 'ansi', maxBytes: MAX_READ }).content);
        parts['read html screen'].push(s.read({ format: 'html', maxBytes: MAX_READ }).content);
        parts['read digest'].push(s.read({ mode: 'digest', maxBytes: MAX_READ }).content);
        parts['read diff'].push(s.read({ mode: 'diff', caller: `batch-${k}`, maxBytes: MAX_READ }).content);
        if (v.mode === 'paste') {
          typed('\x03');
          await s.sendKeys('C-c');
          await s.wait({ forIdleMs: 200 });
        }
      }
      parts['read text +history'].push(s.read({ mode: 'full', scrollback: 'all', maxBytes: MAX_READ }).content);
      parts['read ansi +history'].push(s.read({ format: 'ansi', scrollback: 'all', maxBytes: MAX_READ }).content);
      parts['read html +history'].push(s.read({ format: 'html', scrollback: 'all', maxBytes: MAX_READ }).content);
      const entries = s.transcript();
      parts.transcript.push(streams(entries));
      const paged: TranscriptEntry[] = [];
      for (let after = 0; ; ) {
        const page = s.transcript({ after, limit: 1 });
        if (page.length === 0) break;
        paged.push(...page);
        after = (page[page.length - 1] as TranscriptEntry).seq;
      }
      expect(paged.length).toBe(entries.length);
      parts['transcript paged'].push(streams(paged));
      parts.asciicast.push(castStreams(formatAsciicast(toAsciicast(entries, { cols: v.cols, rows: ROWS }))));
      parts['asciicast raw chunks'].push(castStreams(formatAsciicast(toAsciicast(raw, { cols: v.cols, rows: ROWS, redact: true }))));
      if (v.mode === 'split') {
        // Evidence that secrets did arrive in pieces: most first secrets are in no single chunk.
        const chunks = raw.filter((e) => e.kind === 'output').map((e) => new TextDecoder().decode(e.data as Uint8Array));
        const whole = v.formats.filter((f) => chunks.some((c) => c.includes(f.secrets[0] as string))).length;
        expect(whole).toBeLessThan(v.formats.length / 2);
      }
    } finally {
      sub.dispose();
      await s.kill();
    }
    const audit = readAudit(t.dataDir, { sessionId: s.id });
    parts.audit.push(audit.map((a) => a.payload).join('\n'), readFileSync(join(t.dataDir, 'audit.jsonl'), 'utf8'));
    for (const sink of SINKS) {
      // The audit log holds what was typed: the corpus itself only when it was pasted.
      const expectContent = sink !== 'audit' || v.mode === 'paste';
      check(v.id, sink, v.formats, parts[sink].join('\n'), expectContent ? (f) => v.texts(f).map((_x, i) => label(v, f, i)) : undefined);
    }
  }

  for (const v of VARIANTS) {
    it(`${v.id}: ${v.formats.length} formats, no piece of a secret in any sink`, async () => {
      await runVariant(v);
      const mine = checks.filter((c) => c.variant === v.id);
      const leaks = mine.filter((c) => c.leaks.length > 0).map((c) => `${c.sink}: ${c.format} (${c.leaks.join(', ')})`);
      expect(leaks).toEqual([]);
      const missing = mine.filter((c) => !c.reached && (c.sink !== 'audit' || v.mode === 'paste')).map((c) => `${c.sink}: ${c.format}`);
      expect(missing).toEqual([]);
    }, 300_000);
  }

  it("a create's argv in the audit log: every one-line format as words of a command line", async () => {
    const lines = FORMATS.filter((f) => !f.text.includes('\n') && !f.text.includes('\x1b'));
    // `bash -c ':' WORDS…`: the words are arguments of a no-op; nothing runs.
    for (let i = checks.length - 1; i >= 0; i--) if ((checks[i] as Check).variant === 'argv') checks.splice(i, 1);
    const s = await t.driver.create({ allowId: 'bash', args: ['--norc', '--noprofile', '-c', ':', ...lines.flatMap((f) => f.text.split(' '))], name: `red-argv-${Date.now() % 100000}` });
    await s.wait({ forExit: true, timeoutMs: 10_000 });
    const created = readAudit(t.dataDir, { sessionId: s.id }).filter((a) => a.kind === 'create');
    expect(created).toHaveLength(1);
    const argv = JSON.parse((created[0] as { payload: string }).payload) as string[];
    // A word of each format that is not part of its secret shows the format reached the record.
    const marks = (f: SecretFormat): string[] => f.text.split(' ').filter((w) => w.length >= 3 && !f.secrets.some((x) => w.includes(x) || x.includes(w))).slice(0, 1);
    check('argv', 'audit create', lines, argv.join(' '), marks);
    const leaks = checks.filter((c) => c.variant === 'argv' && c.leaks.length > 0).map((c) => c.format);
    expect(leaks).toEqual([]);
    expect(argv.join(' ')).toContain('[REDACTED:basic-credentials]');
    expect(argv.join(' ')).toContain('[REDACTED:cli-password]');
  });

  it('the journal (file, WAL, shm) holds none of the corpus: not a secret, not a label', async () => {
    const files = [JOURNAL_FILE, `${JOURNAL_FILE}-wal`, `${JOURNAL_FILE}-shm`].map((f) => join(t.dataDir, f)).filter((f) => existsSync(f));
    expect(files.length).toBeGreaterThanOrEqual(1);
    const bytes = files.map((f) => readFileSync(f).toString('latin1')).join('\n');
    expect(bytes).toContain('red-plain-80'); // the drives are in it, by name
    for (let i = checks.length - 1; i >= 0; i--) if ((checks[i] as Check).sink === 'journal') checks.splice(i, 1);
    check('all', 'journal', FORMATS, bytes);
    expect(checks.filter((c) => c.sink === 'journal' && c.leaks.length > 0).map((c) => c.format)).toEqual([]);
    for (const v of VARIANTS) expect(bytes).not.toContain(`.${v.id}.`);
  });

  it('counts formats × sinks checked', () => {
    const leaks = checks.filter((c) => c.leaks.length > 0);
    const byVariant = new Map<string, { pairs: number; reached: number; leaks: number }>();
    for (const c of checks) {
      const row = byVariant.get(c.variant) ?? { pairs: 0, reached: 0, leaks: 0 };
      row.pairs += 1;
      if (c.reached) row.reached += 1;
      if (c.leaks.length > 0) row.leaks += 1;
      byVariant.set(c.variant, row);
    }
    const lines = [...byVariant].map(([v, r]) => `${v.padEnd(12)} ${String(r.pairs).padStart(5)} checks, ${String(r.reached).padStart(5)} with the content present, ${r.leaks} leaks`);
    const bySink = [...new Set(checks.map((c) => c.sink))].map((sink) => {
      const mine = checks.filter((c) => c.sink === sink);
      return `${sink.padEnd(22)} ${String(mine.length).padStart(5)} checks, ${String(mine.filter((c) => c.leaks.length > 0).length).padStart(4)} leaks`;
    });
    console.log(
      `redaction corpus: ${FORMATS.length} formats, ${VARIANTS.length} variants, ${bySink.length} sinks: ${checks.length} format × sink checks, ${checks.filter((c) => c.reached).length} with the content present, ${leaks.length} leaks\n${lines.join('\n')}\n${bySink.join('\n')}`,
    );
    // For a report: every check as JSON (variant, sink, format, reached, leaked pieces).
    const dump = process.env.REDACTION_CHECKS_JSON;
    if (dump) writeFileSync(dump, JSON.stringify(checks));
    expect(FORMATS.length).toBeGreaterThanOrEqual(40);
    expect(leaks).toEqual([]);
    expect(checks.filter((c) => c.reached).length).toBeGreaterThanOrEqual(40 * SINKS.length);
  });
});
