/**
 * Every caller-reachable argument of every builder in lib/control/tmux-commands.ts (and of the pane
 * argv and the ssh quoting around them), fed arbitrary strings with a fixed fast-check seed, the
 * built commands run against a real tmux 3.3a. Each case asserts that the builder either refuses
 * with a typed error or the command does exactly what it says (the bytes the program reads are the
 * bytes sent, the name tmux reports is the name given, the argv and cwd the program sees are the
 * ones asked for …), and at the end that nothing ran: no `#(touch …)`, `$(…)` or backquote in any
 * input created its marker, while a deliberate `#(touch …)` does (the positive control).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { quote } from '../../../lib/control/encode.js';
import type { PaneId } from '../../../lib/control/ids.js';
import {
  bufferSizes,
  capturePaneToBuffer,
  controlAttachArgv,
  deleteBuffer,
  displayMessage,
  displayMessageArgv,
  encodeSendKeys,
  encodeSendText,
  isSessionName,
  killServerArgv,
  listSessionsArgv,
  operatorAttachArgv,
  pasteText,
  refreshClientSubscribe,
  resizeWindow,
  sendKeysArgv,
  sendTextArgv,
  serverConfig,
  startServerArgv,
} from '../../../lib/control/tmux-commands.js';
import { normalizeKey } from '../../../lib/control/encode.js';
import { TmuxCommandError, TmuxDriveError, UsageError } from '../../../lib/common/errors.js';
import { paneArgv } from '../../../lib/policy/sandbox.js';
import { remoteCommand } from '../../../backends/ssh/shell-quote.js';
import { SshHost } from '../../../backends/ssh/ssh-host.js';
import { TmuxHarness } from '../../control/tmux-harness.js';
import { killGone, processesMentioning } from '../../helpers.js';

const SEED = 20261130;
const ENV = { ...process.env, LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8', TMUX: '' };

let tmux: TmuxHarness;
let marker: string;
let receiver: { pane: PaneId; file: string; token: string; offset: number; n: number };
const cases: Record<string, number> = {};

/** A raw-tty program that records every byte and acknowledges each `<<CASE-n-token>>` it reads. */
const RECEIVER = `
import os, sys, tty, re
tty.setraw(0)
out = open(sys.argv[1], 'wb', buffering=0)
token = sys.argv[2].encode()
pat = re.compile(b'<<CASE-([0-9]+)-' + token + b'>>')
os.write(1, b'READY\\r\\n')
tail = b''
while True:
    data = os.read(0, 65536)
    if not data:
        break
    out.write(data)
    buf = tail + data
    for m in pat.finditer(buf):
        os.write(1, b'ACK-' + m.group(1) + b'\\r\\n')
    tail = buf[-(len(token) + 32):]
`;

/** Writes what a program got: argv as bytes (hex), cwd, PWD, whether TMUX/TMUX_PANE are set. */
const ARGV_PROBE = `
import os, sys, json
res = {'argv': [os.fsencode(a).hex() for a in sys.argv[2:]], 'cwd': os.getcwd(), 'pwd': os.environ.get('PWD'), 'tmux': [k for k in ('TMUX', 'TMUX_PANE') if k in os.environ]}
open(sys.argv[1] + '.part', 'w').write(json.dumps(res))
os.rename(sys.argv[1] + '.part', sys.argv[1])
`;

function hostile(): fc.Arbitrary<string> {
  const fragments = [
    '#(', '#{', '##', '#', '#[', ';', '\\;', ' ;', "'", '"', '\\', '\n', '\r', '\t', '\x1b', '\x7f', '\0', '😀', '\ud800', '-', '--', '-l', '%', '%if', '%0',
    '~', '~root', '$VAR', '$HOME', '${HOME}', '#{pane_id}', '#{E:HOME}', '#[fg=red]', `#(touch ${marker})`, `#{#(touch ${marker})}`, `$(touch ${marker})`,
    `\`touch ${marker}\``, '#(touch pwned)', ' ', '{', '}', 'é', '中', 'A=b', '@1', '$0', ':', '.',
  ];
  return fc
    .array(fc.oneof(fc.constantFrom(...fragments), fc.string({ unit: 'grapheme', maxLength: 6 }), fc.string({ unit: 'binary', maxLength: 4 })), { maxLength: 10 })
    .map((parts) => parts.join(''));
}

function count(name: string): void {
  cases[name] = (cases[name] ?? 0) + 1;
}

/** The builder refused: it must be a typed UsageError, never anything else. */
function refused(err: unknown, codes: readonly string[] = ['BAD_ARGUMENT']): void {
  expect(err).toBeInstanceOf(UsageError);
  expect(codes).toContain((err as UsageError).code);
}

/** Sends `commands` then a sentinel; returns the bytes the receiver read in between. */
async function deliver(commands: readonly (string | { line: string })[]): Promise<Buffer> {
  const n = ++receiver.n;
  const sentinel = `<<CASE-${n}-${receiver.token}>>`;
  await tmux.queue.sendBatch([...commands, ...encodeSendText(receiver.pane, sentinel)], { timeoutMs: 20_000 });
  await tmux.waitForOutput(receiver.pane, `ACK-${n}\r`);
  const all = readFileSync(receiver.file);
  const end = all.indexOf(sentinel, receiver.offset);
  const got = all.subarray(receiver.offset, end);
  receiver.offset = end + Buffer.byteLength(sentinel);
  return got;
}

function runTmux(argv: readonly string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync('tmux', argv, { env: ENV, cwd: '/', encoding: 'utf8', timeout: 10_000 });
  return { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

beforeAll(async () => {
  tmux = await TmuxHarness.start();
  marker = join(tmux.dir, 'pwned');
  const file = join(tmux.dir, 'received.bin');
  const token = Math.random().toString(16).slice(2, 10);
  writeFileSync(join(tmux.dir, 'receiver.py'), RECEIVER);
  writeFileSync(join(tmux.dir, 'argv.py'), ARGV_PROBE);
  const pane = (await tmux.command(`new-window -d -P -F '#{pane_id}' -- python3 ${quote(join(tmux.dir, 'receiver.py'))} ${quote(file)} ${token}`)).text().trim() as PaneId;
  await tmux.waitForOutput(pane, 'READY');
  receiver = { pane, file, token, offset: 0, n: 0 };
});

afterAll(async () => {
  console.info(`hostile-input property cases run: ${JSON.stringify(cases)}`);
  const dir = tmux?.dir;
  await tmux?.stop();
  // Loud, and by pid: nothing of the harness may outlive the file (its receiver reads forever).
  const left = dir ? processesMentioning(dir) : [];
  if (left.length > 0) console.warn(`builders property test: killing ${left.length} leftover process(es) of ${dir}`);
  killGone(left);
});

describe('builders under arbitrary input, against tmux 3.3a', () => {
  it('send-keys text (encodeSendText): the program reads exactly the UTF-8 bytes of the text', async () => {
    await fc.assert(
      fc.asyncProperty(hostile(), async (text) => {
        count('encodeSendText.text');
        expect(await deliver(encodeSendText(receiver.pane, text))).toEqual(Buffer.from(text, 'utf8'));
      }),
      { seed: SEED, numRuns: 120 },
    );
  });

  it('paste (pasteText: set-buffer + paste-buffer): the program reads exactly the text, NUL and LF included', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(hostile(), hostile().map((s) => s.repeat(200))), async (text) => {
        count('pasteText.text');
        expect(await deliver(pasteText(receiver.pane, text))).toEqual(Buffer.from(text, 'utf8'));
      }),
      { seed: SEED, numRuns: 60 },
    );
  });

  it('send-keys key names (encodeSendKeys): refused as UNKNOWN_KEY_NAME, or delivered (a lone character as itself)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(hostile(), fc.constantFrom('Enter', 'C-c', 'M-x', 'F5', 'S-Tab', 'C-M-Left', '#', ';', "'", '-')), async (key) => {
        count('encodeSendKeys.key');
        let line: string;
        try {
          line = encodeSendKeys(receiver.pane, [key]);
        } catch (err) {
          return refused(err, ['UNKNOWN_KEY_NAME']);
        }
        const got = await deliver([line]);
        expect(got.length).toBeGreaterThan(0);
        if ([...key].length === 1 && normalizeKey(key) === key) expect(got).toEqual(Buffer.from(key, 'utf8'));
      }),
      { seed: SEED, numRuns: 120 },
    );
  });

  it('new-session of the generated config (serverConfig): the session name tmux reports is the one given, or the name is refused', async () => {
    const used = new Set<string>(['main']);
    await fc.assert(
      fc.asyncProperty(fc.oneof(hostile(), fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_-]{0,20}$/)), async (name) => {
        count('serverConfig.session');
        if (used.has(name)) return;
        used.add(name);
        let conf: string;
        try {
          conf = serverConfig({ session: name, cols: 40, rows: 10, scrollback: 100, argv: ['/bin/sleep', '60'] });
        } catch (err) {
          expect(isSessionName(name)).toBe(false);
          return refused(err);
        }
        // Only the line with the name: the others are constants, and a second `set -g window-size
        // manual` before a new-session crashes a 3.3a server (the full config runs in the paths case).
        await tmux.command(conf.split('\n').find((l) => l.startsWith('new-session')) as string);
        expect((await tmux.command(displayMessage(name, '#{session_name}'))).text()).toBe(name);
        await tmux.command(`kill-session -t ${quote(`=${name}`)}`);
        // A bare digit name would be taken as an index: the builders always target `=name:`.
        if (/^\d+$/.test(name)) expect(displayMessage(name, '#{pid}').line).toContain(`-t =${name}: `);
      }),
      { seed: SEED, numRuns: 60 },
    );
  });

  it('the pane argv (serverConfig argv words, paneArgv): the program gets exactly its arguments and the directory, and no TMUX', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(hostile(), { maxLength: 5 }), hostile(), async (args, dirName) => {
        count('serverConfig.argv+paneArgv.chdir');
        const component = dirName.replace(/[/\0]/g, '_').slice(0, 60) || 'empty';
        const dir = join(tmux.dir, 'cwd', component === '.' || component === '..' ? `${component}_` : component);
        mkdirSync(dir, { recursive: true });
        const result = join(tmux.dir, `argv-${++n}.json`);
        const argv = paneArgv(['/usr/bin/python3', join(tmux.dir, 'argv.py'), result, ...args], dir);
        let conf: string;
        try {
          conf = serverConfig({ session: `argv${n}`, cols: 40, rows: 10, scrollback: 100, argv });
        } catch (err) {
          expect(args.some((a) => a.includes('\0'))).toBe(true);
          return refused(err);
        }
        const newSession = conf.split('\n').find((l) => l.startsWith('new-session'));
        await tmux.command(newSession as string);
        await waitForFile(result);
        const got = JSON.parse(readFileSync(result, 'utf8')) as { argv: string[]; cwd: string; pwd: string; tmux: string[] };
        expect(got.argv).toEqual(args.map((a) => Buffer.from(a, 'utf8').toString('hex')));
        // Compared as UTF-8 bytes: a lone surrogate became U+FFFD in the path, as in any UTF-8 encoding.
        expect(Buffer.from(got.cwd)).toEqual(Buffer.from(dir));
        expect(Buffer.from(got.pwd)).toEqual(Buffer.from(dir));
        expect(got.tmux).toEqual([]);
      }),
      { seed: SEED, numRuns: 40 },
    );
    // env would read a program path holding "=" as a variable and run the next word instead.
    expect(() => paneArgv(['/opt/a=b/tool', 'next'])).toThrow(expect.objectContaining({ code: 'NOT_ALLOWED' }));
  });

  it('resize-window (resizeWindow): BAD_SIZE, or the window takes exactly the size asked', async () => {
    const size = fc.oneof(fc.integer({ min: 2, max: 250 }), fc.constantFrom(0, -1, 1.5, 10_001, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31));
    await fc.assert(
      fc.asyncProperty(size, size, async (cols, rows) => {
        count('resizeWindow.cols+rows');
        let command;
        try {
          command = resizeWindow('main', cols, rows);
        } catch (err) {
          return refused(err, ['BAD_SIZE']);
        }
        await tmux.command(command);
        expect((await tmux.command(displayMessage('main', '#{window_width}\t#{window_height}'))).text()).toBe(`${cols}\t${rows}`);
      }),
      { seed: SEED, numRuns: 40 },
    );
  });

  it('targets, formats, buffer and subscription names: refused unless they are ids, our names and fixed #{variable} formats', async () => {
    const target = fc.oneof(hostile(), fc.constantFrom('%0', 'main', '%999', '@0', 'td-x'));
    const format = fc.oneof(hostile(), fc.constantFrom('#{pane_id}', '#{session_name}\t#{pane_id}'));
    const bufferName = fc.oneof(hostile(), fc.constantFrom('td-fuzz', 'td-snap-main', 'td-'), fc.stringMatching(/^td-[a-z0-9-]{1,8}$/));
    const ask = async (build: () => { line: string }): Promise<void> => {
      let command;
      try {
        command = build();
      } catch (err) {
        return refused(err);
      }
      // It may fail as tmux sees it (no such pane), never as a parse error of our making.
      await tmux.command(command).catch((err: unknown) => {
        expect(err).toBeInstanceOf(TmuxCommandError);
        expect((err as TmuxCommandError).detail).not.toMatch(/parse error|syntax error|unknown command/);
      });
    };
    await fc.assert(
      fc.asyncProperty(target, format, bufferName, hostile(), async (t, f, b, s) => {
        count('displayMessage.target+format');
        await ask(() => displayMessage(t as PaneId, f));
        count('buffers.name');
        await ask(() => capturePaneToBuffer('%0', 'screen', b));
        await ask(() => bufferSizes([b]));
        await ask(() => deleteBuffer(b));
        count('refreshClientSubscribe.name+window+format');
        await ask(() => refreshClientSubscribe(s, t as '@0', f));
      }),
      { seed: SEED, numRuns: 80 },
    );
  });

  it('argv of tmux subprocesses (sendTextArgv, sendKeysArgv, displayMessageArgv): words reach tmux as they are, a final ";" included', async () => {
    await fc.assert(
      fc.asyncProperty(hostile(), async (text) => {
        count('sendTextArgv.text');
        let argv: string[];
        try {
          argv = sendTextArgv(receiver.pane, text);
        } catch (err) {
          expect([...text].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f)).toBe(true);
          return refused(err);
        }
        const r = runTmux(['-S', tmux.socket, ...argv]);
        expect(r.status, r.stderr).toBe(0);
        expect(await deliver([])).toEqual(Buffer.from(text, 'utf8'));
      }),
      { seed: SEED, numRuns: 40 },
    );
    count('sendKeysArgv.key');
    expect(runTmux(['-S', tmux.socket, ...sendKeysArgv(receiver.pane, [';'])]).status).toBe(0);
    expect(await deliver([])).toEqual(Buffer.from(';'));
    expect(() => sendKeysArgv(receiver.pane, [`#(touch ${marker})`])).toThrow(UsageError);
    count('displayMessageArgv.target');
    expect(runTmux(['-S', tmux.socket, ...displayMessageArgv('main', '#{session_name}')]).stdout).toBe('main\n');
    expect(() => displayMessageArgv(`#(touch ${marker})`, '#{pid}')).toThrow(UsageError);
  });

  it('socket and config paths (startServerArgv, listSessionsArgv, killServerArgv, controlAttachArgv, operatorAttachArgv): used as given, never expanded', async () => {
    const base = mkdtempSync(join(tmpdir(), 'td-paths-'));
    try {
      await fc.assert(
        fc.asyncProperty(hostile(), async (raw) => {
          count('startServerArgv.socket+conf');
          const name = raw.replace(/[/\0]/g, '_').slice(0, 40) || 'x';
          const dir = mkdtempSync(join(base, 'd'));
          const socket = join(dir, `s${name}`);
          const conf = join(dir, `c${name}`);
          if (Buffer.byteLength(socket) > 100) return;
          writeFileSync(conf, serverConfig({ session: 'p', cols: 20, rows: 5, scrollback: 10, argv: ['/bin/sleep', '30'] }));
          const started = runTmux(startServerArgv(socket, conf));
          expect(started.status, started.stderr).toBe(0);
          expect(runTmux(listSessionsArgv(socket)).status).toBe(0);
          // Compared as UTF-8 bytes: a lone surrogate became U+FFFD in the path, as in any UTF-8 encoding.
          expect(Buffer.from(runTmux(['-S', socket, ...displayMessageArgv('p', '#{socket_path}')]).stdout)).toEqual(Buffer.from(`${socket}\n`));
          expect(controlAttachArgv(socket, 'p')).toContain(socket);
          expect(operatorAttachArgv(socket, 'p', true)).toContain(socket);
          expect(runTmux(killServerArgv(socket)).status).toBe(0);
        }),
        // Found with a fresh seed: a name of a lone surrogate (the path holds U+FFFD).
        { seed: SEED, numRuns: 15, examples: [['\ud800']] },
      );
      for (const bad of [`#(touch ${marker})`, 'a;', '-t', '']) expect(() => controlAttachArgv('/tmp/s', bad)).toThrow(UsageError);
    } finally {
      // A case that failed before its kill-server leaves its server (which outlives its socket's
      // directory): by pid, so that no failure here leaves a process behind.
      killGone(processesMentioning(base));
      rmSync(base, { recursive: true, force: true });
    }
  });

  it('remote commands (backends/ssh): every word and env value crosses the remote shell exactly; the host is one word after --', () => {
    fc.assert(
      fc.property(fc.array(hostile(), { maxLength: 5 }), hostile(), (words, value) => {
        count('ssh.remoteCommand.words+env');
        const clean = words.map((w) => w.replaceAll('\0', ''));
        const v = value.replaceAll('\0', '');
        const out = spawnSync('/bin/sh', ['-c', remoteCommand(['printf', '%s\\0', 'first', ...clean])]).stdout;
        expect(out).toEqual(Buffer.concat(['first', ...clean].map((w) => Buffer.from(`${w}\0`, 'utf8'))));
        const env = spawnSync('/bin/sh', ['-c', remoteCommand(['env', '-i', `V=${v}`, '/usr/bin/printenv', 'V'])]).stdout;
        expect(env).toEqual(Buffer.from(`${v}\n`, 'utf8'));
        expect(() => remoteCommand(['a\0b'])).toThrow();
      }),
      { seed: SEED, numRuns: 100 },
    );
    const dataDir = mkdtempSync(join(tmpdir(), 'td-ssh-'));
    try {
      fc.assert(
        fc.property(hostile(), (host) => {
          count('ssh.sshArgv.host');
          const ssh = new SshHost({ id: 'h', ssh: { host, user: 'u' } }, dataDir, 1000);
          const argv = ssh.sshArgv(['tmux', ...listSessionsArgv('/r/s')]);
          expect(argv[argv.indexOf('--') + 1]).toBe(host);
          expect(argv.at(-1)).toBe(remoteCommand(['tmux', '-S', '/r/s', 'list-sessions']));
        }),
        { seed: SEED, numRuns: 60 },
      );
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('ran nothing: no marker, while a deliberate #(touch …) through a format does run (the positive control)', async () => {
    const canary = join(tmux.dir, 'canary');
    await tmux.command(`display-message -p ${quote(`#(touch ${canary})`)}`);
    await waitForFile(canary);
    expect(existsSync(marker)).toBe(false);
    for (const dir of [process.cwd(), tmux.dir, '/']) expect(existsSync(join(dir, 'pwned')), dir).toBe(false);
    expect(Object.values(cases).reduce((a, b) => a + b, 0)).toBeGreaterThan(500);
  });
});

async function waitForFile(path: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!existsSync(path)) {
    if (Date.now() > deadline) throw new TmuxDriveError('TMUX_TIMEOUT', `${path} did not appear within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
