/**
 * Journal append throughput and size. The library path (validation, tag encoding, seq allocation,
 * the end-of-tick flush) is measured against, in the same run and on the same schema:
 *  - the floor: raw better-sqlite3 inserts of the same pre-encoded rows, one transaction per
 *    tick's batch (what the journal does, minus its own work);
 *  - the naive path: one autocommit transaction per event (what batching avoids).
 * Bytes per event are the growth of the checkpointed database file (WAL folded in) over the run.
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { JOURNAL_FILE, Journal, hashOf, type MachineTags } from '../journal/journal.js';
import type { Benchmark, BenchResult, Verdict } from './benchmark.js';

/** An interaction as the driver journals it: the input sent, then the state it led to. */
const INTERACTION: readonly (readonly [string, MachineTags])[] = [
  ['input', { keys: 12, paste: false, submit: true }],
  ['state', { from: 'working', to: 'awaiting-input', reason: 'cursor_parked' }],
];
/** Events appended per turn of the event loop: a burst of output-driven state and evidence. */
const PER_TICK = 100;
const TARGET_EVENTS_PER_S = 20_000;
const TARGET_BYTES_PER_INTERACTION = 200;

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

interface Dir {
  readonly dir: string;
  dispose(): void;
}

function freshJournalDir(): Dir {
  const dir = mkdtempSync(join(tmpdir(), 'td-bench-journal-'));
  return { dir, dispose: () => rmSync(dir, { recursive: true, force: true }) };
}

function seedSession(journal: Journal, dir: string): void {
  journal.upsertSession({
    id: 'bench',
    name: 'bench',
    socketPath: join(dir, 'tmux', 'bench.sock'),
    allowId: 'bash',
    argvHash: hashOf(['/usr/bin/bash']),
    backend: 'tmux',
    durable: true,
    state: 'live',
  });
}

const fileSize = (dir: string): number => statSync(join(dir, JOURNAL_FILE)).size;

/** The library: appendEvent in bursts of PER_TICK, flushed by the journal at each tick's end. */
async function runJournal(events: number): Promise<{ perSecond: number; bytesPerEvent: number; commits: number }> {
  const { dir, dispose } = freshJournalDir();
  try {
    let journal = Journal.open(dir);
    seedSession(journal, dir);
    journal.close();
    const before = fileSize(dir);
    journal = Journal.open(dir);
    const commitsBefore = journal.stats().commits;
    const t0 = performance.now();
    for (let i = 0; i < events; ) {
      for (let k = 0; k < PER_TICK && i < events; k++, i++) {
        const [kind, tags] = INTERACTION[i % INTERACTION.length]!;
        journal.appendEvent('bench', kind, tags);
      }
      await tick();
    }
    journal.flush();
    const elapsed = performance.now() - t0;
    const commits = journal.stats().commits - commitsBefore;
    journal.close();
    return { perSecond: events / (elapsed / 1000), bytesPerEvent: (fileSize(dir) - before) / events, commits };
  } finally {
    dispose();
  }
}

/** The floor: the same rows, pre-encoded, inserted by a bare prepared statement. */
async function runRaw(events: number, batched: boolean): Promise<{ perSecond: number; bytesPerEvent: number }> {
  const { dir, dispose } = freshJournalDir();
  try {
    const journal = Journal.open(dir);
    seedSession(journal, dir);
    journal.close();
    const before = fileSize(dir);
    const db = new Database(join(dir, JOURNAL_FILE));
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    const sid = (db.prepare('SELECT sid FROM sessions').get() as { sid: number }).sid;
    const insert = db.prepare<[number, number, number, string, string]>('INSERT INTO events (sid, seq, at, kind, tags) VALUES (?, ?, ?, ?, ?)');
    const rows = INTERACTION.map(([kind, tags]) => [kind, JSON.stringify(tags)] as const);
    const batch = db.transaction((from: number, to: number) => {
      for (let i = from; i < to; i++) {
        const [kind, tags] = rows[i % rows.length]!;
        insert.run(sid, i + 1, Date.now(), kind, tags);
      }
    });
    const t0 = performance.now();
    for (let i = 0; i < events; ) {
      const end = Math.min(events, i + PER_TICK);
      if (batched) batch(i, end);
      else
        for (let j = i; j < end; j++) {
          const [kind, tags] = rows[j % rows.length]!;
          insert.run(sid, j + 1, Date.now(), kind, tags);
        }
      i = end;
      await tick();
    }
    const elapsed = performance.now() - t0;
    db.close();
    return { perSecond: events / (elapsed / 1000), bytesPerEvent: (fileSize(dir) - before) / events };
  } finally {
    dispose();
  }
}

const round1 = (n: number): number => Math.round(n * 10) / 10;
const round3 = (n: number): number => Math.round(n * 1000) / 1000;

/** Appended events/s and bytes of file growth per event, with the raw-SQLite floor of the same run. */
export async function journalAppendBench(opts: { quick: boolean }): Promise<Record<string, number | string>> {
  const events = opts.quick ? 20_000 : 200_000;
  const naiveEvents = Math.min(events, 20_000);
  const rounds = opts.quick ? 1 : 3;
  const journalRuns: Awaited<ReturnType<typeof runJournal>>[] = [];
  const rawRuns: Awaited<ReturnType<typeof runRaw>>[] = [];
  const naiveRuns: Awaited<ReturnType<typeof runRaw>>[] = [];
  // Interleaved rounds, so a noisy neighbour hurts every path alike.
  for (let r = 0; r < rounds; r++) {
    journalRuns.push(await runJournal(events));
    rawRuns.push(await runRaw(events, true));
    naiveRuns.push(await runRaw(naiveEvents, false));
  }
  const journalRate = median(journalRuns.map((x) => x.perSecond));
  const rawRate = median(rawRuns.map((x) => x.perSecond));
  const naiveRate = median(naiveRuns.map((x) => x.perSecond));
  const bytesPerEvent = median(journalRuns.map((x) => x.bytesPerEvent));
  const bytesPerInteraction = bytesPerEvent * INTERACTION.length;
  const sqlite = (new Database(':memory:').prepare('SELECT sqlite_version() AS v').get() as { v: string }).v;
  return {
    workload: `${events} events (${events / INTERACTION.length} interactions × ${INTERACTION.length}), ${PER_TICK} per tick, 1 session, median of ${rounds}`,
    machine: `${cpus()[0]?.model ?? 'unknown'} × ${cpus().length}, node ${process.version}, sqlite ${sqlite}`,
    journal_events_per_s: Math.round(journalRate),
    raw_batched_events_per_s: Math.round(rawRate),
    raw_autocommit_events_per_s: Math.round(naiveRate),
    journal_over_raw_batched: round3(journalRate / rawRate),
    journal_over_raw_autocommit: round3(journalRate / naiveRate),
    journal_commits: median(journalRuns.map((x) => x.commits)),
    bytes_per_event: round1(bytesPerEvent),
    raw_bytes_per_event: round1(median(rawRuns.map((x) => x.bytesPerEvent))),
    bytes_per_interaction: round1(bytesPerInteraction),
    target_events_per_s: TARGET_EVENTS_PER_S,
    target_bytes_per_interaction: TARGET_BYTES_PER_INTERACTION,
    events_per_s_met: journalRate >= TARGET_EVENTS_PER_S ? 'yes' : 'no',
    bytes_per_interaction_met: bytesPerInteraction <= TARGET_BYTES_PER_INTERACTION ? 'yes' : 'no',
  };
}

/** The same measurement in bench/run.ts's shape, should the runner register it. */
export const journalAppend: Benchmark = {
  name: 'journal-append',
  summary: 'journal events/s (batched per tick) and bytes per event, against raw SQLite inserts',
  async run({ quick, log }): Promise<BenchResult> {
    log(`journal-append: ${quick ? 20_000 : 200_000} events per path`);
    const r = await journalAppendBench({ quick });
    const num = (k: string): number => r[k] as number;
    const verdicts: Verdict[] = [
      { label: 'journal events/s', value: num('journal_events_per_s'), unit: 'events/s', target: `≥ ${TARGET_EVENTS_PER_S}`, met: r['events_per_s_met'] === 'yes' },
      { label: 'bytes per interaction', value: num('bytes_per_interaction'), unit: 'B', target: `≤ ${TARGET_BYTES_PER_INTERACTION}`, met: r['bytes_per_interaction_met'] === 'yes' },
      { label: 'journal / raw batched inserts (events/s)', value: num('journal_over_raw_batched'), unit: 'x' },
      { label: 'journal / raw autocommit inserts (events/s)', value: num('journal_over_raw_autocommit'), unit: 'x' },
    ];
    return {
      name: 'journal-append',
      workload: String(r['workload']),
      columns: ['events/s', 'bytes/event'],
      rows: [
        { subject: 'Journal.appendEvent, flushed per tick', baseline: false, values: [num('journal_events_per_s'), num('bytes_per_event')] },
        { subject: 'raw better-sqlite3, one transaction per tick (floor)', baseline: true, values: [num('raw_batched_events_per_s'), num('raw_bytes_per_event')] },
        { subject: 'raw better-sqlite3, one transaction per event', baseline: true, values: [num('raw_autocommit_events_per_s'), null] },
      ],
      verdicts,
      notes: [String(r['machine'])],
      detail: r,
    };
  },
};
