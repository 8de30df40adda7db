/**
 * One private tmux 3.3a server running one program, driven by plain `tmux -S sock …`
 * subprocesses (fine in tests, never on a hot path). It records the pane's raw output with
 * pipe-pane (set up in the same command list as new-session, so no byte is missed) and takes the
 * snapshot pieces of reference §5 for a rebuild.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { decodeOctal } from '../../lib/control/octal.js';
import type { PaneCapture } from '../../lib/control/pane-capture.js';
import { PANE_STATE_FORMAT, parsePaneState, type PaneState } from '../../lib/control/pane-state.js';

const run = promisify(execFile);

const CONF = [
  'set -g remain-on-exit on',
  "set -g remain-on-exit-format ''",
  'set -g scroll-on-clear off',
  'set -g status off',
  'set -s escape-time 0',
  'set -g history-limit 1000',
  'set -s default-terminal tmux-256color',
  '',
].join('\n');

export interface PaneOptions {
  readonly cols?: number;
  readonly rows?: number;
  /** Files to create in the pane's HOME (= its working directory) before it starts. */
  readonly files?: Readonly<Record<string, string>>;
}

export class TmuxPane {
  private constructor(
    readonly dir: string,
    readonly cols: number,
    readonly rows: number,
  ) {}

  get socket(): string {
    return join(this.dir, 'sock');
  }

  static async start(argv: readonly string[], options: PaneOptions = {}): Promise<TmuxPane> {
    const dir = mkdtempSync(join(tmpdir(), 'td-emu-'));
    const pane = new TmuxPane(dir, options.cols ?? 80, options.rows ?? 24);
    writeFileSync(join(dir, 'tmux.conf'), CONF);
    for (const [name, text] of Object.entries(options.files ?? {})) writeFileSync(join(dir, name), text);
    try {
      await run(
        'env',
        [
          '-i',
          'PATH=/usr/bin:/bin',
          `HOME=${dir}`,
          'TERM=xterm-256color',
          'LANG=C.UTF-8',
          'LESSHISTFILE=-',
          'tmux', '-u', '-S', pane.socket, '-f', join(dir, 'tmux.conf'),
          'new-session', '-d', '-s', 't', '-x', String(pane.cols), '-y', String(pane.rows), '-c', dir, '--', ...argv, ';',
          // After new-session: tmux 3.3a crashes when window-size manual is set before the first session.
          'set', '-g', 'window-size', 'manual', ';',
          'pipe-pane', '-o', '-t', 't', `cat >> ${join(dir, 'output.bin')}`,
        ],
        { cwd: dir },
      );
    } catch (err) {
      rmSync(dir, { recursive: true, force: true });
      throw err;
    }
    return pane;
  }

  async tmux(...args: string[]): Promise<Buffer> {
    const { stdout } = await run('tmux', ['-S', this.socket, ...args], { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 });
    return stdout;
  }

  /** Types text literally (no key names). */
  async type(text: string): Promise<void> {
    await this.tmux('send-keys', '-t', 't', '-l', '--', text);
  }

  async keys(...keys: string[]): Promise<void> {
    await this.tmux('send-keys', '-t', 't', ...keys);
  }

  async screenText(): Promise<string> {
    return (await this.tmux('capture-pane', '-p', '-N', '-t', 't')).toString('utf8');
  }

  /** Polls until the screen contains `needle` and then stops changing (a test may poll). */
  async waitForText(needle: string | RegExp, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last = '';
    let stableSince = 0;
    for (;;) {
      const screen = (await this.screenText()) + (await this.tmux('display-message', '-p', '-t', 't', '#{cursor_x},#{cursor_y}')).toString();
      const found = typeof needle === 'string' ? screen.includes(needle) : needle.test(screen);
      if (found && screen === last) {
        if (Date.now() - stableSince >= 150) return;
      } else stableSince = Date.now();
      last = screen;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${String(needle)}; screen:\n${screen}`);
      await new Promise((r) => setTimeout(r, 30));
    }
  }

  async state(): Promise<PaneState> {
    return parsePaneState((await this.tmux('display-message', '-p', '-t', 't', PANE_STATE_FORMAT)).toString('utf8'));
  }

  /** The snapshot pieces of reference §5, as the backend sends them over control mode. */
  async capture(): Promise<PaneCapture> {
    const state = await this.state();
    const main = stripFinalNewline(await this.tmux('capture-pane', '-p', '-e', '-J', '-N', '-S', '-', '-E', '-', '-t', 't'));
    const alt = stripFinalNewline(await this.tmux('capture-pane', '-p', '-e', '-J', '-N', '-a', '-q', '-t', 't'));
    const pending = decodeOctal(stripFinalNewline(await this.tmux('capture-pane', '-p', '-P', '-C', '-t', 't')));
    const after = await this.state();
    if (JSON.stringify(after) !== JSON.stringify(state)) throw new Error('the pane changed while it was captured; wait for it to settle first');
    return { cols: state.paneWidth, rows: state.paneHeight, main, alternateSaved: state.alternateOn && alt.length > 0 ? alt : undefined, pending, state };
  }

  /** `capture-pane -p -e -N` of the visible screen and tmux's cursor: the fidelity reference. */
  async visible(): Promise<{ capture: Uint8Array; cursor: { x: number; y: number } }> {
    const capture = stripFinalNewline(await this.tmux('capture-pane', '-p', '-e', '-N', '-t', 't'));
    const state = await this.state();
    return { capture, cursor: { x: state.cursorX, y: state.cursorY } };
  }

  /** Everything the program wrote to its pty so far (pipe-pane). */
  output(): Uint8Array {
    const file = join(this.dir, 'output.bin');
    return existsSync(file) ? new Uint8Array(readFileSync(file)) : new Uint8Array(0);
  }

  /** Kills the server and removes the temp dir; errors are thrown, not swallowed. */
  async close(): Promise<void> {
    try {
      const pid = Number((await this.tmux('display-message', '-p', '#{pid}')).toString().trim());
      await this.tmux('kill-server').catch(() => undefined);
      for (let i = 0; i < 100 && pid > 0 && alive(pid); i++) await new Promise((r) => setTimeout(r, 20));
    } finally {
      rmSync(this.dir, { recursive: true, force: true });
    }
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** `-p` ends the last row with \n; control-mode replies do not carry it. */
function stripFinalNewline(b: Buffer): Uint8Array {
  const end = b.length > 0 && b[b.length - 1] === 0x0a ? b.length - 1 : b.length;
  return new Uint8Array(b.subarray(0, end));
}
