/**
 * lib/wire: the serving host's protocol, shared by the host (lib/serve) and its clients
 * (lib/client, and through them the CLI and the MCP server). Newline-delimited JSON-RPC 2.0 on a
 * Unix socket: one request per line, one response per line, and host-to-client notifications
 * carrying subscription items. Pure: types, limits, encoders; no I/O (imports lib/common only,
 * and the library's public types).
 *
 * A connection opens with `hello` (the capability token); every other method needs it first.
 */
import type { ExitInfo } from '../common/exit-info.js';

export const PROTOCOL_VERSION = 1;

/** JSON-RPC 2.0 error codes; library errors travel as ServerError with the typed code in `data`. */
export const JSON_RPC = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  ServerError: -32000,
} as const;

export const WIRE_LIMITS = {
  /**
   * The longest request line read whole. The largest valid request is a sendText of 1 000 000
   * UTF-16 units (the MCP tool's bound), 6 MB when every unit is escaped as \uXXXX: 8 MiB holds it.
   */
  maxRequestBytes: 8 * 1024 * 1024,
  /** Of an oversize line, only this much is kept, to find its id (clients send `id` early). */
  headBytes: 64 * 1024,
  /** Requests are flat objects a level or two deep; deeper is refused unparsed. */
  maxDepth: 32,
  /**
   * The longest response line: a read's content is capped at 16 MiB (maxBytes) and a transcript
   * page at the ring's 64 MiB bound (base64 adds a third): past 96 MiB the caller is told to ask
   * for less (a smaller limit or maxBytes) instead of the host building a line it cannot bound.
   */
  maxResponseBytes: 96 * 1024 * 1024,
} as const;

export type WireId = string | number;

export interface WireRequest {
  readonly jsonrpc: '2.0';
  readonly id: WireId;
  readonly method: string;
  readonly params?: Readonly<Record<string, unknown>>;
}

export interface WireNotification {
  readonly jsonrpc: '2.0';
  readonly method: string;
  readonly params?: Readonly<Record<string, unknown>>;
}

/** What a library error carries over the wire: its stable code, its class, its content-free context. */
export interface WireErrorData {
  readonly code: string;
  readonly name: string;
  readonly context?: Readonly<Record<string, unknown>>;
}

export interface WireError {
  readonly code: number;
  readonly message: string;
  readonly data?: WireErrorData;
}

export interface WireResponse {
  readonly jsonrpc: '2.0';
  /** null when the request's id could not be read. */
  readonly id: WireId | null;
  readonly result?: unknown;
  readonly error?: WireError;
}

/** Host → client: one item of a subscription. */
export const ITEM_NOTIFICATION = 'item';
/** Host → client: the host ended this connection (its token was revoked or expired); params `{ reason }`. */
export const ENDED_NOTIFICATION = 'ended';
/** Client → host: stop the request with this id (a wait); params `{ id }`. */
export const CANCEL_NOTIFICATION = 'cancel';

export const CAPABILITY_CLASSES = ['observe', 'drive', 'admin'] as const;
export type CapabilityClass = (typeof CAPABILITY_CLASSES)[number];

/** What a token may do: verb classes, optionally only some drives (by name) or allow entries. */
export interface Scope {
  readonly classes: readonly CapabilityClass[];
  /** Only these drives (absent: any). */
  readonly drives?: readonly string[];
  /** Only drives launched from these allow entries (absent: any). */
  readonly allowIds?: readonly string[];
  /** Wall-clock ms after which the token is refused (absent: never). */
  readonly expiresAt?: number;
}

/** Who a connection is, as the host established it from the token (never from the caller). */
export interface Identity {
  /** The token's id (never the token): `owner`, `local` (in-process, no host) or `tk_…`. */
  readonly tokenId: string;
  readonly scope: Scope;
  readonly label?: string;
}

export interface HostInfo {
  readonly pid: number;
  /** Wall-clock ms at which this host started serving: a new value means a new host (takeover). */
  readonly startedAt: number;
  readonly dataDir: string;
}

export interface HelloResult {
  readonly protocol: number;
  readonly host: HostInfo;
  readonly identity: Identity;
}

/**
 * An item of a drive's feed. `journal` items are the drive's stored, content-free journal events:
 * their seq is durable (it survives every host) and a subscription resumes after the last one it
 * saw, with nothing missing. The other items are live: sent while they happen, never replayed;
 * after a host change the journal's `reattach` event says that live items may have been missed.
 */
export type FeedItem =
  | { readonly type: 'journal'; readonly seq: number; readonly at: number; readonly kind: string; readonly tags: Readonly<Record<string, unknown>> }
  /** Output arrived: the transcript seq and byte count, never the bytes (read them with `transcript`). */
  | { readonly type: 'output'; readonly seq: number; readonly bytes: number }
  | { readonly type: 'state'; readonly status: unknown }
  | { readonly type: 'attention'; readonly attention: unknown }
  | { readonly type: 'exit'; readonly exit: ExitInfo }
  | { readonly type: 'outcome'; readonly outcome: unknown }
  | { readonly type: 'operators'; readonly clients: readonly string[] }
  /** An operator took the drive over (`held`), or let go: meanwhile other callers' input is refused (OPERATOR_HOLD). */
  | { readonly type: 'hold'; readonly held: boolean; readonly by: string; readonly how: 'console' | 'attach'; readonly since: number }
  | { readonly type: 'notification'; readonly notification: unknown }
  | { readonly type: 'lost'; readonly reason: string }
  | { readonly type: 'closed'; readonly how: 'killed' | 'detached' }
  /** The host ended the subscription: no more items come on it. */
  | { readonly type: 'ended'; readonly reason: FeedEndReason };

export type FeedEndReason = 'unsubscribed' | 'host_closing' | 'token_revoked' | 'token_expired' | 'drive_closed';

export interface ItemParams {
  readonly subscription: number;
  readonly drive: string;
  readonly item: FeedItem;
}

/** Verbs a client may send again after a host change: they change nothing on the drive. */
export const IDEMPOTENT_VERBS: ReadonlySet<string> = new Set(['whoami', 'list', 'read', 'status', 'transcript', 'events', 'attachCommand', 'tokens']);

export function isWireId(v: unknown): v is WireId {
  return typeof v === 'string' || (typeof v === 'number' && Number.isSafeInteger(v));
}
