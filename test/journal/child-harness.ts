/**
 * Real child processes that open the journal: the journal's sources are transpiled (typescript's
 * transpileModule, no type check) into a temp dir beside a small driver script, so the children
 * run the code under test, not a stale build. Each child speaks line-delimited JSON on stdout and
 * waits for commands on stdin.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * argv: <dataDir> <sessionId>. Commands on stdin, one a line: open, acquire, acquire-at:<ms>, exit.
 * Replies: {"ready":pid} at start, then one JSON line per command.
 */
const CHILD_SCRIPT = `
import { createInterface } from 'node:readline';
import { Journal, currentHolder } from './journal/journal.js';
const [dataDir, sessionId] = process.argv.slice(2);
let journal;
const say = (o) => process.stdout.write(JSON.stringify(o) + '\\n');
const rl = createInterface({ input: process.stdin });
rl.on('line', (line) => {
  try {
    if (line === 'open') { journal = Journal.open(dataDir); say({ opened: true }); }
    else if (line === 'acquire' || line.startsWith('acquire-at:')) {
      // acquire-at:<epoch ms>: every racer spins to the same instant, then opens (if needed) and acquires.
      const at = line.startsWith('acquire-at:') ? Number(line.slice(11)) : 0;
      while (Date.now() < at) { /* spin: a start line for the race */ }
      journal ??= Journal.open(dataDir);
      const lease = journal.acquireLease(sessionId, currentHolder());
      say({ token: lease.token, pid: process.pid });
    }
    else if (line === 'exit') { journal?.close(); process.exit(0); }
  } catch (e) {
    say({ error: e.code ?? String(e), pid: process.pid, holder: e.holder ?? null, message: String(e.message) });
  }
});
rl.on('close', () => process.exit(0));
say({ ready: process.pid });
`;

export interface ChildBundle {
  readonly script: string;
  dispose(): void;
}

export function buildChildBundle(): ChildBundle {
  const dir = mkdtempSync(join(tmpdir(), 'td-journal-child-'));
  const sources = [...readdirSync(join(ROOT, 'journal')).filter((f) => f.endsWith('.ts')).map((f) => `journal/${f}`), 'lib/common/errors.ts'];
  for (const rel of sources) {
    const out = ts.transpileModule(readFileSync(join(ROOT, rel), 'utf8'), {
      compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
      fileName: rel,
    });
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel.replace(/\.ts$/, '.js')), out.outputText);
  }
  writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
  // Bare imports (better-sqlite3) resolve through the project's node_modules.
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  const script = join(dir, 'child.js');
  writeFileSync(script, CHILD_SCRIPT);
  return { script, dispose: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface ChildReply {
  readonly ready?: number;
  readonly opened?: boolean;
  readonly token?: number;
  readonly pid?: number;
  readonly error?: string;
  readonly holder?: { pid: number; startTime: number } | null;
  readonly message?: string;
}

export class JournalChild {
  readonly proc: ChildProcessWithoutNullStreams;
  private readonly replies: ChildReply[] = [];
  private waiters: ((r: ChildReply) => void)[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private stderr = '';

  constructor(bundle: ChildBundle, dataDir: string, sessionId: string) {
    this.proc = spawn(process.execPath, [bundle.script, dataDir, sessionId], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.proc.stderr.on('data', (d: Buffer) => (this.stderr += d.toString()));
    createInterface({ input: this.proc.stdout }).on('line', (line) => {
      const reply = JSON.parse(line) as ChildReply;
      const waiter = this.waiters.shift();
      if (waiter) waiter(reply);
      else this.replies.push(reply);
    });
    this.exited = new Promise((resolveExit) => this.proc.once('exit', (code, signal) => resolveExit({ code, signal })));
  }

  get pid(): number {
    return this.proc.pid ?? -1;
  }

  /** The next reply line (or a rejection carrying stderr if the child dies first). */
  next(): Promise<ChildReply> {
    const queued = this.replies.shift();
    if (queued) return Promise.resolve(queued);
    return new Promise((resolveReply, rejectReply) => {
      this.waiters.push(resolveReply);
      void this.exited.then(({ code, signal }) => rejectReply(new Error(`child ${this.pid} exited (${String(code)}/${String(signal)}) before replying: ${this.stderr}`)));
    });
  }

  send(command: 'open' | 'acquire' | `acquire-at:${number}` | 'exit'): void {
    this.proc.stdin.write(`${command}\n`);
  }

  async kill9(): Promise<void> {
    this.proc.kill('SIGKILL');
    await this.exited;
  }

  async end(): Promise<void> {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return;
    this.proc.stdin.end();
    await this.exited;
  }
}
