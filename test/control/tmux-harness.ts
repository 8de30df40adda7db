/**
 * A private tmux 3.3a server driven through the real control-mode stack of lib/control
 * (LineSplitter → ControlParser → CommandQueue), for integration tests. Each harness has its own
 * socket in a temp dir, `-f /dev/null`, `-u` and LANG=C.UTF-8 (a non-UTF-8 client gets `_` for
 * non-ASCII in replies). Receivers are python3 programs that put their tty in raw mode and record
 * every byte they get until a sentinel, so a test sees exactly what tmux wrote to the pane.
 */
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CommandQueue, type QueuedCommand, type Reply } from '../../lib/control/command-queue.js';
import { ControlParser, type ControlEvent, type PaneId } from '../../lib/control/parser.js';
import { systemClock } from '../../backends/process/system-clock.js';

export const SENTINEL = '<<END-OF-INPUT>>';

const RECEIVER = `
import os, sys, tty
out = sys.argv[1]
tty.setraw(0)
os.write(1, b'READY\\r\\n')
sentinel = ${JSON.stringify(SENTINEL)}.encode()
buf = bytearray()
while not buf.endswith(sentinel):
    data = os.read(0, 65536)
    if not data:
        break
    buf += data
with open(out + '.part', 'wb') as f:
    f.write(bytes(buf[:-len(sentinel)]))
os.rename(out + '.part', out)
os.write(1, b'DONE\\r\\n')
os.read(0, 1)
`;

const ENV = { ...process.env, LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8', TMUX: '' };

export class TmuxHarness {
  readonly events: ControlEvent[] = [];
  readonly queue: CommandQueue;
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #parser: ControlParser;
  readonly #output = new Map<string, Buffer[]>();
  #waiters: (() => void)[] = [];
  #receivers = 0;
  stderr = '';

  private constructor(
    readonly dir: string,
    readonly socket: string,
  ) {
    this.#child = spawn('tmux', ['-u', '-S', socket, '-C', 'attach-session', '-t', 'main'], { env: ENV, stdio: ['pipe', 'pipe', 'pipe'] });
    this.queue = new CommandQueue((data) => this.#child.stdin.write(data), systemClock, { defaultTimeoutMs: 10_000 });
    this.#parser = new ControlParser(
      (event) => {
        this.events.push(event);
        if (event.kind === 'reply') this.queue.onReply(event);
        if (event.kind === 'output') {
          const list = this.#output.get(event.pane) ?? [];
          list.push(Buffer.from(event.data));
          this.#output.set(event.pane, list);
        }
        const waiters = this.#waiters;
        this.#waiters = [];
        for (const w of waiters) w();
      },
      // As ControlClient does: replies with pane text are framed by their size.
      { replyFraming: () => this.queue.framingOfNext() },
    );
    this.#child.stdout.on('data', (chunk: Buffer) => this.#parser.push(chunk));
    this.#child.stderr.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
    this.#child.on('close', () => {
      this.#parser.end();
      this.queue.close(new Error('tmux control client exited'));
    });
  }

  /** Starts a private server and attaches a control client; resolves after %session-changed. */
  static async start(): Promise<TmuxHarness> {
    const dir = mkdtempSync(join(tmpdir(), 'tmux-drive-control-'));
    const socket = join(dir, 's');
    writeFileSync(join(dir, 'receiver.py'), RECEIVER);
    const started = spawnSync('tmux', ['-u', '-S', socket, '-f', '/dev/null', 'new-session', '-d', '-s', 'main', '-x', '200', '-y', '50', '-c', dir, '--', 'sleep', '86400'], { env: ENV });
    if (started.status !== 0) throw new Error(`tmux new-session failed: ${started.stderr}`);
    const harness = new TmuxHarness(dir, socket);
    // tmux 3.3a runs stdin commands before attach completes ("no current client"): wait for it.
    await harness.waitFor((e) => e.kind === 'notification' && e.name === 'session-changed', 10_000);
    return harness;
  }

  /** Resolves with the first event (already seen or future) matching `predicate`. */
  waitFor(predicate: (event: ControlEvent) => boolean, timeoutMs = 20_000): Promise<ControlEvent> {
    return this.#until(() => this.events.find(predicate), timeoutMs, 'event');
  }

  outputOf(pane: PaneId): Buffer {
    return Buffer.concat(this.#output.get(pane) ?? []);
  }

  /** Resolves once `pane` has printed `text` (anywhere in its output so far). */
  waitForOutput(pane: PaneId, text: string, timeoutMs = 20_000): Promise<true> {
    return this.#until(() => (this.outputOf(pane).includes(text) ? true : undefined), timeoutMs, `${JSON.stringify(text)} from ${pane}`);
  }

  #until<T>(probe: () => T | undefined, timeoutMs: number, what: string): Promise<T> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}; stderr: ${this.stderr}`)), timeoutMs);
      const check = (): void => {
        const found = probe();
        if (found !== undefined) {
          clearTimeout(timer);
          resolve(found);
        } else this.#waiters.push(check);
      };
      check();
    });
  }

  command(line: string | QueuedCommand): Promise<Reply> {
    return this.queue.send(line);
  }

  /** Opens a window running a raw-mode receiver; resolves once its tty is raw. */
  async openReceiver(): Promise<{ pane: PaneId; file: string }> {
    const file = join(this.dir, `received-${this.#receivers++}.bin`);
    const reply = await this.command(`new-window -d -P -F '#{pane_id}' -c '${this.dir}' -- python3 '${join(this.dir, 'receiver.py')}' '${file}'`);
    const pane = reply.text().trim() as PaneId;
    await this.#until(() => (this.outputOf(pane).includes('READY') ? true : undefined), 20_000, `READY from ${pane}`);
    return { pane, file };
  }

  /** Sends `commands` (which target `pane`) plus the sentinel in one batch; returns the bytes the program read. */
  async deliver(receiver: { pane: PaneId; file: string }, commands: readonly string[], timeoutMs = 20_000): Promise<Buffer> {
    await this.queue.sendBatch([...commands, `send-keys -t ${receiver.pane} -l -- '${SENTINEL}'`], { timeoutMs });
    await this.#until(() => (this.outputOf(receiver.pane).includes('DONE') ? true : undefined), timeoutMs, `DONE from ${receiver.pane}`);
    return readFileSync(receiver.file);
  }

  /** Detaches, kills the server and removes the temp dir; failures here are reported, not masked. */
  async stop(): Promise<void> {
    const closed = new Promise((resolve) => this.#child.once('close', resolve));
    this.#child.stdin.end();
    await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 5000))]);
    if (this.#child.exitCode === null) this.#child.kill('SIGKILL');
    spawnSync('tmux', ['-S', this.socket, 'kill-server'], { env: ENV });
    rmSync(this.dir, { recursive: true, force: true });
  }
}
