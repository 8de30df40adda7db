/**
 * The rooms of one session, wired around its DriveContext: who calls whom (lib/session/README.md).
 * The Session facade builds them once and keeps the public API; this is the one place a new room
 * is plugged in. What the rooms need of the facade (evict, incident, stop the timers) comes in as
 * hooks, so no room holds the Session itself.
 */
import { StringTimeoutWatch } from '../emulator/string-timeout.js';
import { DEFAULT_STUCK_MS } from '../perceive/classify-screen.js';
import type { Profile } from '../perceive/profile.js';
import type { SessionStatus } from '../perceive/status.js';
import type { BackendListener } from './backend.js';
import { CostGuard } from './cost-guard.js';
import { DialogAnswerer } from './dialog-answerer.js';
import { driveListener } from './drive-listener.js';
import type { DriveContext } from './drive-signals.js';
import { DriveWatch } from './drive-watch.js';
import { InputGate } from './input-gate.js';
import { InputQueue } from './input-queue.js';
import { InputSender } from './input-sender.js';
import { Outcomes } from './outcomes.js';
import type { SessionInit } from './session-init.js';
import { Verdict } from './verdict.js';
import { WaitEngine } from './wait.js';

/** What the rooms ask of the facade. */
export interface SessionHooks {
  /** A cap fired: end the drive (Session.evict). */
  readonly evict: (cap: string) => Promise<void>;
  /** Something a human should find later (transcript and `incident` event). */
  readonly incident: (code: string, detail: Record<string, unknown>) => void;
  /** The drive ended: stop every timer. */
  readonly stopWatching: () => void;
}

export interface SessionRooms {
  readonly gate: InputGate;
  readonly input: InputSender;
  readonly queue: InputQueue;
  readonly waits: WaitEngine;
  readonly verdict: Verdict;
  readonly outcomes: Outcomes;
  readonly watch: DriveWatch;
  /** tmux abandons a string sequence after 5 s, which the mirror cannot see in the bytes: resync then. */
  readonly stringTimeout: StringTimeoutWatch;
  /** What the backend reports into. */
  readonly listener: BackendListener;
}

export function buildRooms(init: SessionInit, ctx: DriveContext, profile: Profile, hooks: SessionHooks): SessionRooms {
  const { clock, signals, mirror } = ctx;
  const startedAt = clock.now();
  const noop = (): void => undefined;
  const { evict } = hooks;
  const stuckMs = init.stuckMs ?? DEFAULT_STUCK_MS;
  const queue = new InputQueue(init.id);
  const gate = new InputGate(signals, clock, { beforeInput: init.beforeInput ?? noop, onAction: init.onAction ?? noop, limits: init.limits ?? {}, othersWaiting: () => queue.waitingCount > 0 });
  const outcomes = new Outcomes(ctx, init.notify ?? 'terminal', startedAt);
  const verdict = new Verdict(ctx, { profile, stuckMs }, outcomes, (status) => void answerer.answer(status));
  const status = (): SessionStatus => verdict.status();
  const waits = new WaitEngine(ctx, status, () => gate.outputOfSend());
  const answerer = new DialogAnswerer(ctx, { policy: init.autoAnswer ?? 'safe-only', answers: init.answers ?? { count: () => 0, record: noop } }, { gate, waits, outcomes, status });
  const costGuard = new CostGuard(ctx, { profile, maxCostUsd: init.maxCostUsd ?? null }, { gate, waits, outcomes, evict });
  const watch = new DriveWatch(
    ctx,
    { stuckMs, idleTtlMs: init.idleTtlMs, heartbeatNotifyMs: init.heartbeatNotifyMs ?? 0, notify: init.notify ?? 'terminal', sampleActivity: init.sampleActivity ?? (() => undefined), startedAt },
    { verdict, costGuard, evict },
  );
  const stringTimeout = new StringTimeoutWatch(clock, (reason) => {
    hooks.incident(reason, {});
    signals.backend?.resync(reason).catch(() => undefined);
  });
  const listener = driveListener(ctx, { beforeScreenChange: () => waits.takeBaseline(), afterOutput: (data) => {
      gate.afterOutput(data);
      waits.afterOutput();
    }, stringTimeout, watch, verdict, outcomes, stopWatching: hooks.stopWatching, incident: hooks.incident });
  mirror.onChange(() => {
    signals.lastChangeAt = clock.now();
    signals.wake();
    watch.armQuiet();
  });
  mirror.onDrain(() => signals.backend?.resumeOutput());
  return { gate, input: new InputSender(ctx, profile, gate, waits), queue, waits, verdict, outcomes, watch, stringTimeout, listener };
}
