/**
 * What a backend reports into (the BackendListener port), wired to the session's rooms: pane
 * bytes go to the transcript and the mirror (kept lean: this is the output path), resyncs rebuild
 * the mirror, an exit or a lost channel changes the phase (with its reason) and settles the
 * outcome. An object of own functions, so a wrapper may spread it and replace one of them.
 */
import { isMachineToken } from '../common/machine-token.js';
import type { StringTimeoutWatch } from '../emulator/string-timeout.js';
import { HISTORY_RESYNC, type BackendListener, type ExitInfo } from './backend.js';
import type { DriveContext } from './drive-signals.js';
import type { DriveWatch } from './drive-watch.js';
import type { Outcomes } from './outcomes.js';
import type { Verdict } from './verdict.js';

export interface DriveListenerRooms {
  /** The screen is about to change (output, a resync, a resize): the waits' input baseline is read first. */
  readonly beforeScreenChange: () => void;
  /** An output's event has been emitted (the caller saw it): bookkeeping kept off the echo's way runs now. */
  readonly afterOutput: (data: Uint8Array) => void;
  readonly stringTimeout: StringTimeoutWatch;
  readonly watch: DriveWatch;
  readonly verdict: Verdict;
  readonly outcomes: Outcomes;
  /** The drive ended: stop every timer. */
  readonly stopWatching: () => void;
  /** Something a human should be able to find later (transcript and `incident` event). */
  readonly incident: (code: string, detail: Record<string, unknown>) => void;
}

const LF = 0x0a;

export function driveListener(ctx: DriveContext, rooms: DriveListenerRooms): BackendListener {
  const { clock, signals, mirror, transcript, events } = ctx;
  const ended = (): void => {
    rooms.stopWatching();
    rooms.verdict.publish();
  };
  return {
    output(data) {
      signals.lastOutputAt = clock.now();
      const seq = transcript.append('output', data);
      rooms.beforeScreenChange();
      mirror.write(data);
      rooms.stringTimeout.observe(mirror.parserInString);
      if (mirror.needsDrain) signals.backend?.pauseOutput();
      if (signals.textListeners.size > 0) {
        const text = signals.outputText.push(data);
        if (text) for (const l of signals.textListeners) l(text);
      } else signals.outputText.skip();
      // The echo of the last input ends with its line feeds (a text wait in flight counts them itself).
      for (let at = 0; signals.echoLines > 0; at++) {
        at = data.indexOf(LF, at);
        if (at < 0) break;
        signals.echoLines -= 1;
      }
      signals.wake();
      rooms.watch.armQuiet();
      events.emit('output', data, seq);
      rooms.afterOutput(data);
    },
    resync(capture, reason) {
      const changedBefore = signals.lastChangeAt;
      rooms.beforeScreenChange();
      // tmux's string timeout reset its parser (input_reset): pen, charsets and DECSC save start over,
      // and it is in the ground state although `capture-pane -P` still reports the abandoned string
      // (input_reset does not drain since_ground): nothing of either is carried into the mirror.
      mirror.rebuild(reason === 'parser_timeout' ? { ...capture, continuous: false, pending: new Uint8Array(0) } : capture);
      // `lines`: the rows the capture brought, history included (what a rebuild cost grows with).
      transcript.append('resync', undefined, { reason, cols: capture.cols, rows: capture.rows, lines: lineCount(capture.main) });
      // Rebuilding the mirror at attach, or with the history a takeover's attach left out, is not
      // the program producing output (the rebuild's own change event, emitted synchronously, is undone here).
      signals.lastChangeAt = reason === 'attach' || reason === HISTORY_RESYNC ? changedBefore : clock.now();
      signals.wake();
      events.emit('resync', reason);
    },
    exit(info) {
      if (signals.phase !== 'live') return;
      const reason = exitReason(info);
      transcript.append('exit', undefined, { code: info.code, signal: info.signal });
      signals.setPhase('exited', reason, info);
      events.emit('exit', info);
      ended();
      rooms.outcomes.settle(info.code === 0 ? 'done' : 'failed', reason);
    },
    lost(reason) {
      if (signals.phase !== 'live' && signals.phase !== 'exited') return;
      transcript.append('incident', undefined, { code: 'lost', reason });
      signals.setPhase('lost', reason);
      events.emit('lost', reason);
      ended();
      rooms.outcomes.settle('failed', isMachineToken(reason) ? reason : 'control_lost');
    },
    incident(code, detail) {
      rooms.incident(code, detail);
    },
    resized(g) {
      rooms.beforeScreenChange();
      mirror.resize(g.cols, g.rows);
      signals.lastChangeAt = clock.now();
      signals.wake();
    },
    operators(clients) {
      signals.operators = clients;
      signals.noteState({ operators: clients.length });
      events.emit('operators', clients);
    },
  };
}

/** The machine reason of an exit: its outcome's reason too. */
function exitReason(info: ExitInfo): string {
  if (info.code === 0) return 'exit_0';
  if (info.code !== null) return 'nonzero_exit';
  return info.signal !== null ? 'signal' : 'exit_unknown';
}

/** Rows of a capture (\n-separated, no final \n). */
function lineCount(main: Uint8Array): number {
  let lines = 1;
  for (let at = main.indexOf(0x0a); at >= 0; at = main.indexOf(0x0a, at + 1)) lines++;
  return lines;
}
