/**
 * The scripted drives: what a user meets in each AI CLI offline (first run, trust, sign-in,
 * loading, composer, typed, queued, working, retrying, error, stale dialogs, menus, exit) and in
 * ordinary programs. Each step labels the screen as a person would, by what the program is
 * doing: a spinner or "Working" is working even with a composer drawn; a blank screen at startup
 * is working; a queued message is working; an answered dialog still drawn is not live.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RecordedLabel } from '../fixture-format.js';
import { installedVersion } from './capture.js';
import type { AllowInput, RecordCtx, RecordingScript } from './cli-session.js';

const CONSENT = { acknowledgedRisk: true as const, acknowledgedAt: '2026-12-01T00:00:00Z' };
/**
 * Codex and Gemini paint a screen, go quiet, and only then attach their key handlers: a key sent
 * 300 ms after the screen settled was dropped by codex 0.171. These steps wait this long.
 */
const READY_MS = 1500;

// ---- labels, as a person gives them ------------------------------------------------------------

const working = (situation: RecordedLabel['situation'], why: string, more: Partial<RecordedLabel> = {}): RecordedLabel => ({ state: 'working', situation, why, ...more });
const awaiting = (situation: RecordedLabel['situation'], why: string, more: Partial<RecordedLabel> = {}): RecordedLabel => ({ state: 'awaiting-input', situation, why, ...more });
const liveDialog = (situation: RecordedLabel['situation'], why: string, kind: NonNullable<RecordedLabel['dialogKind']> | undefined, safeOnly: 'answer' | 'escalate'): RecordedLabel =>
  awaiting(situation, why, { dialog: 'live', ...(kind ? { dialogKind: kind } : {}), safeOnly, reasons: ['dialog_detected'] });
const composer = (why: string, situation: RecordedLabel['situation'] = 'composer'): RecordedLabel => awaiting(situation, why, { reasons: ['composer_ready'] });
const exited = (why: string): RecordedLabel => ({ state: 'exited', situation: 'exit', why, reasons: ['pane_dead'] });

function cliAllow(aiDir: string, id: string, bin: string, env: Record<string, string> = {}): AllowInput {
  // COLORTERM unset: the CLIs pick 256 colours, as most terminals a drive is attached to.
  return { id, match: { path: join(aiDir, 'node_modules', '.bin', bin) }, consent: CONSENT, env: { COLORTERM: '', ...env } };
}

function writeJson(path: string, value: unknown): void {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
}

/** A git repository in the working directory (codex asks to trust only a repository). */
function gitInit(work: string): void {
  execFileSync('git', ['init', '-q', work], { stdio: 'ignore' });
}

/**
 * Esc until the turn's marker is gone: a message queued during the turn starts its own turn as
 * soon as the first one is interrupted (gemini, Claude Code); that turn is labelled and framed.
 */
async function interrupt(c: RecordCtx, marker: string, frame: string): Promise<void> {
  await c.keys('Escape');
  for (let round = 0; round < 4; round++) {
    await c.pause(1500);
    if (!c.s.read({ mode: 'full' }).content.includes(marker)) return;
    if (round === 0) {
      c.label(working('working', 'the queued message started its own turn once the first was interrupted'));
      await c.frame(frame, 'between');
    }
    await c.keys('Escape');
  }
  await c.gone(marker, 15_000);
}

/**
 * Submits a quit command (typed here unless empty: already typed) and waits for the exit. A
 * completion popup may take the first Enter: a second one follows when nothing exited.
 */
async function quit(c: RecordCtx, command: string): Promise<void> {
  if (command) {
    await c.type(command);
    await c.pause(800);
  }
  await c.keys('Enter');
  c.label(working('exit', `${command || 'the quit command'} submitted: the program shuts down`));
  try {
    await c.exit(5000);
  } catch {
    await c.keys('Enter');
    await c.exit(20_000);
  }
}

// ---- codex --------------------------------------------------------------------------------------

const OPENAI_KEY = 'sk-fixture-not-a-key';

function codexScripts(aiDir: string): RecordingScript[] {
  const version = { name: '@openai/codex', version: installedVersion(aiDir, '@openai/codex') ?? 'unknown' };
  const base = { program: 'codex', version, profile: 'codex' } as const;
  return [
    {
      ...base,
      name: 'codex-first-run',
      allow: cliAllow(aiDir, 'codex', 'codex'),
      seed: () => 'nothing: no ~/.codex, no key in the environment',
      async run(c) {
        c.label(working('loading', 'blank alternate screen while codex starts (nothing to answer yet)'));
        await c.pause(1500);
        await c.frame('first-run-loading', 'now');
        await c.pause(1500);
        await c.frame('first-run-loading-settled', 'settled');
        await c.text('Sign in with ChatGPT', 60_000);
        c.label(liveDialog('auth', 'first-run sign-in menu: "Sign in with ChatGPT / Device Code / another way"', 'auth', 'escalate'));
        await c.frame('sign-in');
        await c.pause(READY_MS);
        await c.keys('Down');
        await c.pause(300);
        await c.frame('sign-in-second-option');
        await c.keys('3');
        c.label(working('loading', 'dialog answered: the program goes on to its next step'));
        await c.text('Use an OpenAI API key', 10_000);
        c.label(liveDialog('auth', 'sign-in submenu: "Use an OpenAI API key / Amazon Bedrock"', 'auth', 'escalate'));
        await c.frame('sign-in-another-way');
        await c.pause(READY_MS);
        await c.keys('Enter');
        c.label(working('loading', 'dialog answered: the program goes on to its next step'));
        await c.text('Press enter to save', 10_000);
        c.label(liveDialog('auth', 'API-key entry box, empty ("Paste or type your API key")', 'auth', 'escalate'));
        await c.frame('api-key-entry');
        await c.pause(READY_MS);
        await c.type(OPENAI_KEY);
        await c.pause(300);
        c.label(liveDialog('auth', 'API-key entry box with a key typed, not yet saved', 'auth', 'escalate'));
        await c.frame('api-key-typed');
        await c.pause(READY_MS);
        await c.keys('Enter');
        c.label(working('loading', 'key saved; codex starts its session (screen repainting)'));
        await c.text('for agents', 60_000);
        c.label(composer('the empty composer after sign-in, ready ("← for agents · ? for shortcuts")'));
        await c.frame('composer-after-sign-in');
        await c.idle(1000, 10_000);
        await c.keys('C-c');
        await c.pause(300);
        await c.keys('C-c');
        c.label(working('exit', 'Ctrl-C twice: codex shuts down'));
        await c.exit(15_000);
        c.label(exited('codex exited after Ctrl-C twice'));
        await c.frame('exited');
      },
    },
    {
      ...base,
      name: 'codex-startup',
      allow: cliAllow(aiDir, 'codex', 'codex', { OPENAI_API_KEY: OPENAI_KEY }),
      seed(home) {
        writeJson(join(home, '.codex', 'auth.json'), { auth_mode: 'apikey', OPENAI_API_KEY: OPENAI_KEY });
        writeFileSync(join(home, '.codex', 'config.toml'), '[tui]\nscreen_reader_detection_done = true\n');
        return '~/.codex/auth.json with an API key (auth_mode apikey), OPENAI_API_KEY set; ~/work is not a repository';
      },
      async run(c) {
        c.label(working('loading', 'codex starting: a blank screen, then its logo'));
        await c.pause(300);
        await c.frame('startup-early', 'now');
        await c.text('Ask Codex to do anything', 60_000);
        c.label(working('loading', 'the composer is drawn but codex is still starting: keys typed now show only seconds later'));
        await c.frame('startup-composer-drawn');
        await c.type('hello');
        await c.text('› hello', 60_000);
        c.label(awaiting('typed', 'the composer took "hello" (codex still starting, no model line yet); not submitted', { reasons: ['composer_ready'] }));
        await c.frame('startup-typed');
        await c.pause(1000);
        await c.keys('Enter');
        c.label(working('working', 'message submitted: the turn starts'));
        const held = /Waiting for startup|Working|Reconnecting/;
        if (!(await c.text(held, 5000).then(() => true, () => false))) {
          // codex dropped the Enter (it does so while busy starting): press it again.
          await c.keys('Enter');
          await c.text(held, 10_000);
        }
        if (c.s.read({ mode: 'full' }).content.includes('Waiting for startup')) {
          c.label(working('queued', 'the message is held: "Waiting for startup · esc cancel" under "› hello"', { reasons: ['input_queued'] }));
          await c.frame('waiting-for-startup', 'now');
          await c.frame('waiting-for-startup-settled', 'settled');
        } else c.note('codex had started before the message was submitted: no "Waiting for startup"');
        await c.text(/Working|Reconnecting/, 90_000);
        c.label(working('working', 'the turn runs: "Working (Ns • esc to interrupt)" with the composer drawn below'));
        await c.frame('working-flowing', 'flowing');
        await c.frame('working-between', 'between');
        await c.type('and then?');
        await c.pause(300);
        c.label(working('typed', 'a follow-up typed into the composer while the turn still runs'));
        await c.frame('typed-while-working', 'between');
        // Tab queues the follow-up for the end of the turn (Enter would steer the running turn).
        await c.keys('Tab');
        if (await c.text('Queued', 10_000).then(() => true, () => false)) {
          c.label(working('queued', 'the follow-up is queued ("Queued follow-up inputs") while the turn runs', { reasons: ['input_queued', 'output_flowing'] }));
          await c.frame('queued-follow-up', 'between');
        } else c.label(working('working', 'the follow-up went into the running turn'));
        await c.text('Reconnecting', 60_000);
        c.label(working('retrying', 'the API is unreachable: "Reconnecting... n/5 (Ns • esc to interrupt)"'));
        await c.frame('reconnecting-flowing', 'flowing');
        await c.frame('reconnecting-between', 'between');
        await c.type('/');
        await c.pause(600);
        c.label(working('slash-menu', 'the slash-command popup open while the turn still reconnects'));
        await c.frame('slash-menu-while-working', 'between');
        await c.keys('BSpace');
        await c.pause(600);
        c.label(working('retrying', 'popup closed; still reconnecting'));
        await c.keys('Escape');
        await c.gone('esc to interrupt', 15_000);
        c.label(composer('turn interrupted with Esc; the composer waits again'));
        await c.frame('composer-after-interrupt');
        await c.optional('slash popup and /model', async () => {
          // The interrupted turn's queued follow-up is back in the composer: clear it first.
          await c.keys(...Array<string>(16).fill('BSpace'));
          await c.pause(300);
          await c.type('/');
          await c.pause(600);
          c.label(awaiting('slash-menu', 'the slash-command popup on an idle composer'));
          await c.frame('slash-popup-idle');
          await c.type('model');
          await c.pause(400);
          await c.keys('Enter');
          await c.text('Select Model', 10_000);
          c.label(awaiting('menu', 'the /model picker (models and reasoning effort)', { dialog: 'live', safeOnly: 'escalate' }));
          await c.frame('model-picker');
          await c.keys('Escape');
          await c.pause(600);
          c.label(composer('picker closed; the composer waits'));
        });
        await c.keys('C-c');
        await c.pause(300);
        await c.keys('C-c');
        c.label(working('exit', 'Ctrl-C twice: codex shuts down'));
        await c.exit(15_000);
        c.label(exited('codex exited'));
        await c.frame('startup-exited');
      },
    },
    {
      ...base,
      name: 'codex-trust',
      allow: cliAllow(aiDir, 'codex', 'codex', { OPENAI_API_KEY: OPENAI_KEY }),
      seed(home, work) {
        writeJson(join(home, '.codex', 'auth.json'), { auth_mode: 'apikey', OPENAI_API_KEY: OPENAI_KEY });
        writeFileSync(join(home, '.codex', 'config.toml'), '[tui]\nscreen_reader_detection_done = true\n');
        gitInit(work);
        return '~/.codex/auth.json with an API key, OPENAI_API_KEY set, ~/work a fresh git repository';
      },
      async run(c) {
        c.label(working('loading', 'blank alternate screen while codex starts'));
        await c.text('Ask Codex to do anything', 60_000);
        c.label(working('loading', 'the composer is drawn but codex is still starting (keys not taken yet)'));
        await c.frame('trust-startup-composer-drawn', 'now');
        await c.text('Trust this folder', 90_000);
        c.label(liveDialog('trust', 'codex asks to trust the repository: "1. Trust and continue / 2. Back"', 'trust', 'escalate'));
        await c.frame('trust-directory');
        await c.pause(READY_MS);
        await c.keys('Down');
        await c.pause(400);
        await c.frame('trust-directory-second-option');
        await c.keys('Up');
        await c.pause(READY_MS);
        await c.keys('Enter');
        c.label(working('loading', 'trust answered; codex finishes starting'));
        await c.pause(500);
        await c.frame('after-trust-loading', 'now');
        await c.text('for agents', 60_000);
        c.label(composer('the composer, ready ("← for agents · ? for shortcuts")'));
        await c.frame('composer-after-trust');
        await c.type('explain this repository');
        await c.pause(400);
        c.label(awaiting('typed', 'a message typed, not submitted', { reasons: ['composer_ready'] }));
        await c.frame('typed-not-submitted');
        await c.pause(800);
        await c.keys('Enter');
        c.label(working('working', 'message submitted: the turn starts'));
        await c.text(/Working|Reconnecting/, 30_000);
        c.label(working('working', 'the turn runs in the trusted repository: "Working (Ns • esc to interrupt)"'));
        await c.frame('trust-turn-working', 'flowing');
        await c.frame('trust-turn-working-between', 'between');
        await c.keys('Escape');
        await c.gone('esc to interrupt', 15_000);
        c.label(composer('turn interrupted with Esc; the composer waits'));
        await c.frame('trust-composer-after-interrupt');
      },
    },
  ];
}

// ---- gemini ------------------------------------------------------------------------------------

const GEMINI_KEY = 'fixture-not-a-key';

function geminiScripts(aiDir: string): RecordingScript[] {
  const version = { name: '@google/gemini-cli', version: installedVersion(aiDir, '@google/gemini-cli') ?? 'unknown' };
  const base = { program: 'gemini', version, profile: 'gemini' } as const;
  return [
    {
      ...base,
      name: 'gemini-first-run',
      allow: cliAllow(aiDir, 'gemini', 'gemini', { GEMINI_API_KEY: GEMINI_KEY }),
      seed: () => 'nothing: no ~/.gemini; GEMINI_API_KEY set in the environment',
      async run(c) {
        c.label(working('loading', 'gemini starting on the main screen (banner, "Waiting for authentication…" spinner)'));
        await c.pause(1000);
        await c.frame('first-run-loading', 'now');
        await c.text('Do you trust the files in this folder?', 60_000);
        c.label(liveDialog('trust', 'first-run trust box: "1. Trust folder / 2. Trust parent folder / 3. Don\'t trust"', 'trust', 'escalate'));
        await c.frame('trust-folder');
        await c.pause(READY_MS);
        await c.keys('Down');
        await c.pause(400);
        await c.frame('trust-folder-second-option');
        await c.keys('Up');
        await c.pause(READY_MS);
        await c.keys('Enter');
        // Labelled once the screen shows what the label describes (the answered box with
        // "restarting…" under it), not at the key: until then the live box is still drawn.
        await c.text('restarting', 15_000);
        c.label(working('stale-dialog', 'the trust box is answered but still drawn, "Gemini CLI is restarting to apply the trust changes…" under it', { dialog: 'stale' }));
        await c.frame('trust-restarting', 'now');
        await c.frame('trust-restarting-settled', 'settled');
        await c.pause(1200);
        await c.frame('trust-restarting-later', 'settled');
        await c.gone('restarting', 30_000);
        c.label(working('loading', 'gemini relaunched after the trust change, starting again'));
        await c.text('How would you like to authenticate', 60_000);
        c.label(liveDialog('auth', 'auth menu: "1. Sign in with Google / 2. Use Gemini API Key / 3. Vertex AI"', 'auth', 'escalate'));
        await c.frame('auth-menu');
        await c.pause(READY_MS);
        await c.keys('Down');
        await c.pause(400);
        await c.frame('auth-menu-third-option');
        await c.keys('Up');
        await c.pause(READY_MS);
        await c.keys('Enter');
        c.label(working('loading', 'dialog answered: the program goes on to its next step'));
        await c.text('Please enter your Gemini API key', 30_000);
        c.label(liveDialog('auth', 'API-key box pre-filled from GEMINI_API_KEY ("Press Enter to submit, Esc to cancel")', 'auth', 'escalate'));
        await c.frame('api-key-box');
        await c.pause(READY_MS);
        await c.keys('Enter');
        c.label(working('loading', 'key accepted; gemini finishes starting'));
        await c.text('Type your message', 60_000);
        c.label(composer('the empty composer after the first-run dialogs, placeholder "Type your message or @path/to/file"'));
        await c.frame('composer-after-first-run');
        await c.type('/quit');
        await c.pause(800);
        c.label(awaiting('typed', '"/quit" typed, its completion shown; not submitted'));
        await c.frame('quit-typed');
        await quit(c, '');
        c.label(exited('gemini exited after /quit'));
        await c.frame('first-run-exited');
      },
    },
    {
      ...base,
      name: 'gemini-turn',
      allow: cliAllow(aiDir, 'gemini', 'gemini', { GEMINI_API_KEY: GEMINI_KEY }),
      seed(home, work) {
        writeJson(join(home, '.gemini', 'settings.json'), { security: { auth: { selectedType: 'gemini-api-key' } } });
        writeJson(join(home, '.gemini', 'trustedFolders.json'), { [work]: 'TRUST_FOLDER' });
        return '~/.gemini/settings.json (auth gemini-api-key), ~/.gemini/trustedFolders.json trusting ~/work; GEMINI_API_KEY set';
      },
      async run(c) {
        c.label(working('loading', 'gemini starting on the main screen'));
        await c.pause(800);
        await c.frame('turn-loading', 'now');
        await c.text('Type your message', 60_000);
        if (c.s.read({ mode: 'full' }).content.includes('Initializing')) {
          c.label(working('loading', 'the composer is drawn while gemini initializes ("Initializing... Prompts will be queued.")'));
          await c.frame('composer-while-initializing', 'now');
          await c.gone('Initializing', 60_000);
        }
        c.label(composer('the empty composer, placeholder "Type your message or @path/to/file"'));
        await c.frame('composer');
        await c.type('hello there');
        await c.pause(400);
        c.label(awaiting('typed', '"hello there" typed, not submitted', { reasons: ['composer_ready'] }));
        await c.frame('typed-not-submitted');
        await c.pause(500);
        await c.keys('Enter');
        c.label(working('working', 'message submitted: the turn starts'));
        await c.text('esc to cancel', 20_000);
        c.label(working('working', 'the turn runs: "⠋ Thinking... (esc to cancel, Ns)", the composer drawn below'));
        await c.frame('thinking-flowing', 'flowing');
        await c.frame('thinking-between', 'between');
        await c.pause(3000);
        await c.frame('thinking-later', 'between');
        await c.type('second message');
        await c.pause(400);
        c.label(working('typed', 'a second message typed while the turn still runs'));
        await c.frame('typed-while-thinking', 'between');
        await c.pause(500);
        await c.keys('Enter');
        if (await c.text('Queued', 10_000).then(() => true, () => false)) {
          c.label(working('queued', 'the second message is queued while the turn runs', { reasons: ['input_queued'] }));
          await c.frame('queued', 'between');
        } else c.label(working('working', 'the turn still runs'));
        await c.type('/');
        await c.pause(800);
        c.label(working('slash-menu', 'the slash-command completion list open while the turn still runs'));
        await c.frame('slash-menu-while-thinking', 'between');
        await c.keys('BSpace');
        await c.pause(500);
        c.label(working('working', 'the turn still runs'));
        await c.pause(6000);
        await c.frame('thinking-long', 'between');
        await interrupt(c, 'esc to cancel', 'queued-turn-started');
        c.label(composer('the turn was cancelled ("Request cancelled"); the composer waits', 'error'));
        await c.frame('after-cancel');
        await c.type('/theme');
        await c.pause(500);
        await c.keys('Enter');
        await c.text('Select Theme', 10_000);
        c.label(awaiting('menu', 'the /theme dialog: a theme list with a preview', { dialog: 'live', safeOnly: 'escalate' }));
        await c.frame('theme-dialog');
        await c.keys('Escape');
        await c.gone(/Select Theme/i, 10_000).catch(() => undefined);
        c.label(composer('theme dialog closed; the composer waits'));
        await c.frame('composer-after-theme');
        await c.type('/');
        await c.pause(800);
        c.label(awaiting('slash-menu', 'the slash-command completion list on an idle composer'));
        await c.frame('slash-menu-idle');
        await c.keys('BSpace');
        await c.pause(500);
        await quit(c, '/quit');
        c.label(exited('gemini exited after /quit'));
        await c.frame('turn-exited');
      },
    },
  ];
}

// ---- claude code ------------------------------------------------------------------------------

const ANTHROPIC_KEY = 'sk-ant-fixture-not-a-key';
/** Claude Code stores approved keys by their last 20 characters. */
const ANTHROPIC_KEY_TAIL = ANTHROPIC_KEY.slice(-20);

function claudeScripts(aiDir: string): RecordingScript[] {
  const version = { name: '@anthropic-ai/claude-code', version: installedVersion(aiDir, '@anthropic-ai/claude-code') ?? 'unknown' };
  const base = { program: 'claude-code', version, profile: 'claude-code' } as const;
  const onboarded = (home: string, work: string, trusted: boolean): void => {
    writeJson(join(home, '.claude.json'), {
      hasCompletedOnboarding: true,
      theme: 'dark',
      ...(trusted ? { customApiKeyResponses: { approved: [ANTHROPIC_KEY_TAIL], rejected: [] }, projects: { [work]: { hasTrustDialogAccepted: true } } } : {}),
    });
  };
  return [
    {
      ...base,
      name: 'claude-first-run',
      allow: cliAllow(aiDir, 'claude', 'claude', { ANTHROPIC_API_KEY: ANTHROPIC_KEY }),
      seed: () => 'nothing: no ~/.claude.json; ANTHROPIC_API_KEY set',
      async run(c) {
        c.label(working('first-run', 'first run: Claude Code starting (blank, then its welcome splash) while it checks its service'));
        await c.pause(1500);
        await c.frame('first-run-splash', 'now');
        await c.text(/Unable to connect|Choose the text style/, 60_000);
        if (c.s.read({ mode: 'full' }).content.includes('Choose the text style')) {
          c.label(liveDialog('theme', 'first-run text-style picker', 'menu', 'answer'));
          await c.frame('first-run-theme');
          await c.keys('Enter');
        }
        await c.exit(30_000);
        c.label(exited('"Unable to connect to Anthropic services": the first run cannot reach its service and exits 1'));
        await c.frame('first-run-exited');
      },
    },
    {
      ...base,
      name: 'claude-turn',
      allow: cliAllow(aiDir, 'claude', 'claude', { ANTHROPIC_API_KEY: ANTHROPIC_KEY }),
      seed(home, work) {
        onboarded(home, work, false);
        return '~/.claude.json with hasCompletedOnboarding and a theme (folder not trusted, key not approved); ANTHROPIC_API_KEY set';
      },
      async run(c) {
        c.label(working('loading', 'Claude Code starting'));
        await c.pause(500);
        await c.frame('turn-loading', 'now');
        await c.text('Yes, I trust this folder', 60_000);
        c.label(liveDialog('trust', 'the trust gate: "Quick safety check … 1. Yes, I trust this folder / 2. No, exit" (the seed\'s safe, auto-answered example)', 'trust', 'answer'));
        await c.frame('trust-folder');
        await c.pause(1000);
        await c.keys('Enter');
        c.label(working('loading', 'dialog answered: the program goes on to its next step'));
        await c.text('Detected a custom API key', 10_000);
        c.label(liveDialog('dialog-after-auto-answer', '"Detected a custom API key … Do you want to use this API key? 1. Yes / 2. No (recommended)", right after the trust gate', 'auth', 'escalate'));
        await c.frame('custom-api-key');
        await c.pause(800);
        await c.keys('Up');
        await c.pause(300);
        await c.keys('Enter');
        c.label(working('loading', 'dialog answered: the program goes on to its next step'));
        await c.text('for shortcuts', 30_000);
        c.label(composer('the empty composer ("❯" between two rules, "? for shortcuts")'));
        await c.frame('composer');
        await c.type('hello');
        await c.pause(400);
        c.label(awaiting('typed', '"hello" typed, not submitted', { reasons: ['composer_ready'] }));
        await c.frame('typed-not-submitted');
        await c.pause(500);
        await c.keys('Enter');
        c.label(working('working', 'message submitted: the turn starts'));
        await c.text('esc to interrupt', 20_000);
        c.label(working('working', 'the turn starts: spinner line above the composer, "esc to interrupt" in the footer'));
        await c.frame('working-flowing', 'flowing');
        await c.frame('working-between', 'between');
        await c.text('Retrying in', 30_000);
        c.label(working('retrying', '"✻ Unable to connect to API (…) · Retrying in Ns · attempt n/10", footer "esc to interrupt"'));
        await c.frame('retrying-flowing', 'flowing');
        await c.frame('retrying-between', 'between');
        await c.frame('retrying-settled', 'settled');
        await c.type('/');
        await c.pause(800);
        c.label(working('slash-menu', 'the slash menu open over the composer hides the "esc to interrupt" footer; the retries go on above it'));
        await c.frame('slash-menu-while-retrying', 'between');
        await c.frame('slash-menu-while-retrying-settled', 'settled');
        await c.keys('BSpace');
        await c.pause(500);
        c.label(working('retrying', 'slash menu closed; still retrying'));
        await c.type('also check the tests');
        await c.pause(400);
        c.label(working('typed', 'a second message typed while the turn retries'));
        await c.frame('typed-while-retrying', 'between');
        await c.keys('Enter');
        if (await c.text(/queued/i, 10_000).then(() => true, () => false)) {
          c.label(working('queued', 'the second message waits for the turn ("queued messages" hint)'));
          await c.frame('queued', 'between');
          await c.frame('queued-settled', 'settled');
        } else c.label(working('retrying', 'still retrying'));
        await c.text(/attempt [6-9]\/10/, 150_000);
        c.label(working('retrying', 'a long wait between attempts ("Retrying in Ns · attempt n/10"): only the countdown moves'));
        await c.frame('retrying-late-between', 'between');
        await c.frame('retrying-late-settled', 'settled');
      },
    },
    {
      ...base,
      name: 'claude-bypass',
      allow: cliAllow(aiDir, 'claude', 'claude', { ANTHROPIC_API_KEY: ANTHROPIC_KEY, IS_SANDBOX: '1' }),
      args: ['--dangerously-skip-permissions'],
      seed(home, work) {
        onboarded(home, work, true);
        return '~/.claude.json onboarded, ~/work trusted, the key approved; ANTHROPIC_API_KEY set; IS_SANDBOX=1 (the drive runs as root inside bwrap, where Claude Code refuses --dangerously-skip-permissions otherwise)';
      },
      async run(c) {
        c.label(working('loading', 'Claude Code starting'));
        await c.text('Bypass Permissions mode', 60_000);
        c.label(liveDialog('bypass-warning', 'the Bypass Permissions warning, default highlight "1. No, exit": a reflexive Enter quits', undefined, 'escalate'));
        await c.frame('bypass-warning');
        await c.pause(1000);
        await c.keys('Down');
        await c.pause(400);
        c.label(liveDialog('bypass-warning', 'the Bypass Permissions warning with "2. Yes, I accept" highlighted', undefined, 'escalate'));
        await c.frame('bypass-warning-accept-highlighted');
        await c.keys('Enter');
        c.label(working('loading', 'dialog answered: the program goes on to its next step'));
        await c.text(/for shortcuts|bypass permissions on/, 30_000);
        c.label(composer('the composer in bypass mode (footer "⏵⏵ bypass permissions on")'));
        await c.frame('bypass-composer');
        await c.type('hello');
        await c.pause(500);
        await c.keys('Enter');
        c.label(working('working', 'message submitted: the turn starts'));
        await c.text('Retrying in', 30_000);
        c.label(working('retrying', 'retrying in bypass mode: the footer says "bypass permissions on" in both states'));
        await c.frame('bypass-retrying-between', 'between');
        await c.frame('bypass-retrying-settled', 'settled');
        await interrupt(c, 'esc to interrupt', 'bypass-second-turn');
        c.label(composer('interrupted ("Interrupted · What should Claude do instead?"), the message back in the composer; it waits', 'error'));
        await c.frame('bypass-after-interrupt');
        // The interrupted message is back in the composer: Ctrl-C clears it.
        await c.keys('C-c');
        await c.pause(400);
        await c.optional('slash menu and /model', async () => {
          await c.type('/');
          await c.pause(800);
          c.label(awaiting('slash-menu', 'the slash menu on an idle composer'));
          await c.frame('slash-menu-idle');
          await c.type('model');
          await c.pause(400);
          await c.keys('Enter');
          await c.text(/Select model/i, 10_000);
          c.label(awaiting('menu', 'the /model picker', { dialog: 'live', safeOnly: 'escalate' }));
          await c.frame('model-picker');
          await c.keys('Escape');
          await c.pause(800);
          c.label(composer('picker closed; the composer waits'));
        });
        await c.keys('C-c');
        await c.pause(400);
        await c.keys('C-c');
        c.label(working('exit', 'Ctrl-C twice on an empty composer: Claude Code shuts down'));
        await c.exit(20_000);
        c.label(exited('Claude Code exited after Ctrl-C'));
        await c.frame('bypass-exited');
      },
    },
  ];
}

// ---- opencode ----------------------------------------------------------------------------------

function opencodeScripts(aiDir: string): RecordingScript[] {
  const version = { name: 'opencode-ai', version: installedVersion(aiDir, 'opencode-ai') ?? 'unknown' };
  return [
    {
      program: 'opencode',
      version,
      profile: 'opencode',
      name: 'opencode-turn',
      allow: cliAllow(aiDir, 'opencode', 'opencode', { ANTHROPIC_API_KEY: ANTHROPIC_KEY }),
      seed: () => 'nothing: an empty scratch HOME; ANTHROPIC_API_KEY set (opencode picks the Anthropic provider)',
      async run(c) {
        c.label(working('loading', 'opencode starting: a blank main screen for seconds'));
        await c.pause(1000);
        await c.frame('loading', 'now');
        await c.pause(1500);
        await c.frame('loading-settled', 'settled');
        await c.alternate(60_000);
        c.label(working('loading', 'opencode on its alternate screen, still blank: loading'));
        await c.pause(1500);
        await c.frame('loading-alternate-blank', 'settled');
        await c.text('Ask anything', 90_000);
        c.label(composer('the composer with its grey placeholder "Ask anything… \\"…\\""'));
        await c.frame('composer');
        await c.type('hello');
        await c.pause(400);
        c.label(awaiting('typed', '"hello" typed, not submitted', { reasons: ['composer_ready'] }));
        await c.frame('typed-not-submitted');
        await c.pause(500);
        await c.keys('Enter');
        c.label(working('working', 'message submitted: the turn starts'));
        await c.text('esc interrupt', 20_000);
        c.label(working('working', 'the turn runs: progress blocks and "esc interrupt" in the footer'));
        await c.frame('working-flowing', 'flowing');
        await c.frame('working-between', 'between');
        await c.type('more');
        await c.pause(400);
        c.label(working('typed', 'text typed into the composer while the turn runs'));
        await c.frame('typed-while-working', 'between');
        await c.keys('BSpace', 'BSpace', 'BSpace', 'BSpace');
        c.label(working('working', 'the turn runs'));
        await c.text('retrying', 30_000);
        c.label(working('retrying', '"Cannot connect to API … [retrying in Ns attempt #n]" in the footer'));
        await c.frame('retrying-between', 'between');
        await c.frame('retrying-settled', 'settled');
        await c.keys('C-p');
        await c.pause(800);
        c.label(working('slash-menu', 'the command palette (ctrl+p) open while the turn retries'));
        await c.frame('palette-while-retrying', 'between');
        await c.keys('Escape');
        await c.pause(500);
        c.label(working('retrying', 'palette closed; still retrying'));
        await c.keys('Escape');
        await c.pause(300);
        await c.keys('Escape');
        await c.gone(/retrying|esc interrupt/, 15_000);
        c.label(composer('interrupted; the composer waits', 'error'));
        await c.frame('after-interrupt');
        await c.keys('C-p');
        await c.pause(800);
        c.label(awaiting('menu', 'the command palette open on an idle session'));
        await c.frame('palette-idle');
        await c.keys('Escape');
        await c.pause(500);
        c.label(composer('palette closed; the composer waits'));
        await c.keys('Tab');
        await c.pause(800);
        c.label(composer('Tab switched the agent (Build → Plan); the composer waits'));
        await c.frame('composer-plan-agent');
        await c.keys('Tab');
        await c.pause(500);
        c.label(composer('back to the Build agent; the composer waits'));
        await c.optional('slash popup and /models', async () => {
          await c.type('/');
          await c.pause(800);
          c.label(awaiting('slash-menu', 'the slash-command popup on an idle composer'));
          await c.frame('slash-popup-idle');
          await c.type('models');
          await c.pause(400);
          await c.keys('Enter');
          await c.text(/Select model/i, 10_000);
          c.label(awaiting('menu', 'the model picker', { dialog: 'live', safeOnly: 'escalate' }));
          await c.frame('model-picker');
          await c.keys('Escape');
          await c.pause(600);
          c.label(composer('picker closed; the composer waits'));
        });
        await c.keys('C-c');
        c.label(working('exit', 'Ctrl-C: opencode shuts down'));
        await c.exit(20_000);
        c.label(exited('opencode exited'));
        await c.frame('exited');
      },
    },
  ];
}

// ---- all ---------------------------------------------------------------------------------------

export function aiScripts(aiDir: string): RecordingScript[] {
  return [...codexScripts(aiDir), ...geminiScripts(aiDir), ...claudeScripts(aiDir), ...opencodeScripts(aiDir)];
}

// ---- ordinary programs -------------------------------------------------------------------------

/** The Debian package version of a program (the fixture's metadata). */
function debianVersion(pkg: string): string {
  try {
    return execFileSync('dpkg-query', ['-W', '-f', '${Version}', pkg], { encoding: 'utf8' }).trim() || 'unknown';
  } catch {
    return 'unknown';
  }
}

function program(id: string, path: string, extra: Partial<AllowInput> = {}): AllowInput {
  return { id, match: { path }, consent: CONSENT, ...extra };
}

const BASH = program('bash', '/bin/bash', { env: { PS1: '$ ' } });

export function programScripts(): RecordingScript[] {
  const base = { program: 'programs', profile: 'shell', cols: 80, rows: 24 } as const;
  const bash = { name: 'bash', version: debianVersion('bash') };
  return [
    {
      ...base,
      name: 'prog-yn-no-reader',
      version: bash,
      allow: BASH,
      args: ['--norc', '--noprofile', '-c', "printf 'Continue? (y/n) '; sleep 600"],
      async run(c) {
        c.label(working('loading', 'bash starting'));
        await c.text('Continue? (y/n)', 10_000);
        c.label(working('yn-no-reader', 'printed "Continue? (y/n) " and sleeps: nothing reads the terminal, so nothing waits for an answer', { dialog: 'stale' }));
        await c.frame('yn-no-reader');
        await c.pause(3000);
        await c.frame('yn-no-reader-later');
      },
    },
    {
      ...base,
      name: 'prog-read-name',
      version: bash,
      allow: BASH,
      args: ['--norc', '--noprofile'],
      async run(c) {
        c.label(working('loading', 'bash starting'));
        await c.text(/^\$\s*$/m, 10_000);
        c.label(awaiting('prompt', 'the shell prompt', { reasons: ['cursor_parked'] }));
        await c.frame('bash-prompt');
        await c.type('read -p "Name: " n; echo "Hello $n"');
        await c.pause(300);
        await c.keys('Enter');
        await c.text('Name: ', 5000);
        c.label(awaiting('tty-read', 'read -p "Name: " waits for a line', { reasons: ['cursor_parked', 'tty_read'] }));
        await c.frame('read-name');
        await c.type('Alice');
        await c.pause(300);
        c.label(awaiting('echo', '"Alice" typed after "Name: ", not submitted', { reasons: ['cursor_parked', 'tty_read'] }));
        await c.frame('read-name-typed');
        await c.keys('Enter');
        // The echo case: the output ends with the typed text, and must still be found.
        const w = await c.s.wait({ forText: 'Hello Alice', timeoutMs: 3000 });
        c.note(`wait({ forText: 'Hello Alice' }) after typing Alice: ${w.outcome}`);
        await c.text('Hello Alice', 5000);
        c.label(awaiting('prompt', '"Hello Alice" printed, back at the prompt', { reasons: ['cursor_parked'] }));
        await c.frame('read-name-answered');
      },
    },
    {
      ...base,
      name: 'prog-cat',
      version: { name: 'coreutils cat', version: debianVersion('coreutils') },
      allow: program('cat', '/usr/bin/cat'),
      args: ['-'],
      async run(c) {
        c.label(awaiting('tty-read', 'cat reads its terminal: no prompt, the cursor at the top left', { reasons: ['tty_read'] }));
        await c.pause(800);
        await c.frame('cat-reading');
        await c.pause(3000);
        await c.frame('cat-reading-later');
        await c.type('some text');
        await c.keys('Enter');
        await c.text(/some text\s+some text/, 5000);
        c.label(awaiting('tty-read', 'cat echoed a line and reads the next', { reasons: ['tty_read'] }));
        await c.frame('cat-after-line');
        await c.keys('C-d');
        await c.exit(5000);
        c.label(exited('cat ended at end of input'));
        await c.frame('cat-exited');
      },
    },
    {
      ...base,
      name: 'prog-python',
      version: { name: 'python3', version: debianVersion('python3') },
      allow: program('python3', '/usr/bin/python3'),
      args: ['-q'],
      async run(c) {
        c.label(working('loading', 'python starting'));
        await c.text(/^>>>\s*$/m, 10_000);
        c.label(awaiting('prompt', 'the REPL prompt', { reasons: ['cursor_parked'] }));
        await c.frame('python-prompt');
        await c.type('sum(i * i for i in range(200_000_000))');
        await c.pause(300);
        c.label(awaiting('typed', 'an expression typed, not submitted', { reasons: ['cursor_parked'] }));
        await c.frame('python-typed');
        await c.keys('Enter');
        c.label(working('busy', 'computing: no output, no prompt, the CPU busy'));
        await c.pause(1500);
        await c.frame('python-computing');
        await c.pause(2000);
        await c.frame('python-computing-later');
        await c.text(/^\d{10,}$/m, 120_000);
        c.label(awaiting('prompt', 'the result, then the prompt', { reasons: ['cursor_parked'] }));
        await c.frame('python-result');
        await c.type('input("Your name: ")');
        await c.keys('Enter');
        await c.text('Your name: ', 5000);
        c.label(awaiting('tty-read', 'input("Your name: ") waits for a line', { reasons: ['cursor_parked', 'tty_read'] }));
        await c.frame('python-input');
      },
    },
    {
      ...base,
      name: 'prog-htop',
      version: { name: 'htop', version: debianVersion('htop') },
      allow: program('htop', '/usr/bin/htop'),
      cols: 100,
      rows: 30,
      async run(c) {
        c.label(working('loading', 'htop starting'));
        await c.alternate(10_000);
        await c.text('F10Quit', 10_000);
        c.label(awaiting('tui', 'htop waits for keys and redraws every 1.5 s'));
        await c.frame('htop');
        // Issue 12 class 9: does a wait for idle agree with status()?
        const w = await c.s.wait({ forIdleMs: 2000, timeoutMs: 6000 });
        const st = c.s.status();
        c.note(`wait({ forIdleMs: 2000 }): ${w.outcome} (${w.hint}); status(): ${st.state}/${st.reason}`);
        await c.frame('htop-later', 'between');
        await c.keys('F2');
        await c.text('Setup', 5000);
        c.label(awaiting('menu', 'htop\'s setup screen'));
        await c.frame('htop-setup');
        await c.keys('Escape');
        await c.pause(500);
        await c.keys('q');
        await c.exit(5000);
        c.label(exited('htop quit'));
      },
    },
    {
      ...base,
      name: 'prog-vim',
      version: { name: 'vim', version: debianVersion('vim') },
      allow: program('vim', '/usr/bin/vim'),
      args: ['-u', 'NONE', '-N', '-i', 'NONE', 'notes.txt'],
      async run(c) {
        c.label(working('loading', 'vim starting'));
        await c.text('"notes.txt"', 10_000);
        c.label(awaiting('tui', 'vim in normal mode on a new file', { reasons: ['screen_settled', 'tty_read', 'cursor_parked'] }));
        await c.frame('vim-normal');
        await c.keys('i');
        await c.type('first line');
        await c.pause(300);
        c.label(awaiting('typed', 'vim in insert mode, a line typed', { reasons: ['screen_settled', 'tty_read', 'cursor_parked'] }));
        await c.frame('vim-insert');
        await c.keys('Escape');
        await c.keys(':');
        await c.pause(300);
        c.label(awaiting('prompt', 'vim\'s command line after ":"', { reasons: ['cursor_parked', 'tty_read'] }));
        await c.frame('vim-command-line');
        await c.type('q!');
        await c.keys('Enter');
        await c.exit(5000);
        c.label(exited('vim quit'));
      },
    },
    {
      ...base,
      name: 'prog-less',
      version: { name: 'less', version: debianVersion('less') },
      allow: program('less', '/usr/bin/less'),
      args: ['/etc/services'],
      async run(c) {
        c.label(working('loading', 'less starting'));
        await c.alternate(10_000);
        await c.idle(300, 5000);
        c.label(awaiting('pager', 'less, first page of /etc/services', { reasons: ['screen_settled', 'cursor_parked', 'tty_read'] }));
        await c.frame('less-first-page');
        await c.keys('Space');
        await c.pause(300);
        c.label(awaiting('pager', 'less, second page', { reasons: ['screen_settled', 'cursor_parked', 'tty_read'] }));
        await c.frame('less-second-page');
        await c.keys('/');
        await c.pause(300);
        c.label(awaiting('prompt', 'less\'s search prompt "/"', { reasons: ['cursor_parked', 'screen_settled', 'tty_read'] }));
        await c.frame('less-search-prompt');
        await c.keys('BSpace');
        await c.pause(300);
        await c.keys('q');
        await c.exit(5000);
        c.label(exited('less quit'));
      },
    },
    {
      ...base,
      name: 'prog-fzf',
      version: { name: 'fzf', version: debianVersion('fzf') },
      allow: BASH,
      args: ['--norc', '--noprofile', '-c', 'seq -f "item %g" 1 200 | fzf'],
      async run(c) {
        c.label(working('loading', 'fzf reading its list'));
        await c.text('200/200', 10_000);
        c.label(awaiting('picker', 'fzf picking from 200 items', { dialog: 'live', dialogKind: 'select', safeOnly: 'escalate', reasons: ['dialog_detected'] }));
        await c.frame('fzf-picker');
        await c.type('12');
        await c.text(/\d+\/200/, 5000);
        await c.pause(300);
        c.label(awaiting('picker', 'fzf with "12" typed: the list filtered', { dialog: 'live', dialogKind: 'select', safeOnly: 'escalate', reasons: ['dialog_detected'] }));
        await c.frame('fzf-filtered');
        await c.keys('Escape');
        await c.exit(5000);
        c.label(exited('fzf cancelled'));
      },
    },
    {
      ...base,
      name: 'prog-whiptail',
      version: { name: 'whiptail', version: debianVersion('whiptail') },
      allow: BASH,
      args: ['--norc', '--noprofile', '-c', "whiptail --title Cleanup --yesno 'Delete all files in ./build?' 8 44; whiptail --title Setup --menu 'Choose an install mode:' 14 50 4 fast 'Fast install' safe 'Safe install' custom 'Custom install'"],
      async run(c) {
        c.label(working('loading', 'whiptail starting'));
        await c.text('Delete all files', 10_000);
        c.label(liveDialog('dialog', 'whiptail --yesno "Delete all files in ./build?"', 'destructive', 'escalate'));
        await c.frame('whiptail-yesno-destructive');
        await c.keys('Enter');
        c.label(working('loading', 'answered; the next whiptail starts'));
        await c.text('Custom install', 10_000);
        c.label(liveDialog('dialog', 'whiptail --menu with three install modes', 'select', 'escalate'));
        await c.frame('whiptail-menu');
        await c.keys('Escape');
        await c.exit(5000);
        c.label(exited('whiptail cancelled'));
      },
    },
  ];
}
