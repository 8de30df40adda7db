/**
 * The configuration contract of DESIGN.md as one closed valibot schema: the single source of the
 * config's types. Every object is strict, so an unknown key anywhere is an issue with its path.
 */
import * as v from 'valibot';

const positiveInt = v.pipe(v.number(), v.integer(), v.minValue(1));
const nonNegativeInt = v.pipe(v.number(), v.integer(), v.minValue(0));
const name = v.pipe(v.string(), v.regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'use letters, digits, ".", "_" or "-" (at most 64)'));

/** The built-in profiles (profiles/*.json). Any profile id loaded at Driver.open is accepted. */
export const PROFILE_IDS = ['shell', 'claude-code', 'codex', 'gemini', 'aider', 'opencode'] as const;

const ScopeSchema = v.strictObject({
  filesystem: v.optional(v.picklist(['workspace', 'listed-paths', 'home', 'full']), 'workspace'),
  paths: v.optional(v.array(v.string()), []),
  network: v.optional(v.picklist(['none', 'listed-hosts', 'full']), 'none'),
  hosts: v.optional(v.array(v.string()), []),
  credentialPaths: v.optional(v.array(v.string()), []),
  uid: v.optional(v.picklist(['dedicated', 'daemon']), 'dedicated'),
});

const LimitsSchema = v.strictObject({
  wallClockMs: v.optional(positiveInt),
  maxInteractions: v.optional(positiveInt),
  maxRequestsPerSession: v.optional(positiveInt),
  maxSessions: v.optional(positiveInt),
});

export const AllowEntrySchema = v.strictObject({
  id: name,
  match: v.strictObject({
    path: v.pipe(v.string(), v.minLength(1)),
    hash: v.optional(v.pipe(v.string(), v.regex(/^sha256:[0-9a-f]{64}$/, 'expected "sha256:" and 64 lowercase hex digits'))),
    argsPrefix: v.optional(v.array(v.string()), []),
  }),
  scope: v.optional(ScopeSchema, {}),
  // A profile file's id; checked against the profiles loaded at Driver.open (a new profile is a new
  // data file, no schema change).
  profile: v.optional(name),
  autoAnswer: v.optional(v.picklist(['none', 'safe-only', 'all']), 'safe-only'),
  hintPatterns: v.optional(v.array(v.string()), []),
  env: v.optional(v.record(v.pipe(v.string(), v.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'not a variable name')), v.string()), {}),
  passEnv: v.optional(v.array(v.pipe(v.string(), v.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'not a variable name'))), []),
  backend: v.optional(v.picklist(['tmux', 'spawn']), 'tmux'),
  consent: v.strictObject({
    acknowledgedRisk: v.literal(true, 'consent.acknowledgedRisk must be true: an operator acknowledges what this entry may do'),
    acknowledgedAt: v.pipe(v.string(), v.isoTimestamp('expected an ISO timestamp such as 2026-06-14T00:00:00Z')),
  }),
  limits: v.optional(LimitsSchema, {}),
  approveOnCreate: v.optional(v.boolean(), false),
  /** Run on this remote host (an id of `hosts`) instead of this machine. */
  host: v.optional(name),
});

/** A remote machine driven over one long-lived ssh channel (backends/ssh). */
export const HostSchema = v.strictObject({
  id: name,
  ssh: v.strictObject({
    host: v.pipe(v.string(), v.regex(/^[A-Za-z0-9][A-Za-z0-9.:_-]{0,252}$/, 'a host name or address (letters, digits, ".", ":", "_", "-"; not starting with "-")')),
    user: v.pipe(v.string(), v.regex(/^[A-Za-z_][A-Za-z0-9._-]{0,31}$/, 'a user name')),
    port: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(65535))),
    identityFile: v.optional(v.pipe(v.string(), v.regex(/^\/[^\0\n]*$/, 'an absolute path'))),
    options: v.optional(v.array(v.pipe(v.string(), v.regex(/^[A-Za-z][A-Za-z0-9]*=[\x21-\x7e]+$/, 'an ssh option as Key=value (passed as -o Key=value)'))), []),
  }),
  /** The remote data dir (drive sockets, workspaces); default ~user/.tmux-drive. */
  dataDir: v.optional(v.pipe(v.string(), v.regex(/^\/[A-Za-z0-9._/-]{1,80}$/, 'an absolute path of [A-Za-z0-9._/-], at most 80 bytes'))),
});

export const DriverConfigSchema = v.strictObject({
  dataDir: v.optional(v.pipe(v.string(), v.minLength(1))),
  worker: v.optional(
    v.strictObject({
      maxSessions: v.optional(positiveInt, 8),
      idleTtlMs: v.optional(positiveInt, 900_000),
      ringBytes: v.optional(v.pipe(v.number(), v.integer(), v.minValue(4096)), 262_144),
      stuckMs: v.optional(positiveInt, 30_000),
    }),
    {},
  ),
  defaults: v.optional(
    v.strictObject({
      cols: v.optional(v.pipe(v.number(), v.integer(), v.minValue(2), v.maxValue(1000)), 80),
      rows: v.optional(v.pipe(v.number(), v.integer(), v.minValue(2), v.maxValue(1000)), 24),
      scrollback: v.optional(nonNegativeInt, 1000),
    }),
    {},
  ),
  redactSecrets: v.optional(v.boolean(), true),
  audit: v.optional(v.strictObject({ enabled: v.optional(v.boolean(), true) }), {}),
  unsafeDisableSandbox: v.optional(v.boolean(), false),
  allow: v.optional(v.array(AllowEntrySchema), []),
  hosts: v.optional(v.array(HostSchema), []),
  drive: v.optional(
    v.strictObject({
      mode: v.optional(v.picklist(['auto', 'manual']), 'auto'),
      readMode: v.optional(v.picklist(['digest', 'diff', 'full']), 'digest'),
      durable: v.optional(v.boolean(), true),
      heartbeatMs: v.optional(positiveInt, 90_000),
      maxCostUsd: v.optional(v.nullable(v.pipe(v.number(), v.minValue(0))), null),
      notify: v.optional(v.picklist(['terminal', 'all', 'none']), 'terminal'),
      heartbeatNotifyMs: v.optional(positiveInt, 3_600_000),
    }),
    {},
  ),
});

/** The config as written by an operator (before defaults). */
export type DriverConfigInput = v.InferInput<typeof DriverConfigSchema>;
/** The config with every default filled in. */
export type DriverConfig = v.InferOutput<typeof DriverConfigSchema>;
export type AllowEntry = v.InferOutput<typeof AllowEntrySchema>;
export type Scope = AllowEntry['scope'];
export type HostConfig = v.InferOutput<typeof HostSchema>;
