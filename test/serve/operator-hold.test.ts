/**
 * A person's take-over holds agents off, against a real serving host (in this process, with its
 * console), real bash drives in tmux, a real WebSocket and the built CLI's `attach` in a real
 * terminal (node-pty): while an operator holds a drive, an agent token's input is refused with
 * OPERATOR_HOLD naming the hold (its reads go on), and inputs it had waiting in the drive's queue
 * leave it; the operator's own keys go through; subscribers are told when the hold starts and
 * ends; release, detaching, or the operator's death (a dropped WebSocket, a SIGKILLed CLI) ends it.
 * Uses dist/ for the CLI (built when missing).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pty from 'node-pty';
import WebSocket from 'ws';
import { serve, type ServingHost } from '../../lib/serve/serve.js';
import { ConsoleServer } from '../../lib/console/console-server.js';
import { Client } from '../../lib/client/client.js';
import type { HoldEvent } from '../../lib/client/remote-drive.js';
import { TmuxDriveError } from '../../lib/common/errors.js';
import { CLI, ensureBuilt } from '../cli/dist.js';
import { BASH_ARGS, hostConfig, sweep, tempDataDir } from './harness.js';

const dataDir = tempDataDir();
let host: ServingHost;
let owner: Client;
let agent: Client;
let ownerToken: string;
let base: string;

beforeAll(async () => {
  ensureBuilt();
  host = await serve({ dataDir, config: hostConfig(), console: ConsoleServer.at('127.0.0.1:0'), logger: { warn: () => undefined } });
  base = host.console?.url as string;
  ownerToken = readFileSync(join(dataDir, 'serve', 'owner.token'), 'utf8').trim();
  owner = await Client.connect(dataDir);
  for (const name of ['held', 'attached']) await (await owner.create({ allowId: 'bash', name, args: BASH_ARGS })).wait({ forText: '$ ' });
  const { token } = await owner.mint({ classes: ['observe', 'drive'], drives: ['held', 'attached'], label: 'agent' });
  agent = await Client.connect(dataDir, { token, reconnect: false });
}, 60_000);

afterAll(async () => {
  await agent?.close();
  for (const i of await owner.list().catch(() => [])) if (i.state === 'live') await owner.drive(i.id).kill().catch(() => undefined);
  await owner?.close();
  await host?.close();
  sweep(dataDir);
});

async function refusal(p: Promise<unknown>): Promise<TmuxDriveError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(TmuxDriveError);
  return err as TmuxDriveError;
}

/** A drive page's WebSocket, as the browser opens it (owner token, the console's own origin). */
class Page {
  readonly ws: WebSocket;
  readonly messages: { type: string; [k: string]: unknown }[] = [];
  constructor(drive: string) {
    this.ws = new WebSocket(`${base.replace(/^http/, 'ws')}ws/drive/${drive}`, { headers: { Authorization: `Bearer ${ownerToken}`, Origin: base.replace(/\/$/, '') } });
    this.ws.on('message', (d) => this.messages.push(JSON.parse(String(d)) as { type: string }));
  }
  send(m: Record<string, unknown>): void {
    this.ws.send(JSON.stringify(m));
  }
  async next(type: string, match: (m: Record<string, unknown>) => boolean = () => true): Promise<Record<string, unknown>> {
    await expect.poll(() => this.messages.some((m) => m.type === type && match(m)), { timeout: 10_000 }).toBe(true);
    return this.messages.find((m) => m.type === type && match(m)) as Record<string, unknown>;
  }
}

describe('an operator hold', () => {
  it('the console take-over refuses an agent\'s input with OPERATOR_HOLD (reads go on), the operator types, release lets the agent in; subscribers are told', async () => {
    const holds: HoldEvent[] = [];
    const sub = agent.drive('held').on('hold', (h) => holds.push(h));
    await agent.drive('held').status(); // answered after the subscribe the listener sent (one connection, in order)
    const page = new Page('held');
    await page.next('hello');
    page.send({ type: 'takeover' });
    await page.next('control', (m) => m.driving === true);

    const refused = await refusal(agent.drive('held').sendText('echo agent-$((1+1))', { submit: true }));
    expect(refused.code).toBe('OPERATOR_HOLD');
    expect(refused.message).toMatch(/held by an operator \(console, token owner\)/);
    expect(refused.context).toMatchObject({ drive: 'held', heldBy: 'owner', how: 'console' });
    expect((await refusal(agent.drive('held').sendKeys('C-c'))).code).toBe('OPERATOR_HOLD');
    expect((await refusal(agent.drive('held').signal('interrupt'))).code).toBe('OPERATOR_HOLD');
    // An observer keeps reading.
    expect((await agent.drive('held').read()).content).toContain('$');

    page.send({ type: 'input', data: 'echo console-$((6*7))\r' });
    await owner.drive('held').wait({ forText: 'console-42', timeoutMs: 10_000 });
    await expect.poll(() => holds.map((h) => h.held), { timeout: 5000 }).toEqual([true]);
    expect(holds[0]).toMatchObject({ by: 'owner', how: 'console' });

    page.send({ type: 'release' });
    await page.next('control', (m) => m.driving === false);
    await agent.drive('held').sendText('echo agent-$((1+1))', { submit: true });
    await owner.drive('held').wait({ forText: 'agent-2', timeoutMs: 10_000 });
    await expect.poll(() => holds.map((h) => h.held), { timeout: 5000 }).toEqual([true, false]);
    sub.dispose();
    page.ws.close();
  });

  it('a dropped console socket releases its hold: nothing stays held by a dead operator', async () => {
    const page = new Page('held');
    await page.next('hello');
    page.send({ type: 'takeover' });
    await page.next('control', (m) => m.driving === true);
    expect((await refusal(agent.drive('held').sendKeys('Enter'))).code).toBe('OPERATOR_HOLD');
    page.ws.terminate(); // no close frame: the connection just goes
    await expect.poll(async () => agent.drive('held').sendText('echo after-drop-$((3*3))', { submit: true }).then(() => 'sent', (e: TmuxDriveError) => e.code), { timeout: 10_000 }).toBe('sent');
    await owner.drive('held').wait({ forText: 'after-drop-9', timeoutMs: 10_000 });
  });

  it('inputs an agent had waiting for their turn leave the queue with OPERATOR_HOLD when an operator takes over; none reaches bash', async () => {
    const d = owner.drive('held');
    // The terminal does not echo and nothing reads: the agent's submit waits out its echo (2 s) before Enter.
    await d.sendText('stty -echo; sleep 30', { submit: true });
    await d.wait({ forIdleMs: 300 });
    const running = agent.drive('held').sendText('first-in', { submit: true });
    await new Promise((r) => setTimeout(r, 100));
    const waiting = refusal(agent.drive('held').sendText('queued-never-sent', { submit: true }));
    await new Promise((r) => setTimeout(r, 100));
    await owner.drive('held').hold();
    expect((await waiting).code).toBe('OPERATOR_HOLD');
    await running; // the unit already running finishes whole
    // The holder drives; the agent does not.
    await owner.drive('held').signal('interrupt');
    await owner.drive('held').sendText('stty echo; echo holder-$((5*5))', { submit: true });
    await d.wait({ forText: 'holder-25', timeoutMs: 10_000 });
    expect(await owner.drive('held').release()).toBe(true);
    const typed = (await d.transcript({ limit: 10_000 })).filter((e) => e.kind === 'input').map((e) => String(e.data));
    expect(typed).toContain('first-in');
    expect(typed).not.toContain('queued-never-sent');
  });

  it('tmux-drive attach through the host holds agents off until the operator detaches, or until its CLI dies', async () => {
    const attach = (): { term: pty.IPty; screen: () => string; exited: Promise<number> } => {
      const term = pty.spawn(process.execPath, [CLI, '--data-dir', dataDir, 'attach', 'attached'], { cols: 100, rows: 30, env: { ...process.env, TERM: 'xterm-256color' } as Record<string, string> });
      let seen = '';
      term.onData((d) => (seen += d));
      return { term, screen: () => seen, exited: new Promise((ok) => term.onExit(({ exitCode }) => ok(exitCode))) };
    };
    const agentSends = (text: string): Promise<string> => agent.drive('attached').sendText(text, { submit: true }).then(() => 'sent', (e: TmuxDriveError) => e.code);

    const first = attach();
    await expect.poll(() => agentSends('echo too-early'), { timeout: 15_000 }).toBe('OPERATOR_HOLD');
    // The operator types in the real terminal; it reaches bash.
    first.term.write('echo operator-$((4*4))\r');
    await owner.drive('attached').wait({ forText: 'operator-16', timeoutMs: 10_000 });
    first.term.write('\x02d');
    const again = setInterval(() => first.term.write('\x02d'), 3000);
    try {
      expect(await first.exited).toBe(0);
    } finally {
      clearInterval(again);
    }
    expect(await agentSends('echo after-detach-$((2*5))')).toBe('sent');
    await owner.drive('attached').wait({ forText: 'after-detach-10', timeoutMs: 10_000 });

    const second = attach();
    await expect.poll(() => agentSends('echo too-early'), { timeout: 15_000 }).toBe('OPERATOR_HOLD');
    process.kill(second.term.pid, 'SIGKILL'); // the CLI dies; its tmux client may live on in the terminal
    await expect.poll(() => agentSends('echo after-kill-$((3*5))'), { timeout: 10_000 }).toBe('sent');
    await owner.drive('attached').wait({ forText: 'after-kill-15', timeoutMs: 10_000 });
    second.term.kill('SIGKILL');
  });
});
