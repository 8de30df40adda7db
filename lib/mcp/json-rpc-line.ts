/**
 * One line of the MCP stdio stream judged before the SDK sees it: a JSON-RPC message to deliver,
 * an error reply to send, or something to drop with a log line. The SDK's own stdio transport
 * closes (and so ends the server) on a line over 10 MiB and answers no malformed line; here every
 * request whose id can be read gets a JSON-RPC error carrying that id, and nothing a client sends
 * can stop the server. Pure: bytes in, a verdict out; never throws on input.
 *
 * Error replies never repeat what the line carried (it may be a secret, or huge): messages are
 * fixed text plus the paths and codes of schema issues whose path segments are plain names.
 */
import { oversizeLineError, parseJsonLine, readIdLeniently, type LineError, type ReadableId } from '../wire/json-line.js';
import { CallToolRequestSchema, InitializeRequestSchema, JSONRPCMessageSchema, ListToolsRequestSchema, PingRequestSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** The JSON-RPC 2.0 error codes this layer answers with (the SDK adds -32601 and its own). */
export const JsonRpcCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  InvalidParams: -32602,
} as const;
type JsonRpcCode = (typeof JsonRpcCode)[keyof typeof JsonRpcCode];

export { readIdLeniently, type ReadableId };

export const LINE_LIMITS = {
  /**
   * The longest line read whole. The largest valid request here is terminal_session_send_text with
   * 1 000 000 UTF-16 units of text, 6 MB when every unit is escaped as \uXXXX; 8 MiB holds it.
   */
  maxLineBytes: 8 * 1024 * 1024,
  /** Of an oversize line, only this much is kept, to find its id (clients send `id` early). */
  headBytes: 64 * 1024,
  /** MCP messages nest a few levels (tool arguments here are flat); deeper is refused unparsed. */
  maxDepth: 64,
} as const;


export interface ErrorReply {
  readonly jsonrpc: '2.0';
  /** Absent when the line's id could not be read (MCP: id optional on errors; JSON-RPC says null). */
  readonly id?: ReadableId;
  readonly error: { readonly code: number; readonly message: string };
}

export type LineVerdict =
  | { readonly kind: 'message'; readonly message: JSONRPCMessage }
  | { readonly kind: 'reply'; readonly reply: ErrorReply | readonly ErrorReply[]; readonly log: string }
  | { readonly kind: 'drop'; readonly log: string }
  | { readonly kind: 'empty' };

/** Requests whose params the server validates before its handlers see them (-32602, not -32603). */
const KNOWN_REQUESTS: Readonly<Record<string, { safeParse(v: unknown): { success: boolean; error?: { issues: readonly SchemaIssue[] } } }>> = {
  initialize: InitializeRequestSchema,
  ping: PingRequestSchema,
  'tools/list': ListToolsRequestSchema,
  'tools/call': CallToolRequestSchema,
};

interface SchemaIssue {
  readonly code?: string;
  readonly path?: readonly PropertyKey[];
}

function errorReply(code: JsonRpcCode, message: string, id: ReadableId | undefined): ErrorReply {
  return { jsonrpc: '2.0', ...(id === undefined ? {} : { id }), error: { code, message } };
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function readableId(v: unknown): ReadableId | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  return undefined;
}

/** `params.name: invalid_type; …` with only plain-name path segments (a key may be anything). */
function describeIssues(issues: readonly SchemaIssue[]): string {
  return issues
    .slice(0, 3)
    .map((issue) => {
      const path = (issue.path ?? []).map((p) => (typeof p === 'number' || (typeof p === 'string' && /^[A-Za-z_][A-Za-z0-9_]{0,31}$/.test(p)) ? String(p) : '…')).join('.');
      return `${path || '(message)'}: ${typeof issue.code === 'string' && /^[a-z_]{1,32}$/.test(issue.code) ? issue.code : 'invalid'}`;
    })
    .join('; ');
}

// ---- verdicts -------------------------------------------------------------------------------

/** A line the shared decoder refused (lib/wire/json-line.ts): answered when its id was readable. */
export function judgeLineError(err: LineError): LineVerdict {
  const id = err.id;
  switch (err.fault) {
    case 'too_large': {
      const why = `a line of over ${LINE_LIMITS.maxLineBytes} bytes is too large`;
      if (id === undefined) return { kind: 'drop', log: `${why}: skipped (no id readable in its first ${LINE_LIMITS.headBytes} bytes)` };
      return { kind: 'reply', reply: errorReply(JsonRpcCode.InvalidRequest, `Invalid Request: request too large (over ${LINE_LIMITS.maxLineBytes} bytes)`, id), log: `${why}: answered with an error` };
    }
    case 'not_utf8':
      return { kind: 'reply', reply: errorReply(JsonRpcCode.ParseError, 'Parse error: the line is not valid UTF-8', id), log: `refused a line of ${err.bytes} bytes: not valid UTF-8` };
    case 'too_deep':
      return { kind: 'reply', reply: errorReply(JsonRpcCode.InvalidRequest, `Invalid Request: nested deeper than ${LINE_LIMITS.maxDepth} levels`, id), log: `refused a line of ${err.bytes} bytes: nested too deep` };
    case 'not_json':
      return { kind: 'reply', reply: errorReply(JsonRpcCode.ParseError, 'Parse error: the line is not valid JSON', id), log: `refused a line of ${err.bytes} bytes: not valid JSON` };
  }
}

/** An oversize line, from its first bytes: answered when its id is in them, else dropped; logged either way. */
export function judgeOversizeLine(head: Uint8Array, bytesSoFar: number): LineVerdict {
  return judgeLineError(oversizeLineError(head, bytesSoFar, LINE_LIMITS.maxLineBytes));
}

/** One element of a batch: the error it gets, or undefined for a notification or a response. */
function batchElementError(element: unknown): ErrorReply | undefined {
  if (isPlainObject(element)) {
    const isRequest = 'method' in element && 'id' in element;
    const isResponse = !('method' in element) && ('result' in element || 'error' in element);
    const isNotification = 'method' in element && !('id' in element);
    if (isNotification || isResponse) return undefined;
    if (isRequest) return errorReply(JsonRpcCode.InvalidRequest, 'Invalid Request: batches are not supported (MCP); send each request on its own line', readableId(element.id));
  }
  return errorReply(JsonRpcCode.InvalidRequest, 'Invalid Request: not a JSON-RPC message', isPlainObject(element) ? readableId(element.id) : undefined);
}

/** A complete line (without its newline), through the shared decoder's parse. */
export function judgeLine(bytes: Uint8Array): LineVerdict {
  const parsed = parseJsonLine(bytes, LINE_LIMITS.maxDepth);
  if (parsed.kind === 'blank') return { kind: 'empty' };
  if (parsed.kind === 'error') return judgeLineError(parsed.error);
  return judgeValue(parsed.value, bytes.length);
}

/** A decoded JSON value of `size` bytes: a message to deliver, or what to answer. */
export function judgeValue(value: unknown, size: number): LineVerdict {
  if (Array.isArray(value)) {
    if (value.length === 0) return { kind: 'reply', reply: errorReply(JsonRpcCode.InvalidRequest, 'Invalid Request: an empty batch', undefined), log: 'refused an empty batch' };
    const replies = value.map(batchElementError).filter((r): r is ErrorReply => r !== undefined);
    const log = `refused a batch of ${value.length} (MCP has no batches)`;
    return replies.length === 0 ? { kind: 'drop', log } : { kind: 'reply', reply: replies, log };
  }
  return judgeMessage(value, size);
}

function judgeMessage(value: unknown, size: number): LineVerdict {
  const refuse = (code: JsonRpcCode, message: string, id: ReadableId | undefined): LineVerdict => ({ kind: 'reply', reply: errorReply(code, message, id), log: `refused a message of ${size} bytes: ${message}` });
  if (!isPlainObject(value)) return refuse(JsonRpcCode.InvalidRequest, 'Invalid Request: not a JSON-RPC object', undefined);
  const hasId = 'id' in value;
  const id = readableId(value.id);
  if (hasId && id === undefined) return refuse(JsonRpcCode.InvalidRequest, 'Invalid Request: id must be a string or a number', undefined);
  if (value.jsonrpc !== '2.0') return refuse(JsonRpcCode.InvalidRequest, 'Invalid Request: jsonrpc must be "2.0"', id);
  if (typeof id === 'number' && !Number.isSafeInteger(id)) return refuse(JsonRpcCode.InvalidRequest, 'Invalid Request: a numeric id must be an integer', id);
  const drop = (why: string): LineVerdict => ({ kind: 'drop', log: `dropped a ${hasId ? 'response' : 'notification'} of ${size} bytes: ${why}` });
  if ('method' in value) {
    if (typeof value.method !== 'string') return hasId ? refuse(JsonRpcCode.InvalidRequest, 'Invalid Request: method must be a string', id) : drop('method is not a string');
    if ('result' in value || 'error' in value) return hasId ? refuse(JsonRpcCode.InvalidRequest, 'Invalid Request: a request carries no result or error', id) : drop('a notification carries no result or error');
    if ('params' in value && !isPlainObject(value.params)) return hasId ? refuse(JsonRpcCode.InvalidParams, 'Invalid params: params must be an object', id) : drop('params is not an object');
    const shape = JSONRPCMessageSchema.safeParse(value);
    if (!shape.success) return hasId ? refuse(JsonRpcCode.InvalidRequest, `Invalid Request: ${describeIssues(shape.error.issues as readonly SchemaIssue[])}`, id) : drop('not a valid notification');
    const known = hasId ? KNOWN_REQUESTS[value.method] : undefined;
    if (known) {
      const params = known.safeParse({ method: value.method, ...('params' in value ? { params: value.params } : {}) });
      if (!params.success) return refuse(JsonRpcCode.InvalidParams, `Invalid params: ${describeIssues(params.error?.issues ?? [])}`, id);
    }
    return { kind: 'message', message: shape.data };
  }
  if (!('result' in value) && !('error' in value)) return refuse(JsonRpcCode.InvalidRequest, 'Invalid Request: neither a request (method) nor a response (result, error)', id);
  // A response to a request of ours: never answered (JSON-RPC), delivered when well formed.
  const shape = JSONRPCMessageSchema.safeParse(value);
  return shape.success ? { kind: 'message', message: shape.data } : drop('not a valid response');
}
