/**
 * The port a backend implements: how a session's program runs and how bytes and keys reach it.
 * Sessions, perception and the public API see only this interface, never tmux or node-pty.
 */
import type { Disposable } from '../common/disposable.js';
import type { ExitInfo } from '../common/exit-info.js';
import type { PaneCapture } from '../control/pane-capture.js';


export type SignalName = 'interrupt' | 'terminate' | 'kill' | 'hangup';

/** What a backend reports; the session wires these into its mirror, transcript and events. */
export interface BackendListener {
  /** Pane bytes, in order, exactly as the program wrote them. */
  output(data: Uint8Array): void;
  /** The mirror must be rebuilt from this capture; later output continues it exactly. */
  resync(capture: PaneCapture, reason: string): void;
  /** The program ended (the drive's server may still be alive to show its last screen). */
  exit(info: ExitInfo): void;
  /** The channel to the drive is gone (server killed, control client lost). */
  lost(reason: string): void;
  /** Something a human should be able to find later (malformed stream, cleanup failure). */
  incident(code: string, detail: Record<string, unknown>): void;
  /** The pane took a new size with no capture to follow (spawn): resize the mirror in stream order. */
  resized(geometry: PaneGeometry): void;
  /** The set of operator (non-control) clients attached to the drive changed. */
  operators(clients: readonly string[]): void;
}

/** capture-pane -p -e -N of the visible screen, and tmux's cursor. */
export interface VisibleGrid {
  readonly capture: Uint8Array;
  readonly cursor: { readonly x: number; readonly y: number };
}

export interface PaneGeometry {
  readonly cols: number;
  readonly rows: number;
}

export interface DriveBackend {
  readonly kind: 'tmux' | 'spawn';
  readonly durable: boolean;
  /** Sends text byte-exact; `paste` uses the paste buffer (bracketed when the program asked). */
  sendText(text: string, opts: { readonly paste: boolean }): Promise<void>;
  sendKeys(keys: readonly string[]): Promise<void>;
  resize(cols: number, rows: number): Promise<void>;
  signal(name: SignalName): Promise<void>;
  /** A fresh capture of the pane (the resync snapshot), without rebuilding anything. */
  capture(): Promise<PaneCapture>;
  /** Forces a resync: the listener's `resync` is called with a new capture (HISTORY_RESYNC: see there). */
  resync(reason: string): Promise<void>;
  /**
   * Captures the visible grid as tmux holds it and runs `compare` on it while later output is held
   * back, so the mirror and the capture show the same moment (fidelity checks).
   */
  compareGrid<T>(compare: (grid: VisibleGrid) => T | Promise<T>): Promise<T>;
  /** Host-side pid of the pane's process, when known. */
  panePid(): number | undefined;
  /** Stops and restarts reading the program's output (mirror backpressure). */
  pauseOutput(): void;
  resumeOutput(): void;
  /** Ends the program, its process tree and the drive's server; resolves once verified. */
  kill(): Promise<void>;
  /** Lets go of the drive and leaves it running (durable backends). */
  detach(): Promise<void>;
  attachCommand(readOnly: boolean): string[];
}

export type { Disposable, ExitInfo };

/**
 * The resync reason that brings in the pane's history after a first rebuild that left it out (a
 * takeover's adopted observer: lib/driver/reconcile.ts). Like the attach's, not program output.
 */
export const HISTORY_RESYNC = 'history';
