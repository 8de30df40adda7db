/**
 * What a new control client does once tmux says it is attached, before the first resync (which
 * the backend runs: it owns the capture gate). In order: pause-after, the pane's identity, the
 * pane-death subscription, the paste buffer a dead host may have left, the clients attached (an
 * operator's terminal is reported; a dead host's control client is ended), and a pane left in a
 * mode. Every step is one command on the client, bounded by its deadline.
 */
import type { Clock } from '../../lib/common/clock.js';
import { TmuxDriveError } from '../../lib/common/errors.js';
import type { Reply } from '../../lib/control/command-queue.js';
import { isWindowId, type WindowId } from '../../lib/control/ids.js';
import type { PaneId } from '../../lib/control/parser.js';
import {
  PASTE_BUFFER,
  cancelPaneMode,
  deleteBuffer,
  displayMessage,
  listClients,
  refreshClientPauseAfter,
  refreshClientSubscribe,
  switchClientReadWrite,
  type TmuxCommand,
} from '../../lib/control/tmux-commands.js';
import { waitGone } from '../process/wait-gone.js';
import { PANE_DEATH_FORMAT } from './pane-exit.js';
import { hostProcesses, type TmuxHost } from './tmux-host.js';

/** The subscription that reports the pane's death: its `%subscription-changed` names it. */
export const DEAD_SUBSCRIPTION = 'td-dead';
/** tmux pauses a pane for us once its output has waited this many seconds (pause-after). */
const PAUSE_AFTER_SECONDS = 5;

const INFO_FORMAT = ['pid', 'pane_id', 'pane_pid', 'pane_in_mode', 'window_id', 'client_name'].map((v) => `#{${v}}`).join('\t');
const CLIENTS_FORMAT = '#{client_control_mode}\t#{client_pid}\t#{client_name}\t#{client_readonly}';

/** What the handshake learnt about the drive. */
export interface AttachedPane {
  /** The tmux server's pid, as the host numbers it (-1 if tmux gave none). */
  readonly serverPid: number;
  readonly pane: PaneId;
  /** The pane's process, as the host numbers it. */
  readonly pid: number | undefined;
}

export interface HandshakeContext {
  /** The new client (only its command channel is used). */
  readonly client: { command(command: TmuxCommand, timeoutMs?: number): Promise<Reply>; batch(commands: readonly TmuxCommand[], timeoutMs?: number): Promise<Reply[]> };
  /** The tmux session name. */
  readonly session: string;
  readonly host: TmuxHost;
  readonly clock: Clock;
  readonly timeoutMs: number;
  /** End every other control client (a re-attach under the drive's lease: they are a dead host's). */
  readonly endStale: boolean;
  /** The pane is known (as soon as tmux said which it is: its events may arrive from then on). */
  readonly identified: (pane: AttachedPane) => void;
  readonly incident: (code: string, detail: Record<string, unknown>) => void;
  /** The operators' terminal clients attached now (maybe none), after any stale client is gone. */
  readonly operatorsFound: (names: readonly string[]) => void;
}

export async function attachHandshake(ctx: HandshakeContext): Promise<void> {
  const { client } = ctx;
  const { info, windowId } = await identify(ctx);
  // The pane-died hook's line reaches control clients only sometimes in tmux 3.3a (16 of 20
  // runs here) and a pane subscription never reported; a window subscription on pane_dead did,
  // 10 of 10. tmux checks subscriptions once a second, so an exit is seen within ~1 s at worst.
  // The status is in the format too: a pane that died before tmux reaped its program is
  // reported again once the status is known (pane-exit.ts).
  await client.command(refreshClientSubscribe(DEAD_SUBSCRIPTION, windowId, PANE_DEATH_FORMAT));
  // A paste cut short by a host that died holds typed text in tmux's memory: never left there.
  await client.command(deleteBuffer(PASTE_BUFFER));
  const clients = (await client.command(listClients(CLIENTS_FORMAT))).text().split('\n');
  await settleClients(ctx, info, clients);
}

/** pause-after, the pane's identity (reported through `identified`) and its window. */
async function identify(ctx: HandshakeContext): Promise<{ info: string[]; windowId: WindowId }> {
  await ctx.client.command(refreshClientPauseAfter(PAUSE_AFTER_SECONDS));
  const info = (await ctx.client.command(displayMessage(ctx.session, INFO_FORMAT))).text().split('\t');
  const pane = (info[1] ?? '%0') as PaneId;
  ctx.identified({ serverPid: Number(info[0]), pane, pid: Number(info[2]) || undefined });
  const windowId: WindowId = info[4] !== undefined && isWindowId(info[4]) ? info[4] : '@0';
  return { info, windowId };
}

/**
 * A hot standby's observer, once attached: what of the handshake changes nothing in the drive
 * (pause-after, the identity, the pane-death subscription) is done while it waits, so that its
 * promotion is one batch (promoteHandshake).
 */
export async function observeHandshake(ctx: HandshakeContext): Promise<void> {
  const { windowId } = await identify(ctx);
  await ctx.client.command(refreshClientSubscribe(DEAD_SUBSCRIPTION, windowId, PANE_DEATH_FORMAT));
}

/**
 * The observer's host took the drive's lease: the rest of the handshake in one batch (made
 * read-write, the identity again, the dead host's paste buffer deleted, the clients listed),
 * then stale clients ended and a pane mode left, as attachHandshake does.
 */
export async function promoteHandshake(ctx: HandshakeContext): Promise<void> {
  const [, readOnly, identity, , clients] = await ctx.client.batch([...switchClientReadWrite(), displayMessage(ctx.session, INFO_FORMAT), deleteBuffer(PASTE_BUFFER), listClients(CLIENTS_FORMAT)]);
  // switch-client -r toggles: anything but read-write now means the client is not what we made.
  if (readOnly?.text() !== '0') throw new TmuxDriveError('TMUX_START_FAILED', `the observer of ${ctx.session} did not become read-write`, { session: ctx.session });
  const info = (identity?.text() ?? '').split('\t');
  ctx.identified({ serverPid: Number(info[0]), pane: (info[1] ?? '%0') as PaneId, pid: Number(info[2]) || undefined });
  await settleClients(ctx, info, (clients?.text() ?? '').split('\n'));
}

/** Operators reported, stale control clients ended, a pane left in a mode cancelled. */
async function settleClients(ctx: HandshakeContext, info: readonly string[], clients: readonly string[]): Promise<void> {
  const { client } = ctx;
  const pane = (info[1] ?? '%0') as PaneId;
  const operators: string[] = [];
  const stale: number[] = [];
  for (const [control, pid, name, readOnly] of clients.map((line) => line.split('\t'))) {
    if (control === '0' && name) operators.push(name);
    // A dead host's `tmux -C` stays attached in 3.3a and freezes the pane (reference §7); it
    // is ended by pid, the only way that works (detach-client does not). A read-only control
    // client is another standby's observer: sent no output, it freezes nothing, and it stays.
    else if (ctx.endStale && control === '1' && readOnly !== '1' && name !== info[5] && Number(pid) > 0) stale.push(Number(pid));
  }
  if (stale.length > 0) {
    ctx.incident('stale_control_clients', { count: stale.length });
    await ctx.host.signal(stale, 'SIGTERM');
    await waitGone(stale, hostProcesses(ctx.host), { clock: ctx.clock, timeoutMs: ctx.timeoutMs, escalation: 'SIGKILL' });
  }
  ctx.operatorsFound(operators);
  if (info[3] === '1') {
    // tmux 3.3a puts the pane into view-mode on a config error (no %config-error until 3.4).
    ctx.incident('pane_in_mode_at_attach', { pane });
    await client.command(cancelPaneMode(pane));
  }
}
