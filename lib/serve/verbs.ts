/**
 * The gate's verbs as one table: each the class a token needs (observe, drive, admin), its params
 * as a strict valibot schema (an unknown key is refused; the gate strips `_`-prefixed ones first),
 * the drive it targets (checked against the token's drives and allow entries), and a body that is
 * one call of the public Driver/Session API. Bodies return JSON values; screen text they return is
 * redacted here (the config's redactSecrets), so nothing unredacted leaves the host.
 */
import * as v from 'valibot';
import type { Driver } from '../driver/driver.js';
import { INPUT_QUEUE_LIMITS, type InputTurnOptions, type Session } from '../session/session.js';
import { UsageError } from '../common/errors.js';
import { checkRegexSafety } from '../perceive/regex-safety.js';
import { formatAsciicast, toAsciicast } from '../session/asciicast.js';
import { redactStrings, redactText } from '../policy/redact-values.js';
import type { CapabilityClass, Identity } from '../wire/protocol.js';
import { toWireEntry } from '../wire/wire-values.js';
import { allowsDrive, isWithin, MintRequestSchema, scopeOf } from './capabilities.js';
import { CapabilityError, HostError } from '../wire/host-error.js';
import type { TokenStore } from './token-store.js';

export interface VerbContext {
  readonly driver: Driver;
  readonly identity: Identity;
  /** Aborted when the caller cancels or its connection ends. */
  readonly signal: AbortSignal;
  /** Whose `diff` baseline a read is against: the token and the connection. */
  readonly caller: string;
  readonly redact: boolean;
  /** Absent in-process (no host): mint, revoke and tokens need a serving host. */
  readonly tokens: TokenStore | undefined;
  readonly subscribe: (drive: string, afterSeq: number, output: boolean) => number;
  readonly unsubscribe: (subscription: number) => boolean;
  readonly now: () => number;
  /**
   * The signal a drive-class call waits for its input turn under: aborted when the caller cancels
   * or goes, or when an operator takes the drive over (then with OPERATOR_HOLD as its reason).
   */
  readonly inputSignal: (drive: string) => AbortSignal;
  /** This caller takes `drive` over (`tmux-drive attach`); OPERATOR_HOLD when another holds it. */
  readonly hold: (drive: string) => { readonly since: number };
  readonly release: (drive: string) => boolean;
}

export interface Verb<S extends v.GenericSchema = v.GenericSchema> {
  /** 'any': every valid token (introspection). */
  readonly cls: CapabilityClass | 'any';
  readonly params: S;
  /** The drive the call targets, checked against the token's scope before `run`. */
  readonly drive?: (p: v.InferOutput<S>) => string;
  run(ctx: VerbContext, p: v.InferOutput<S>): unknown;
}

const ID = v.pipe(v.string(), v.minLength(1), v.maxLength(64));
const int = (min: number, max: number) => v.pipe(v.number(), v.integer(), v.minValue(min), v.maxValue(max));
const DIMENSION = int(2, 1000);
/** As the MCP tools bound them: execve's 128 KiB per word, PATH_MAX, a screen's worth of text. */
const ARG_CHARS = 16 * 1024;
const PATH_CHARS = 4095;
const FOR_TEXT_CHARS = 4096;

/** How long an input may wait behind other callers' input to its drive (lib/session/input-queue.ts). */
const TURN_TIMEOUT = v.optional(int(0, INPUT_QUEUE_LIMITS.maxTurnTimeoutMs));

function turn(ctx: VerbContext, drive: string, turnTimeoutMs: number | undefined): InputTurnOptions {
  return { signal: ctx.inputSignal(drive), ...(turnTimeoutMs !== undefined ? { turnTimeoutMs } : {}) };
}

const verb = <S extends v.GenericSchema>(def: Verb<S>): Verb => def as unknown as Verb;
const byId = (p: { readonly id: string }): string => p.id;

function session(ctx: VerbContext, id: string): Session {
  return ctx.driver.get(id);
}

function driveOutcome(s: Session): { driveOutcome?: unknown } {
  const o = s.outcome;
  return o ? { driveOutcome: o } : {};
}

function textPattern(p: string | { readonly regex: string; readonly flags?: string | undefined }): string | RegExp {
  if (typeof p === 'string') return p;
  const flags = p.flags ?? '';
  // A caller's pattern runs on the host against every output chunk: only a provably tame one.
  const issues = checkRegexSafety(p.regex, flags);
  if (issues.length > 0) throw new UsageError('BAD_ARGUMENT', `forText regex refused: ${issues.map((i) => i.message).join('; ')}`);
  return new RegExp(p.regex, flags);
}

function needTokens(ctx: VerbContext): TokenStore {
  if (!ctx.tokens) throw new HostError('NOT_SERVING', 'tokens are minted and revoked by a serving host: start one with tmux-drive serve');
  return ctx.tokens;
}

export const VERBS: Readonly<Record<string, Verb>> = {
  whoami: verb({ cls: 'any', params: v.strictObject({}), run: (ctx) => ({ identity: ctx.identity }) }),

  list: verb({
    cls: 'observe',
    params: v.strictObject({}),
    run: (ctx) => ({ sessions: ctx.driver.list().filter((i) => allowsDrive(ctx.identity.scope, i.id, i.allowId)) }),
  }),

  create: verb({
    cls: 'admin',
    params: v.strictObject({
      allowId: ID,
      args: v.optional(v.pipe(v.array(v.pipe(v.string(), v.maxLength(ARG_CHARS))), v.maxLength(256))),
      project: v.optional(v.pipe(v.string(), v.maxLength(64))),
      name: v.optional(ID),
      cwd: v.optional(v.pipe(v.string(), v.maxLength(PATH_CHARS))),
      cols: v.optional(DIMENSION),
      rows: v.optional(DIMENSION),
      env: v.optional(v.pipe(v.record(v.pipe(v.string(), v.maxLength(128)), v.pipe(v.string(), v.maxLength(ARG_CHARS))), v.check((e) => Object.keys(e).length <= 64, 'at most 64 variables'))),
      objective: v.optional(v.pipe(v.string(), v.maxLength(4000))),
    }),
    async run(ctx, p) {
      const scope = ctx.identity.scope;
      if (scope.allowIds !== undefined && !scope.allowIds.includes(p.allowId)) {
        throw new CapabilityError('NOT_PERMITTED', `token ${ctx.identity.tokenId} may not launch allow entry "${p.allowId}"`, { tokenId: ctx.identity.tokenId, allowId: p.allowId });
      }
      if (scope.drives !== undefined && (p.name === undefined || !scope.drives.includes(p.name))) {
        throw new CapabilityError('NOT_PERMITTED', `token ${ctx.identity.tokenId} may only create the drives it names (pass name)`, { tokenId: ctx.identity.tokenId });
      }
      const s = await ctx.driver.create(p);
      const info = ctx.driver.list().find((i) => i.id === s.id);
      const defaults = ctx.driver.config.defaults;
      return { id: s.id, ...info, cols: p.cols ?? defaults.cols, rows: p.rows ?? defaults.rows };
    },
  }),

  read: verb({
    cls: 'observe',
    params: v.strictObject({
      id: ID,
      mode: v.optional(v.picklist(['digest', 'diff', 'full'])),
      format: v.optional(v.picklist(['text', 'ansi', 'html'])),
      scrollback: v.optional(v.union([int(0, 1_000_000), v.literal('all')])),
      maxBytes: v.optional(int(64, 16_777_216)),
    }),
    drive: byId,
    run(ctx, { id, ...opts }) {
      const r = session(ctx, id).read({ ...opts, caller: ctx.caller });
      const red = redactText(r.content, ctx.redact, r.format);
      return { ...r, content: red.text, redactions: r.redactions + red.count };
    },
  }),

  sendText: verb({
    cls: 'drive',
    params: v.strictObject({ id: ID, text: v.pipe(v.string(), v.maxLength(1_000_000)), submit: v.optional(v.boolean()), paste: v.optional(v.picklist(['auto', 'always', 'never'])), settle: v.optional(int(0, 600_000)), turnTimeoutMs: TURN_TIMEOUT }),
    drive: byId,
    async run(ctx, { id, text, ...opts }) {
      await session(ctx, id).sendText(text, { ...opts, signal: ctx.inputSignal(id) });
      return { id, sent: text.length, submit: opts.submit === true };
    },
  }),

  sendKeys: verb({
    cls: 'drive',
    params: v.strictObject({ id: ID, keys: v.union([v.pipe(v.string(), v.minLength(1), v.maxLength(64)), v.pipe(v.array(v.pipe(v.string(), v.minLength(1), v.maxLength(64))), v.minLength(1), v.maxLength(1000))]), turnTimeoutMs: TURN_TIMEOUT }),
    drive: byId,
    async run(ctx, { id, keys, turnTimeoutMs }) {
      await session(ctx, id).sendKeys(keys, turn(ctx, id, turnTimeoutMs));
      return { id, keys: typeof keys === 'string' ? [keys] : keys };
    },
  }),

  wait: verb({
    cls: 'observe',
    params: v.strictObject({
      id: ID,
      forIdleMs: v.optional(int(0, 600_000)),
      forText: v.optional(v.union([v.pipe(v.string(), v.minLength(1), v.maxLength(FOR_TEXT_CHARS)), v.strictObject({ regex: v.pipe(v.string(), v.minLength(1), v.maxLength(512)), flags: v.optional(v.pipe(v.string(), v.regex(/^[imsu]{0,4}$/))) })])),
      forExit: v.optional(v.boolean()),
      timeoutMs: v.optional(int(1, 600_000)),
    }),
    drive: byId,
    async run(ctx, { id, forText, ...opts }) {
      const s = session(ctx, id);
      const r = await s.wait({ ...opts, ...(forText !== undefined ? { forText: textPattern(forText) } : {}), signal: ctx.signal });
      return redactStrings({ id, ...r, ...driveOutcome(s) }, ctx.redact);
    },
  }),

  status: verb({
    cls: 'observe',
    params: v.strictObject({ id: ID }),
    drive: byId,
    run(ctx, { id }) {
      const s = session(ctx, id);
      return redactStrings({ id, lifecycle: s.lifecycle, ...s.status(), ...driveOutcome(s) }, ctx.redact);
    },
  }),

  resize: verb({
    cls: 'drive',
    params: v.strictObject({ id: ID, cols: DIMENSION, rows: DIMENSION, turnTimeoutMs: TURN_TIMEOUT }),
    drive: byId,
    async run(ctx, { id, cols, rows, turnTimeoutMs }) {
      await session(ctx, id).resize(cols, rows, turn(ctx, id, turnTimeoutMs));
      return { id, cols, rows };
    },
  }),

  signal: verb({
    cls: 'drive',
    params: v.strictObject({ id: ID, signal: v.picklist(['interrupt', 'terminate', 'kill', 'hangup']), turnTimeoutMs: TURN_TIMEOUT }),
    drive: byId,
    async run(ctx, { id, signal, turnTimeoutMs }) {
      await session(ctx, id).signal(signal, turn(ctx, id, turnTimeoutMs));
      return { id, signal };
    },
  }),

  kill: verb({
    cls: 'admin',
    params: v.strictObject({ id: ID }),
    drive: byId,
    async run(ctx, { id }) {
      await session(ctx, id).kill();
      return { id, killed: true };
    },
  }),

  prune: verb({
    cls: 'admin',
    params: v.strictObject({ ids: v.optional(v.pipe(v.array(ID), v.maxLength(1000))) }),
    async run(ctx, { ids }) {
      // Finished drives carry no live allow entry to check a scope against: a token scoped to
      // drives may prune only those it names; one scoped to allow entries, none.
      const { scope, tokenId } = ctx.identity;
      if (scope.drives !== undefined || scope.allowIds !== undefined) {
        const outside = ids === undefined || scope.allowIds !== undefined ? undefined : ids.find((id) => !scope.drives?.includes(id));
        if (ids === undefined || scope.allowIds !== undefined || outside !== undefined) {
          throw new CapabilityError('NOT_PERMITTED', `token ${tokenId} is scoped: prune needs an unscoped admin token, or the ids of drives in its scope`, { tokenId, ...(outside !== undefined ? { drive: outside } : {}) });
        }
      }
      return { pruned: await ctx.driver.prune(ids !== undefined ? { ids } : {}) };
    },
  }),

  transcript: verb({
    cls: 'observe',
    params: v.strictObject({ id: ID, after: v.optional(int(0, Number.MAX_SAFE_INTEGER)), limit: v.optional(int(1, 1_000_000)), asciicast: v.optional(v.boolean()) }),
    drive: byId,
    run(ctx, { id, asciicast, ...page }) {
      const s = session(ctx, id);
      const entries = s.transcript(page);
      if (asciicast !== true) return { id, entries: entries.map(toWireEntry) };
      // The host holds only what it saw since it attached: when no output arrived since, the
      // screen at that moment is the recording's first frame.
      const screen = s.read({ format: 'ansi', caller: ctx.caller });
      const sawOutput = entries.some((e) => e.kind === 'output');
      const cast = toAsciicast(entries, {
        cols: screen.cols,
        rows: screen.rows,
        title: id,
        redact: ctx.redact,
        ...(sawOutput || page.after !== undefined ? {} : { initialScreen: screen.content }),
        ...(entries.length === 0 ? { startTime: ctx.now() } : {}),
      });
      return { id, asciicast: formatAsciicast(cast) };
    },
  }),

  ack: verb({
    cls: 'observe',
    params: v.strictObject({ id: ID, seq: int(0, Number.MAX_SAFE_INTEGER) }),
    drive: byId,
    run(ctx, { id, seq }) {
      session(ctx, id).ack(seq);
      return { id, acked: seq };
    },
  }),

  // Admin, not observe: a tmux client on the drive's server can run any tmux command (run-shell
  // included), read-only or not. Only the data dir's own user can use the argv anyway (0700).
  attachCommand: verb({
    cls: 'admin',
    params: v.strictObject({ id: ID, readOnly: v.optional(v.boolean()) }),
    drive: byId,
    run: (ctx, { id, readOnly }) => ({ id, argv: session(ctx, id).attachCommand({ readOnly: readOnly === true }) }),
  }),

  // Admin, like attachCommand: the person at a terminal. A drive token (an agent's) cannot hold
  // other callers off; the console's take-over (drive class) is the console's own (drive-socket.ts).
  hold: verb({
    cls: 'admin',
    params: v.strictObject({ id: ID }),
    drive: byId,
    run(ctx, { id }) {
      session(ctx, id); // SESSION_NOT_FOUND before a hold on nothing
      return { id, held: true, since: ctx.hold(id).since };
    },
  }),

  release: verb({
    cls: 'admin',
    params: v.strictObject({ id: ID }),
    drive: byId,
    run: (ctx, { id }) => ({ id, released: ctx.release(id) }),
  }),

  events: verb({
    cls: 'observe',
    params: v.strictObject({ id: ID, afterSeq: v.optional(int(0, Number.MAX_SAFE_INTEGER)), limit: v.optional(int(1, 1000)) }),
    drive: byId,
    run: (ctx, { id, afterSeq, limit }) => ({ id, events: ctx.driver.events(id, { ...(afterSeq !== undefined ? { afterSeq } : {}), ...(limit !== undefined ? { limit } : {}) }).map(({ sessionId: _s, ...e }) => e) }),
  }),

  subscribe: verb({
    cls: 'observe',
    params: v.strictObject({ id: ID, afterSeq: v.optional(int(0, Number.MAX_SAFE_INTEGER)), output: v.optional(v.boolean()) }),
    drive: byId,
    run(ctx, { id, afterSeq, output }) {
      session(ctx, id); // SESSION_NOT_FOUND / LEASE_HELD before anything is set up
      return { subscription: ctx.subscribe(id, afterSeq ?? 0, output === true), drive: id };
    },
  }),

  unsubscribe: verb({
    cls: 'observe',
    params: v.strictObject({ subscription: int(0, Number.MAX_SAFE_INTEGER) }),
    run: (ctx, { subscription }) => ({ subscription, ended: ctx.unsubscribe(subscription) }),
  }),

  mint: verb({
    cls: 'admin',
    params: MintRequestSchema,
    run(ctx, request) {
      const tokens = needTokens(ctx);
      const scope = scopeOf(request, ctx.now());
      if (!isWithin(scope, ctx.identity.scope)) {
        throw new CapabilityError('NOT_PERMITTED', `token ${ctx.identity.tokenId} may only mint tokens within its own scope`, { tokenId: ctx.identity.tokenId });
      }
      const { token, info } = tokens.mint(scope, ctx.identity.tokenId, request.label);
      return { token, ...info };
    },
  }),

  revoke: verb({
    cls: 'admin',
    params: v.strictObject({ id: ID }),
    run(ctx, { id }) {
      const tokens = needTokens(ctx);
      if (id === 'owner') throw new UsageError('BAD_ARGUMENT', 'the owner token is not revoked: delete <dataDir>/serve/owner.token and restart the host to make a new one');
      const record = tokens.current(id);
      // Unknown and outside the caller's scope read the same: no probing for other tokens.
      if (!record || !(isWithin(record.scope, ctx.identity.scope) || record.mintedBy === ctx.identity.tokenId)) {
        throw new CapabilityError('NOT_PERMITTED', `token ${ctx.identity.tokenId} may not revoke ${id} (unknown, or wider than its own scope)`, { tokenId: ctx.identity.tokenId });
      }
      tokens.revoke(id);
      return { id, revoked: true };
    },
  }),

  tokens: verb({
    cls: 'admin',
    params: v.strictObject({}),
    run: (ctx) => ({ tokens: needTokens(ctx).list().filter((t) => isWithin(t.scope, ctx.identity.scope) || t.mintedBy === ctx.identity.tokenId) }),
  }),
};

