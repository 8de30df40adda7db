/**
 * The configuration contract of DESIGN.md as one closed valibot schema: the single source of the
 * config's types. Every object is strict, so an unknown key anywhere is an issue with its path.
 * Every size has an upper bound (CONFIG_BOUNDS, each with its reason) and every path is absolute:
 * a config is the operator's, trusted, but a typo must not cost the host its memory or run a
 * binary found relative to whatever directory the host was started in.
 */
import * as v from 'valibot';

/**
 * The upper bound of every size in the config, and why it is what it is. docs/guide.md's
 * configuration reference repeats them; the JSON Schema carries them as maximum / maxLength /
 * maxItems / maxProperties.
 */
export const CONFIG_BOUNDS = {
  /**
   * Node's setTimeout holds a signed 32-bit delay: a longer one fires after 1 ms (a 30-day
   * wallClockMs would evict at once). Every duration arms one timer, so none may exceed it (24.8 days).
   */
  timerMs: 2_147_483_647,
  /**
   * Each live drive holds a tmux server and a control client process, about 4 file descriptors
   * and a mirror of up to ~50 MB: 256 stays inside the default 1024-descriptor limit of a host.
   */
  sessions: 256,
  /** A drive's transcript ring lives in the host's memory: 64 MiB × the default 8 drives = 512 MiB. */
  ringBytes: 64 * 1024 * 1024,
  /**
   * The mirror allocates every history line at full width (~12 bytes a cell) and tmux keeps its own
   * copy: 200 000 lines × 80 columns ≈ 190 MB a drive on the host, a deliberate operator choice
   * for a log-heavy drive; past it is a typo (2 000 000 000 cost 2.1 GB after `seq 1 3000000`).
   */
  scrollbackLines: 200_000,
  /** 1000×1000 cells already costs a CPU core to redraw; tmux itself refuses beyond 10 000. */
  cells: 1000,
  /** A count no drive reaches (10 a second for 3 years); a larger cap is a typo, not a cap. */
  count: 1_000_000_000,
  /** A spending cap above a million dollars is no cap; this also refuses Infinity (YAML `.inf`). */
  costUsd: 1_000_000,
  /** PATH_MAX is 4096 bytes with its NUL: a longer path cannot be opened. */
  pathChars: 4095,
  /** Paths bound into a jail (each is two bwrap words) or listed hosts: far more than any scope needs. */
  pathEntries: 64,
  /**
   * argv and the environment share execve's ARG_MAX (2 MiB with an 8 MiB stack), one word at most
   * MAX_ARG_STRLEN (128 KiB): 64 words of 16 KiB keep the fixed parts to half of it.
   */
  words: 64,
  wordChars: 16 * 1024,
  /** Variable names: POSIX sets no limit; 128 is ample and keeps error messages short. */
  envNameChars: 128,
  /** A hint pattern's length (hintPatterns is refused when not empty: REFUSED_KEYS). */
  patternChars: 1024,
  /** DNS names are at most 253 characters. */
  hostNameChars: 253,
  /** Allow entries are looked up linearly and read by people: 256 is already a large allowlist. */
  allowEntries: 256,
  /** Remote hosts: each holds an ssh ControlMaster connection. */
  remoteHosts: 64,
  /** `ssh -o Key=value` options. */
  sshOptions: 32,
  sshOptionChars: 1024,
} as const;

const B = CONFIG_BOUNDS;

const positiveInt = v.pipe(v.number(), v.integer(), v.minValue(1));
const nonNegativeInt = v.pipe(v.number(), v.integer(), v.minValue(0));
/** A duration that arms one timer. */
const timerMs = v.pipe(positiveInt, v.maxValue(B.timerMs, `at most ${B.timerMs} ms (24.8 days: a longer timer fires at once)`));
/** The same, where 0 turns the timer off (the seed's meaning for idleTtlMs and heartbeatNotifyMs). */
const timerOrOffMs = v.pipe(nonNegativeInt, v.maxValue(B.timerMs, `at most ${B.timerMs} ms (24.8 days: a longer timer fires at once); 0 = off`));
const count = v.pipe(positiveInt, v.maxValue(B.count));
const name = v.pipe(v.string(), v.regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'use letters, digits, ".", "_" or "-" (at most 64)'));
/**
 * A path as the operator writes it: absolute, so nothing depends on the host's working directory
 * (a relative `bash` would run a `./bash` planted there). `~` is not expanded.
 */
const absolutePath = v.pipe(
  v.string(),
  v.maxLength(B.pathChars, `at most ${B.pathChars} characters`),
  // One pattern (JSON Schema holds one per string), two messages.
  v.regex(/^\/[^\x00-\x1f\x7f]*$/, (issue) =>
    String(issue.input).startsWith('/')
      ? 'must not contain control characters (NUL, newline, …)'
      : 'must be an absolute path (starting with "/"): relative paths and "~" are not expanded, write the full path',
  ),
);
const pathList = v.pipe(v.array(absolutePath), v.maxLength(B.pathEntries, `at most ${B.pathEntries} paths`));
/**
 * A credential path may also start with `~/` (or be `~`): the home of the user the host runs as,
 * expanded at launch (lib/launch). `~user` is not: it would look another user up.
 */
const credentialPath = v.pipe(
  v.string(),
  v.maxLength(B.pathChars, `at most ${B.pathChars} characters`),
  v.regex(/^(?:\/|~\/|~$)[^\x00-\x1f\x7f]*$/, (issue) =>
    /^(?:\/|~\/|~$)/.test(String(issue.input))
      ? 'must not contain control characters (NUL, newline, …)'
      : 'must be an absolute path, or start with "~/" (this user\'s home); relative paths and "~user" are not expanded',
  ),
);
const word = v.pipe(v.string(), v.maxLength(B.wordChars, `at most ${B.wordChars} characters`), v.regex(/^[^\0]*$/, 'must not contain NUL'));
const envName = v.pipe(v.string(), v.maxLength(B.envNameChars, `at most ${B.envNameChars} characters`), v.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'not a variable name'));

/**
 * Keys the seed configs carry that tmux-drive does not act on, each refused (CONFIG_INVALID naming
 * it) with the reason, rather than accepted and ignored. docs/config.md lists them.
 */
export const REFUSED_KEYS = {
  'worker.maxConcurrentAttentionTurns':
    'tmux-drive runs no agent turns: it emits attention events; the host that wakes a turn on them bounds how many run at once',
  'allow[].hintPatterns':
    'only [] is accepted: a prompt is recognised by its structure and answered only from a profile\'s dialog rules (add a profile file with the dialog and its safe answer)',
  'allow[].scope.network: listed-hosts':
    'not supported: bounding a jail to named hosts needs an egress proxy reachable from inside its network namespace, which tmux-drive does not build; use "none" or "full"',
  'drive.mode':
    'only "attached" is accepted: tmux-drive never promotes a drive to a background agent turn (it runs no agent turns); a host decides where its turns run',
  'drive.heartbeatMs':
    'not accepted: liveness is event-driven (stuck after worker.stuckMs of no output and no CPU or I/O, exits from tmux\'s notifications); a periodic backstop tick would be the polling tmux-drive does not do',
} as const;

/**
 * The allow id recorded for a drive adopted from a lost journal (what it runs, and under which
 * entry, is unknown): reserved, so that no entry's limits or answers ever apply to such a drive.
 */
export const ADOPTED_ALLOW_ID = 'adopted';

/** The built-in profiles (profiles/*.json). Any profile id loaded at Driver.open is accepted. */
export const PROFILE_IDS = ['shell', 'claude-code', 'codex', 'gemini', 'aider', 'opencode'] as const;

const ScopeSchema = v.strictObject({
  filesystem: v.optional(v.picklist(['workspace', 'listed-paths', 'home', 'full']), 'workspace'),
  paths: v.optional(pathList, []),
  network: v.optional(v.picklist(['none', 'listed-hosts', 'full']), 'none'),
  hosts: v.optional(v.pipe(v.array(v.pipe(v.string(), v.maxLength(B.hostNameChars))), v.maxLength(B.pathEntries)), []),
  credentialPaths: v.optional(v.pipe(v.array(credentialPath), v.maxLength(B.pathEntries, `at most ${B.pathEntries} paths`)), []),
  // daemon by default: a dedicated uid needs a host running as root (docs/decisions.md).
  uid: v.optional(v.picklist(['dedicated', 'daemon']), 'daemon'),
});

const LimitsSchema = v.strictObject({
  wallClockMs: v.optional(timerMs),
  maxInteractions: v.optional(count),
  maxRequestsPerSession: v.optional(count),
  maxSessions: v.optional(v.pipe(positiveInt, v.maxValue(B.sessions))),
});

export const AllowEntrySchema = v.strictObject({
  id: name,
  match: v.strictObject({
    path: absolutePath,
    hash: v.optional(v.pipe(v.string(), v.regex(/^sha256:[0-9a-f]{64}$/, 'expected "sha256:" and 64 lowercase hex digits'))),
    argsPrefix: v.optional(v.pipe(v.array(word), v.maxLength(B.words, `at most ${B.words} arguments`)), []),
  }),
  scope: v.optional(ScopeSchema, {}),
  // A profile file's id; checked against the profiles loaded at Driver.open (a new profile is a new
  // data file, no schema change).
  profile: v.optional(name),
  autoAnswer: v.optional(v.picklist(['none', 'safe-only', 'all']), 'safe-only'),
  hintPatterns: v.optional(v.pipe(v.array(v.pipe(v.string(), v.maxLength(B.patternChars))), v.maxLength(0, REFUSED_KEYS['allow[].hintPatterns'])), []),
  env: v.optional(v.pipe(v.record(envName, word), v.maxEntries(B.words, `at most ${B.words} variables`)), {}),
  passEnv: v.optional(v.pipe(v.array(envName), v.maxLength(B.words, `at most ${B.words} names`)), []),
  backend: v.optional(v.picklist(['tmux', 'spawn']), 'tmux'),
  consent: v.strictObject({
    acknowledgedRisk: v.literal(true, 'consent.acknowledgedRisk must be true: an operator acknowledges what this entry may do'),
    acknowledgedAt: v.pipe(v.string(), v.maxLength(64), v.isoTimestamp('expected an ISO timestamp such as 2026-06-14T00:00:00Z')),
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
    identityFile: v.optional(absolutePath),
    options: v.optional(
      v.pipe(
        v.array(v.pipe(v.string(), v.maxLength(B.sshOptionChars), v.regex(/^[A-Za-z][A-Za-z0-9]*=[\x21-\x7e]+$/, 'an ssh option as Key=value (passed as -o Key=value)'))),
        v.maxLength(B.sshOptions),
      ),
      [],
    ),
  }),
  /** The remote data dir (drive sockets, workspaces); default ~user/.tmux-drive. */
  dataDir: v.optional(v.pipe(v.string(), v.regex(/^\/[A-Za-z0-9._/-]{1,80}$/, 'an absolute path of [A-Za-z0-9._/-], at most 80 bytes'))),
});

export const DriverConfigSchema = v.strictObject({
  dataDir: v.optional(absolutePath),
  worker: v.optional(
    v.strictObject({
      maxSessions: v.optional(v.pipe(positiveInt, v.maxValue(B.sessions)), 8),
      idleTtlMs: v.optional(timerOrOffMs, 900_000),
      ringBytes: v.optional(v.pipe(v.number(), v.integer(), v.minValue(4096), v.maxValue(B.ringBytes)), 262_144),
      stuckMs: v.optional(timerMs, 30_000),
      maxConcurrentAttentionTurns: v.optional(v.never(REFUSED_KEYS['worker.maxConcurrentAttentionTurns'])),
    }),
    {},
  ),
  defaults: v.optional(
    v.strictObject({
      cols: v.optional(v.pipe(v.number(), v.integer(), v.minValue(2), v.maxValue(B.cells)), 80),
      rows: v.optional(v.pipe(v.number(), v.integer(), v.minValue(2), v.maxValue(B.cells)), 24),
      scrollback: v.optional(v.pipe(nonNegativeInt, v.maxValue(B.scrollbackLines)), 1000),
    }),
    {},
  ),
  redactSecrets: v.optional(v.boolean(), true),
  audit: v.optional(v.strictObject({ enabled: v.optional(v.boolean(), true) }), {}),
  /** The web console (`tmux-drive serve --http`): the non-loopback addresses it may listen on. */
  console: v.optional(
    v.strictObject({
      addresses: v.optional(v.pipe(v.array(v.pipe(v.string(), v.regex(/^[0-9A-Fa-f:.]{2,45}$/, 'an IP address'))), v.maxLength(16)), []),
    }),
    {},
  ),
  unsafeDisableSandbox: v.optional(v.boolean(), false),
  allow: v.optional(v.pipe(v.array(AllowEntrySchema), v.maxLength(B.allowEntries, `at most ${B.allowEntries} entries`)), []),
  hosts: v.optional(v.pipe(v.array(HostSchema), v.maxLength(B.remoteHosts, `at most ${B.remoteHosts} hosts`)), []),
  drive: v.optional(
    v.strictObject({
      mode: v.optional(v.literal('attached', REFUSED_KEYS['drive.mode'])),
      readMode: v.optional(v.picklist(['digest', 'diff', 'full']), 'digest'),
      durable: v.optional(v.boolean(), true),
      heartbeatMs: v.optional(v.never(REFUSED_KEYS['drive.heartbeatMs'])),
      maxCostUsd: v.optional(v.nullable(v.pipe(v.number(), v.minValue(0), v.maxValue(B.costUsd))), null),
      notify: v.optional(v.picklist(['terminal', 'all', 'none']), 'terminal'),
      heartbeatNotifyMs: v.optional(timerOrOffMs, 3_600_000),
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
