/**
 * Records the screen fixture corpus (test/fixtures/screens/*.json): real programs driven through
 * tmux-drive (a real pty in a real tmux server, sandboxed as the default config has it), one
 * labelled frame each, plus synthetic frames for states no offline program can reach (an AI CLI
 * mid-turn, a permission dialog, a dim suggestion), parsed by the same emulator.
 *
 *   npm run record-fixtures -- [--only name,name] [--ai-dir /var/tmp/aicli] [--skip-ai] [--list]
 *
 * The AI CLIs are found under --ai-dir (default $TMUX_DRIVE_AI_DIR or /var/tmp/aicli), installed
 * with `npm install --prefix <dir> @openai/codex@0.171 @google/gemini-cli@0.61 opencode-ai@1.18
 * @anthropic-ai/claude-code@2.1.197` outside /tmp (the sandbox mounts its own /tmp). Each runs
 * with its workspace as a scratch HOME and no network. A scenario whose program is missing is
 * skipped, never faked.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Driver, type Session } from '../lib/index.js';
import type { DriverConfigInput } from '../lib/policy/config-schema.js';
import { classifyScreen, type ScreenSignals } from '../lib/perceive/classify-screen.js';
import { compareActivity, type ProcessActivitySample } from '../lib/perceive/activity.js';
import { loadProfileFiles } from '../lib/driver/profile-files.js';
import { sampleProcessActivity } from '../backends/process/process-activity.js';
import { packageRoot, paneRoot, replayCells } from './record/capture.js';
import { encodeCells, fixtureSnapshot, perceivedCells, type FixtureFile, type FixtureLabel } from './fixture-format.js';

type AllowInput = NonNullable<DriverConfigInput['allow']>[number];

const CONSENT = { acknowledgedRisk: true as const, acknowledgedAt: '2026-11-30T00:00:00Z' };
const BASH = ['--norc', '--noprofile'];

// ---- what a scenario gets to work with -----------------------------------------------------------

interface Frame {
  /** Take the process-activity comparison over this window, after output stops (ms). */
  readonly activityWindowMs?: number;
  /** The stuckMs the frame is classified with. */
  readonly stuckMs?: number;
  /** Take one sample at capture time (its readingTerminal fact). */
  readonly sample?: boolean;
  /** Capture at once, while output is still arriving (no settle). */
  readonly flowing?: boolean;
  /** Quiet time to wait for before capturing (default 400 ms). */
  readonly settleMs?: number;
  /** Replace the recorded timing by "quiet for this long" (the frame is then labelled synthetic). */
  readonly pretendQuietMs?: number;
}

interface Ctx {
  readonly s: Session;
  text(pattern: string | RegExp, timeoutMs?: number): Promise<void>;
  idle(ms: number, timeoutMs?: number): Promise<void>;
  type(text: string, submit?: boolean): Promise<void>;
  keys(...keys: string[]): Promise<void>;
  pause(ms: number): Promise<void>;
}

interface Scenario {
  readonly name: string;
  readonly profile: string;
  readonly allow: AllowInput;
  readonly args?: readonly string[];
  readonly cols?: number;
  readonly rows?: number;
  readonly label: FixtureLabel;
  readonly source: string;
  readonly notes?: string;
  run(ctx: Ctx): Promise<Frame | void>;
}

interface SyntheticScenario {
  readonly name: string;
  readonly profile: string;
  readonly cols?: number;
  readonly rows?: number;
  readonly label: FixtureLabel;
  readonly source: string;
  readonly ansi: string;
  readonly signals?: Partial<ScreenSignals>;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
/**
 * Codex and Gemini paint a screen, go quiet, and only then attach their key handlers: a key sent
 * 300 ms after the screen settled was dropped by codex 0.171 (its "Press enter to save" step).
 * A settled screen is not a ready program; these steps wait this long after the text shows.
 */
const READY_MS = 1500;

// ---- the scenarios: real programs -------------------------------------------------------------

function bash(extra: Partial<AllowInput> = {}): AllowInput {
  return { id: 'bash', match: { path: '/bin/bash' }, consent: CONSENT, env: { PS1: '$ ' }, ...extra };
}

function program(id: string, path: string, extra: Partial<AllowInput> = {}): AllowInput {
  return { id, match: { path }, consent: CONSENT, ...extra };
}

/** A bash that runs `script` and then stays at its prompt. */
function shellScenario(name: string, script: string, label: FixtureLabel, source: string, frame: Frame = {}, notes?: string): Scenario {
  return {
    name,
    profile: 'shell',
    allow: bash(),
    args: BASH,
    label,
    source: `bash 5.2 --norc (PS1='$ ') under tmux-drive: ${source}`,
    ...(notes ? { notes } : {}),
    async run({ text, type }) {
      await text('$ ');
      await type(script, true);
      return frame;
    },
  };
}

const REAL: Scenario[] = [
  shellScenario('bash-prompt', 'echo hello', { state: 'awaiting-input', reason: 'cursor_parked' }, 'prompt after `echo hello`'),
  {
    name: 'bash-typed-unsubmitted',
    profile: 'shell',
    allow: bash(),
    args: BASH,
    label: { state: 'awaiting-input', reason: 'cursor_parked' },
    source: "bash 5.2 --norc (PS1='$ ') under tmux-drive: `git status` typed, not submitted",
    async run({ text, type }) {
      await text('$ ');
      await type('git status', false);
    },
  },
  {
    name: 'python-input',
    profile: 'shell',
    allow: program('python3', '/usr/bin/python3'),
    args: ['-c', 'name = input("Your name: "); print("hello", name)'],
    label: { state: 'awaiting-input', reason: 'cursor_parked' },
    source: 'python3.11 input("Your name: ") under tmux-drive',
    async run({ text }) {
      await text('Your name: ');
    },
  },
  {
    name: 'python-repl',
    profile: 'shell',
    allow: program('python3', '/usr/bin/python3'),
    args: ['-q'],
    label: { state: 'awaiting-input', reason: 'cursor_parked' },
    source: 'python3.11 -q REPL after `1 + 1`',
    async run({ text, type }) {
      await text('>>> ');
      await type('1 + 1', true);
      await text(/^2$/m);
    },
  },
  shellScenario('read-yn-confirm', 'read -p "Continue with the upgrade? [y/N] " answer', { state: 'awaiting-input', reason: 'dialog_detected', dialogKind: 'confirm' }, 'read -p with a [y/N] choice'),
  shellScenario('read-yn-destructive', 'read -p "Delete 3 files in ./build? [y/N] " answer', { state: 'awaiting-input', reason: 'dialog_detected', dialogKind: 'destructive' }, 'read -p asking to delete files'),
  shellScenario('read-password', 'read -s -p "Password: " secret', { state: 'awaiting-input', reason: 'dialog_detected', dialogKind: 'auth' }, 'read -s -p "Password: "'),
  shellScenario('bash-select-menu', 'PS3="Pick one: "; select mode in start stop status; do break; done', { state: 'awaiting-input', reason: 'dialog_detected', dialogKind: 'menu' }, 'the select builtin (numbered list, prompt under it)'),
  shellScenario('cat-reading', 'cat', { state: 'awaiting-input', reason: 'tty_read' }, '`cat` blocked reading the terminal (no prompt on screen)', { sample: true }),
  shellScenario('busy-cpu-loop', 'while :; do :; done', { state: 'working', reason: 'busy_cpu' }, 'a silent CPU loop (a compile stand-in)', { activityWindowMs: 1500, stuckMs: 1000 }),
  shellScenario(
    'busy-io-loop',
    'while :; do head -c 200000 /dev/zero > /dev/null; sleep 0.2; done',
    { state: 'working', reason: 'busy_io' },
    'a silent loop moving ~1 MB/s through short-lived children (a download stand-in)',
    { activityWindowMs: 2000, stuckMs: 1000 },
  ),
  shellScenario('sleep-forever', 'sleep infinity', { state: 'stuck', reason: 'no_progress' }, '`sleep infinity`: no output, no CPU, no I/O for stuckMs', { activityWindowMs: 3000, stuckMs: 3000 }),
  shellScenario(
    'fifo-blocked',
    'mkfifo /tmp/feed && echo "waiting for the feed..." && cat /tmp/feed',
    { state: 'stuck', reason: 'no_progress' },
    '`cat` blocked opening a FIFO nobody writes: no output, no CPU, no I/O, not reading the terminal',
    { activityWindowMs: 3000, stuckMs: 3000, sample: true },
  ),
  shellScenario(
    'bash-prompt-idle-long',
    'echo ready',
    { state: 'awaiting-input', reason: 'cursor_parked' },
    'a prompt idle for longer than stuckMs: waiting is not stuck',
    { activityWindowMs: 3000, stuckMs: 3000, sample: true },
  ),
  shellScenario('quiet-no-prompt', 'echo "building..."; sleep 600', { state: 'working', reason: 'cursor_not_parked' }, 'output paused mid-job, before stuckMs', {}),
  shellScenario(
    'fake-yn-flowing',
    'while :; do echo "Overwrite all files? (y/n)"; sleep 0.02; done',
    { state: 'working', reason: 'output_flowing' },
    'a loop printing a fake "(y/n)" line every 20 ms',
    { flowing: true },
  ),
  shellScenario(
    'fake-yn-mid-output',
    'echo "Proceed with deployment? (y/n)"; echo "deploying service 1/3"; sleep 600',
    { state: 'working', reason: 'cursor_not_parked' },
    'a fake "(y/n)" printed mid-output, the cursor on the next empty line',
  ),
  shellScenario(
    'fake-yn-then-busy',
    "printf 'Proceed? (y/n) '; while :; do :; done",
    { state: 'working', reason: 'busy_cpu' },
    'a fake "(y/n) " the cursor is parked after, while the program burns CPU and never reads the terminal',
    { activityWindowMs: 1500, stuckMs: 1000 },
  ),
  {
    name: 'bash-exit',
    profile: 'shell',
    allow: bash(),
    args: BASH,
    label: { state: 'exited', reason: 'pane_dead' },
    source: "bash 5.2 under tmux-drive: `exit 3`",
    async run({ s, text, type }) {
      await text('$ ');
      await type('exit 3', true);
      await s.wait({ forExit: true, timeoutMs: 10_000 });
    },
  },
  {
    name: 'vim-normal',
    profile: 'shell',
    allow: program('vim', '/usr/bin/vim'),
    args: ['-u', 'NONE', '-N', '-i', 'NONE', 'notes.txt'],
    label: { state: 'awaiting-input', reason: 'screen_settled' },
    source: 'vim 9.0 -u NONE on a new file (alternate screen, cursor in the text)',
    async run({ text }) {
      await text('"notes.txt"');
    },
  },
  {
    name: 'vim-idle-long',
    profile: 'shell',
    allow: program('vim', '/usr/bin/vim'),
    args: ['-u', 'NONE', '-N', '-i', 'NONE', 'notes.txt'],
    label: { state: 'awaiting-input', reason: 'tty_read' },
    source: 'vim 9.0 -u NONE idle for longer than stuckMs (no CPU, no I/O, in select on the terminal): waiting for keys, not stuck',
    async run({ text }) {
      await text('"notes.txt"');
      return { activityWindowMs: 3000, stuckMs: 3000 };
    },
  },
  {
    name: 'vim-command-line',
    profile: 'shell',
    allow: program('vim', '/usr/bin/vim'),
    args: ['-u', 'NONE', '-N', '-i', 'NONE', 'notes.txt'],
    label: { state: 'awaiting-input', reason: 'cursor_parked' },
    source: 'vim 9.0 -u NONE after typing ":" (the command line)',
    async run({ text, keys }) {
      await text('"notes.txt"');
      await keys(':');
    },
  },
  {
    name: 'less-first-page',
    profile: 'shell',
    allow: program('less', '/usr/bin/less'),
    args: ['/etc/services'],
    label: { state: 'awaiting-input', reason: 'screen_settled' },
    source: 'less 590 on /etc/services, first page (the file name in standout on the last row)',
    async run({ idle }) {
      await idle(500);
    },
  },
  {
    name: 'less-pager',
    profile: 'shell',
    allow: program('less', '/usr/bin/less'),
    args: ['/etc/services'],
    label: { state: 'awaiting-input', reason: 'cursor_parked' },
    source: 'less 590 on /etc/services after one page down (the ":" prompt on the last row)',
    async run({ idle, keys }) {
      await idle(500);
      await keys('Space');
    },
  },
  {
    name: 'htop',
    profile: 'shell',
    allow: program('htop', '/usr/bin/htop'),
    label: { state: 'awaiting-input', reason: 'screen_settled' },
    source: 'htop 3.2 (alternate screen, redraws every 1.5 s; captured between redraws)',
    async run({ idle }) {
      await idle(300, 10_000);
    },
    cols: 100,
    rows: 30,
  },
  {
    name: 'fzf-picker',
    profile: 'shell',
    allow: bash(),
    args: [...BASH, '-c', 'seq -f "item %g" 1 200 | fzf'],
    label: { state: 'awaiting-input', reason: 'dialog_detected', dialogKind: 'select' },
    source: 'fzf 0.38 picking from 200 items',
    async run({ text, idle }) {
      await text('200/200');
      await idle(400);
    },
  },
  {
    name: 'whiptail-yesno-destructive',
    profile: 'shell',
    allow: program('whiptail', '/usr/bin/whiptail'),
    args: ['--title', 'Cleanup', '--yesno', 'Delete all files?', '8', '40'],
    label: { state: 'awaiting-input', reason: 'dialog_detected', dialogKind: 'destructive' },
    source: 'whiptail 0.52 --yesno "Delete all files?"',
    async run({ text, idle }) {
      await text('Delete all files?');
      await idle(300);
    },
  },
  {
    name: 'whiptail-yesno',
    profile: 'shell',
    allow: program('whiptail', '/usr/bin/whiptail'),
    args: ['--title', 'Theme', '--yesno', 'Enable the new colour theme?', '8', '44'],
    label: { state: 'awaiting-input', reason: 'dialog_detected', dialogKind: 'confirm' },
    source: 'whiptail 0.52 --yesno "Enable the new colour theme?"',
    async run({ text, idle }) {
      await text('colour theme');
      await idle(300);
    },
  },
  {
    name: 'whiptail-menu',
    profile: 'shell',
    allow: program('whiptail', '/usr/bin/whiptail'),
    args: ['--title', 'Setup', '--menu', 'Choose an install mode:', '14', '50', '4', 'fast', 'Fast install', 'safe', 'Safe install', 'custom', 'Custom install'],
    label: { state: 'awaiting-input', reason: 'dialog_detected', dialogKind: 'select' },
    source: 'whiptail 0.52 --menu with three items',
    async run({ text, idle }) {
      await text('Custom install');
      await idle(300);
    },
  },
];

// ---- the scenarios: AI CLIs, offline -------------------------------------------------------------

/**
 * Types a message, then presses Enter as its own key until `reacted` shows (at most 3 times): an
 * Enter that follows typed text too closely is taken as part of a paste by Ink composers
 * (field notes §2 theme 1), so the message would sit in the composer.
 */
async function submitUntil(ctx: Ctx, message: string, reacted: string): Promise<void> {
  await ctx.type(message, false);
  for (let attempt = 1; ; attempt++) {
    await ctx.pause(500);
    await ctx.keys('Enter');
    try {
      await ctx.text(reacted, 20_000);
      return;
    } catch (err) {
      if (attempt >= 3) throw err;
    }
  }
}

function aiScenarios(aiDir: string): Scenario[] {
  const bin = (name: string): string => join(aiDir, 'node_modules', '.bin', name);
  const cli = (id: string, name: string, env: Record<string, string> = {}): AllowInput => program(id, bin(name), { env: { COLORTERM: '', ...env } });
  const gemini = (env: Record<string, string> = {}): AllowInput => cli('gemini', 'gemini', env);
  const codex = (env: Record<string, string> = {}): AllowInput => cli('codex', 'codex', env);
  const geminiToComposer = async ({ text, keys, pause }: Ctx): Promise<void> => {
    await text('Do you trust the files in this folder?', 30_000);
    await pause(READY_MS);
    await keys('Enter');
    await text('How would you like to authenticate', 30_000);
    await text('Gemini API Key');
    await pause(READY_MS);
    await keys('2');
    await text('Enter Gemini API Key', 30_000).catch(() => undefined);
    await pause(READY_MS);
    await keys('Enter');
    await text('Type your message', 30_000);
  };
  const codexToComposer = async ({ text, keys, pause }: Ctx): Promise<void> => {
    await text('Sign in with ChatGPT', 30_000);
    await pause(READY_MS);
    await keys('3');
    await text('Use an OpenAI API key', 10_000);
    await pause(READY_MS);
    await keys('Enter');
    await text('Press enter to save', 10_000);
    await pause(READY_MS);
    await keys('Enter');
    await text('Ask Codex to do anything', 30_000);
  };
  return [
    {
      name: 'codex-sign-in',
      profile: 'codex',
      allow: codex(),
      label: { state: 'awaiting-input', reason: 'dialog_detected', dialogKind: 'auth' },
      source: '@openai/codex 0.171.0, scratch HOME, no network: the first-run sign-in menu',
      async run({ text, idle }) {
        await text('Sign in with ChatGPT', 30_000);
        await idle(500);
      },
    },
    {
      name: 'codex-composer',
      profile: 'codex',
      allow: codex({ OPENAI_API_KEY: 'sk-fixture-not-a-key' }),
      label: { state: 'awaiting-input', reason: 'composer_ready', suggestion: 'Ask Codex to do anything' },
      source: '@openai/codex 0.171.0 after "use an API key" (a dummy key): the empty composer and its dim placeholder',
      async run(ctx) {
        await codexToComposer(ctx);
        await ctx.idle(800);
      },
    },
    {
      name: 'codex-reconnecting',
      profile: 'codex',
      allow: codex({ OPENAI_API_KEY: 'sk-fixture-not-a-key' }),
      label: { state: 'working', reason: 'output_flowing' },
      source: '@openai/codex 0.171.0 mid-turn without network: "Reconnecting… (Ns • esc to interrupt)", animating',
      async run(ctx) {
        await codexToComposer(ctx);
        await submitUntil(ctx, 'hello', 'esc to interrupt');
        return { flowing: true };
      },
    },
    {
      name: 'codex-reconnecting-between-frames',
      profile: 'codex',
      allow: codex({ OPENAI_API_KEY: 'sk-fixture-not-a-key' }),
      label: { state: 'working', reason: 'working_marker' },
      source: '@openai/codex 0.171.0 mid-turn without network: a real frame, its timing set to a 300 ms pause between animation frames',
      async run(ctx) {
        await codexToComposer(ctx);
        await submitUntil(ctx, 'hello', 'esc to interrupt');
        return { flowing: true, pretendQuietMs: 300 };
      },
    },
    {
      name: 'gemini-trust',
      profile: 'gemini',
      allow: gemini(),
      label: { state: 'awaiting-input', reason: 'dialog_detected', dialogKind: 'trust' },
      source: '@google/gemini-cli 0.61, scratch HOME, no network: "Do you trust the files in this folder?"',
      async run({ text, idle }) {
        await text('Do you trust the files in this folder?', 30_000);
        await idle(500);
      },
    },
    {
      name: 'gemini-auth-menu',
      profile: 'gemini',
      allow: gemini(),
      label: { state: 'awaiting-input', reason: 'dialog_detected', dialogKind: 'auth' },
      source: '@google/gemini-cli 0.61 after trusting the folder: "How would you like to authenticate"',
      async run({ text, keys, idle }) {
        await text('Do you trust the files in this folder?', 30_000);
        await keys('Enter');
        await text('How would you like to authenticate', 30_000);
        await idle(500);
      },
    },
    {
      name: 'gemini-composer',
      profile: 'gemini',
      allow: gemini({ GEMINI_API_KEY: 'fixture-not-a-key' }),
      label: { state: 'awaiting-input', reason: 'composer_ready', suggestion: 'Type your message or @path/to/file' },
      source: '@google/gemini-cli 0.61 with a dummy API key: the empty composer and its grey placeholder',
      async run(ctx) {
        await geminiToComposer(ctx);
        await ctx.idle(800);
      },
    },
    {
      name: 'gemini-thinking',
      profile: 'gemini',
      allow: gemini({ GEMINI_API_KEY: 'fixture-not-a-key' }),
      label: { state: 'working', reason: 'output_flowing' },
      source: '@google/gemini-cli 0.61 mid-turn without network: the spinner redrawing "Thinking... (esc to cancel, Ns)"',
      async run(ctx) {
        await geminiToComposer(ctx);
        await submitUntil(ctx, 'hello there', 'esc to cancel');
        return { flowing: true };
      },
    },
    {
      name: 'gemini-thinking-between-frames',
      profile: 'gemini',
      allow: gemini({ GEMINI_API_KEY: 'fixture-not-a-key' }),
      label: { state: 'working', reason: 'working_marker' },
      source: '@google/gemini-cli 0.61 mid-turn: a real frame, its timing set to a 300 ms pause between spinner frames',
      async run(ctx) {
        await geminiToComposer(ctx);
        await submitUntil(ctx, 'hello there', 'esc to cancel');
        return { flowing: true, pretendQuietMs: 300 };
      },
    },
    {
      name: 'gemini-queued',
      profile: 'gemini',
      allow: gemini({ GEMINI_API_KEY: 'fixture-not-a-key' }),
      label: { state: 'working', reason: 'input_queued' },
      source: '@google/gemini-cli 0.61 mid-turn with a second message queued: a real frame, its timing set to a 300 ms pause',
      async run(ctx) {
        await geminiToComposer(ctx);
        await submitUntil(ctx, 'hello there', 'esc to cancel');
        await submitUntil(ctx, 'second message', 'Queued');
        return { flowing: true, pretendQuietMs: 300 };
      },
    },
    {
      name: 'opencode-composer',
      profile: 'opencode',
      allow: cli('opencode', 'opencode'),
      cols: 100,
      rows: 30,
      label: { state: 'awaiting-input', reason: 'composer_ready', suggestion: 'Ask anything… "' },
      source: 'opencode-ai 1.18, scratch HOME, no network: the TUI with its empty composer and grey placeholder (the example in quotes rotates)',
      async run({ text, idle }) {
        await text('Ask anything', 60_000);
        await idle(1000, 30_000);
      },
    },
    {
      name: 'claude-code-exit',
      profile: 'claude-code',
      allow: cli('claude', 'claude'),
      label: { state: 'exited', reason: 'pane_dead' },
      source: '@anthropic-ai/claude-code 2.1.197 on Node 20, scratch HOME, no network: banner, cannot reach its service, exits 1',
      async run({ s }) {
        await s.wait({ forExit: true, timeoutMs: 60_000 });
      },
    },
  ];
}

// ---- the scenarios: synthetic -----------------------------------------------------------------

const DIM = '\x1b[2m';
const INV = '\x1b[7m';
const R = '\x1b[0m';
const HIDE = '\x1b[?25l';
const RULE = '─'.repeat(78);

/** Claude Code's bottom: status row, rules around the composer, the hint row. Cursor drawn, hidden. */
function claudeBottom(status: string, composer: string): string {
  return `${status}\n${DIM}${RULE}${R}\n${composer}\n${DIM}${RULE}${R}\n  ${DIM}? for shortcuts${R}`;
}

const CLAUDE_TRANSCRIPT = `${HIDE}\x1b[38;5;174m✻${R} Welcome to Claude Code!\n\n> add a test for the parser\n\n● I'll add a test for the parser.\n\n● Update(test/parser.test.ts)\n  ⎿  Updated test/parser.test.ts with 12 additions\n\n`;

const SYNTHETIC: SyntheticScenario[] = [
  {
    name: 'claude-code-ghost-suggestion',
    profile: 'claude-code',
    label: { state: 'awaiting-input', reason: 'composer_ready', suggestion: 'Yes, go ahead and commit' },
    source: 'synthetic: Claude Code 2.x idle composer showing a dim prompt suggestion (SGR 2, drawn inverse cursor), as in anthropics/claude-code #81380',
    ansi: CLAUDE_TRANSCRIPT + claudeBottom('', `> ${INV}Y${R}${DIM}es, go ahead and commit${R}`),
  },
  {
    name: 'claude-code-thinking',
    profile: 'claude-code',
    label: { state: 'working', reason: 'working_marker' },
    source: 'synthetic: Claude Code 2.x mid-turn, spinner row "✶ Pondering… (12s · esc to interrupt)" above the composer',
    ansi: CLAUDE_TRANSCRIPT + claudeBottom(`\x1b[38;5;174m✶${R} Pondering… (12s · ↓ 1.2k tokens · esc to interrupt)\n`, `> ${INV} ${R}`),
  },
  {
    name: 'claude-code-queued',
    profile: 'claude-code',
    label: { state: 'working', reason: 'input_queued' },
    source: 'synthetic: Claude Code 2.x mid-turn with a message queued ("Press up to edit queued messages")',
    ansi: CLAUDE_TRANSCRIPT + `> also update the changelog\n\n` + claudeBottom(`\x1b[38;5;174m✻${R} Pondering… (3s · esc to interrupt)\n  ${DIM}Press up to edit queued messages${R}`, `> ${INV} ${R}`),
  },
  {
    name: 'claude-code-permission-destructive',
    profile: 'claude-code',
    label: { state: 'awaiting-input', reason: 'dialog_detected', dialogKind: 'destructive' },
    source: 'synthetic: Claude Code 2.x Bash permission dialog for `rm -rf build` (numbered options, ❯ pointer, no composer)',
    ansi: `${CLAUDE_TRANSCRIPT}${DIM}${RULE}${R}\n Bash command\n\n   rm -rf build\n   Remove the build directory\n\n Do you want to proceed?\n \x1b[38;5;153m❯ 1. Yes${R}\n   2. Yes, and don't ask again for rm commands in this project\n   3. No, and tell Claude what to do differently (esc)\n`,
  },
  {
    name: 'claude-code-permission-edit',
    profile: 'claude-code',
    label: { state: 'awaiting-input', reason: 'dialog_detected', dialogKind: 'approval' },
    source: 'synthetic: Claude Code 2.x edit permission dialog ("Do you want to make this edit to parser.ts?")',
    ansi: `${CLAUDE_TRANSCRIPT}${DIM}${RULE}${R}\n Edit file\n  src/parser.ts\n\n Do you want to make this edit to parser.ts?\n \x1b[38;5;153m❯ 1. Yes${R}\n   2. Yes, allow all edits during this session (shift+tab)\n   3. No, and tell Claude what to do differently (esc)\n`,
  },
  {
    name: 'claude-code-printed-fake-dialog',
    profile: 'claude-code',
    label: { state: 'awaiting-input', reason: 'composer_ready' },
    source: 'synthetic: Claude Code 2.x whose reply prints a fake permission menu and "(y/n)"; the composer below is what waits',
    ansi: `${HIDE}● Here is what the installer will ask:\n\n  Do you want to proceed? (y/n)\n  ❯ 1. Yes\n    2. No\n\n` + claudeBottom('', `> ${INV} ${R}`),
  },
  {
    name: 'codex-command-approval',
    profile: 'codex',
    label: { state: 'awaiting-input', reason: 'dialog_detected', dialogKind: 'approval' },
    source: 'synthetic: Codex CLI command approval ("Would you like to run the following command?", › pointer)',
    ansi: `\x1b[?1049h\x1b[H${HIDE}\n  Would you like to run the following command?\n\n  $ npm test\n\n› 1. Yes, proceed (y)\n  2. Yes, and don't ask again for this command (a)\n  3. No, and tell Codex what to do differently (esc)\n\n  Press enter to confirm or esc to cancel`,
  },
  {
    name: 'aider-prompt',
    profile: 'aider',
    label: { state: 'awaiting-input', reason: 'cursor_parked' },
    source: 'synthetic: aider waiting at its "> " prompt after a reply',
    ansi: 'Aider v0.86.1\nMain model: gpt-4o with diff edit format\nGit repo: .git with 12 files\n\nTokens: 2.1k sent, 310 received.\n\n> ',
  },
  {
    name: 'aider-confirm',
    profile: 'aider',
    label: { state: 'awaiting-input', reason: 'dialog_detected', dialogKind: 'confirm' },
    source: 'synthetic: aider asking "Add file to the chat? (Y)es/(N)o/(D)on\'t ask again [Yes]:"',
    ansi: "> fix the bug in app.py\n\nAdd app.py to the chat? (Y)es/(N)o/(D)on't ask again [Yes]: ",
  },
  {
    name: 'aider-run-shell',
    profile: 'aider',
    label: { state: 'awaiting-input', reason: 'dialog_detected', dialogKind: 'approval' },
    source: 'synthetic: aider asking "Run shell command? (Y)es/(N)o [Yes]:"',
    ansi: 'pytest -q\n\nRun shell command? (Y)es/(N)o/(D)on\'t ask again [Yes]: ',
  },
  {
    name: 'aider-waiting',
    profile: 'aider',
    label: { state: 'working', reason: 'working_marker' },
    source: 'synthetic: aider waiting for the model (a "Waiting for gpt-4o" line, paused between spinner frames)',
    ansi: '> explain the parser\n\n░█        Waiting for gpt-4o',
  },
  {
    name: 'shell-autosuggestion',
    profile: 'shell',
    label: { state: 'awaiting-input', reason: 'cursor_parked', suggestion: 'atus --short' },
    source: 'synthetic: a zsh/fish-style dim autosuggestion after typed text at a "$ " prompt',
    ansi: `$ ls\nREADME.md  src\n$ git st${DIM}atus --short${R}\x1b[12D`,
  },
];

// ---- capture ------------------------------------------------------------------------------------

async function recordReal(driver: Driver, dataDir: string, sc: Scenario): Promise<FixtureFile> {
  const t0 = performance.now();
  const rel = (): number => Math.round(performance.now() - t0);
  const s = await driver.create({ allowId: sc.allow.id, name: sc.name, project: sc.name, cols: sc.cols ?? 80, rows: sc.rows ?? 24, ...(sc.args ? { args: [...sc.args] } : {}) });
  let lastOutputAt = 0;
  s.on('output', () => {
    lastOutputAt = rel();
  });
  try {
    const ctx: Ctx = {
      s,
      async text(pattern, timeoutMs = 15_000) {
        const r = await s.wait({ forText: pattern, timeoutMs });
        if (r.outcome !== 'text') throw new Error(`${sc.name}: waited ${timeoutMs} ms for ${String(pattern)}, got ${r.outcome}; screen:\n${s.read().content}`);
      },
      async idle(ms, timeoutMs = 15_000) {
        await s.wait({ forIdleMs: ms, timeoutMs });
      },
      async type(text, submit = false) {
        await s.sendText(text, { submit });
      },
      async keys(...keys) {
        await s.sendKeys(keys);
      },
      pause: sleep,
    };
    const frame = (await sc.run(ctx)) ?? {};
    const socket = join(dataDir, 'tmux', `${sc.name}.sock`);
    let activity: ScreenSignals['activity'];
    let sample: ProcessActivitySample | undefined;
    if (frame.flowing) {
      // Output is arriving: capture right after the next chunk.
      await new Promise<void>((resolve) => {
        const d = s.on('output', () => {
          d.dispose();
          resolve();
        });
      });
    } else if (s.exit === undefined) {
      await ctx.idle(frame.settleMs ?? 400);
    }
    if (frame.activityWindowMs !== undefined) {
      const root = paneRoot(socket);
      if (root === undefined) throw new Error(`${sc.name}: the pane's pid was not found`);
      const a = sampleProcessActivity(root, rel());
      await sleep(frame.activityWindowMs);
      const b = sampleProcessActivity(root, rel());
      activity = compareActivity(a, b);
    }
    if (frame.sample) {
      const root = paneRoot(socket);
      if (root === undefined) throw new Error(`${sc.name}: the pane's pid was not found`);
      sample = sampleProcessActivity(root, rel());
    }
    // The reads show the screen as of now: no output is parsed between them (one thread).
    const now = rel();
    // The ANSI read is the whole screen untransformed (the default text read is a digest with the
    // profile's ghost text stripped): its replay gives the lines and the cells the classifier reads.
    const ansi = s.read({ format: 'ansi' });
    const replay = replayCells(ansi.content, ansi.cols, ansi.rows);
    const lines = [...replay.lines];
    const exit = s.exit;
    const pretend = frame.pretendQuietMs;
    const signals: ScreenSignals = {
      now,
      lastOutputAt: pretend !== undefined ? now - pretend : lastOutputAt,
      lastChangeAt: pretend !== undefined ? now - pretend : lastOutputAt,
      interactions: s.status().interactions,
      ...(exit ? { exit } : {}),
      ...(activity ? { activity } : {}),
      ...(sample ? { sample } : {}),
      ...(frame.stuckMs !== undefined ? { stuckMs: frame.stuckMs } : {}),
    };
    return {
      label: sc.label,
      synthetic: pretend !== undefined,
      source: sc.source,
      profile: sc.profile,
      snapshot: { cols: ansi.cols, rows: ansi.rows, cursor: ansi.cursor, alternate: ansi.alternate, lines },
      cells: encodeCells(perceivedCells(replay.cells)),
      signals,
      ...(sc.notes ? { notes: sc.notes } : {}),
    };
  } finally {
    await s.kill().catch(() => undefined);
  }
}

function recordSynthetic(sc: SyntheticScenario): FixtureFile {
  const cols = sc.cols ?? 80;
  const rows = sc.rows ?? 24;
  const grid = replayCells(sc.ansi.replace(/\r?\n/g, '\r\n'), cols, rows);
  const signals: ScreenSignals = { now: 10_000, lastOutputAt: 9_000, lastChangeAt: 9_000, interactions: 1, ...sc.signals };
  return {
    label: sc.label,
    synthetic: true,
    source: sc.source,
    profile: sc.profile,
    snapshot: { cols, rows, cursor: grid.cursor, alternate: grid.alternate, lines: [...grid.lines] },
    cells: encodeCells(perceivedCells(grid.cells)),
    signals,
  };
}

// ---- main ---------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      only: { type: 'string' },
      'ai-dir': { type: 'string' },
      'skip-ai': { type: 'boolean', default: false },
      list: { type: 'boolean', default: false },
    },
  });
  const root = packageRoot();
  const outDir = join(root, 'test', 'fixtures', 'screens');
  const aiDir = values['ai-dir'] ?? process.env.TMUX_DRIVE_AI_DIR ?? '/var/tmp/aicli';
  const only = values.only ? new Set(values.only.split(',')) : undefined;
  const wanted = (name: string): boolean => only === undefined || only.has(name);
  const real = [...REAL, ...(values['skip-ai'] ? [] : aiScenarios(aiDir))];
  if (values.list) {
    for (const sc of real) console.log(`${sc.name}\treal\t${sc.profile}`);
    for (const sc of SYNTHETIC) console.log(`${sc.name}\tsynthetic\t${sc.profile}`);
    return;
  }
  mkdirSync(outDir, { recursive: true });
  const profiles = loadProfileFiles();
  const write = (name: string, f: FixtureFile): void => {
    writeFileSync(join(outDir, `${name}.json`), `${JSON.stringify(f)}\n`);
    const v = classifyScreen(fixtureSnapshot(f), f.signals, profiles.get(f.profile));
    const ok = v.state === f.label.state && v.reason === f.label.reason;
    console.log(`${ok ? '✓' : '✗'} ${name}: label ${f.label.state}/${f.label.reason}, classified ${v.state}/${v.reason}${v.dialog ? ` (${v.dialog.kind})` : ''}`);
  };

  for (const sc of SYNTHETIC) if (wanted(sc.name)) write(sc.name, recordSynthetic(sc));

  const dataDir = mkdtempSync(join(tmpdir(), 'td-rec-'));
  const available = real.filter((sc) => {
    if (!wanted(sc.name)) return false;
    try {
      realpathSync(sc.allow.match.path);
      return true;
    } catch {
      console.warn(`- ${sc.name}: skipped, ${sc.allow.match.path} is not installed`);
      return false;
    }
  });
  // One driver (and data dir) per scenario: each gets its own allow entry, workspace and HOME.
  for (const sc of available) {
    const driver = await Driver.open({ dataDir: join(dataDir, sc.name), config: { allow: [sc.allow], worker: { maxSessions: 2 } } });
    try {
      write(sc.name, await recordReal(driver, join(dataDir, sc.name), sc));
    } catch (err) {
      console.error(`✗ ${sc.name}: not recorded: ${(err as Error).message}`);
      process.exitCode = 1;
    } finally {
      await driver.close().catch(() => undefined);
    }
  }
  rmSync(dataDir, { recursive: true, force: true });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
