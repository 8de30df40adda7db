/**
 * Per-program perception as data (profiles/*.json), validated by one closed valibot schema and
 * compiled into typed `Profile` objects. Pure: the files are read by lib/driver/profile-files.ts and
 * handed over as parsed JSON. A new program is a new JSON file, never an engine change.
 *
 * Every pattern in a profile is checked by `checkRegexSafety` (no catastrophic backtracking) and
 * only ever runs on input bounded by `MAX_MATCH_CHARS`: screens are untrusted (invariant 7).
 */
import * as v from 'valibot';
import { ConfigError, type ConfigIssue } from '../common/errors.js';
import { normalizeKey } from '../control/encode.js';
import { checkRegexSafety } from './regex-safety.js';

/** What a dialog asks; the last three always escalate to a human, whatever the policy. */
export const DIALOG_KINDS = ['confirm', 'menu', 'select', 'trust', 'prompt', 'approval', 'auth', 'destructive'] as const;
export type DialogKind = (typeof DIALOG_KINDS)[number];
/** Kinds no policy may answer: they go to a human (`needs-you`). */
export const ESCALATING_KINDS: ReadonlySet<DialogKind> = new Set(['approval', 'auth', 'destructive']);

export type SoftNewline = 'bracketed-paste' | 'meta-enter';

const id = v.pipe(v.string(), v.regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, 'use lowercase letters, digits, ".", "_" or "-" (at most 64)'));
const flags = v.pipe(v.string(), v.regex(/^(?!.*(.).*\1)[imsu]{0,4}$/, 'flags may only be i, m, s, u, each once'));
const pattern = v.pipe(v.string(), v.minLength(1));
/** Rows counted up from the last row with content; absent = the whole screen. */
const bottomRows = v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1000));

const PatternSchema = v.union([pattern, v.strictObject({ pattern, flags: v.optional(flags) })]);

const MarkerSchema = v.strictObject({
  id,
  pattern,
  flags: v.optional(flags),
  bottomRows: v.optional(bottomRows),
});

const ColorModeSchema = v.picklist(['default', 'palette', 'rgb']);
/** A cell matches when every listed attribute has the listed value. */
const CellRuleSchema = v.strictObject({
  dim: v.optional(v.boolean()),
  bold: v.optional(v.boolean()),
  inverse: v.optional(v.boolean()),
  fg: v.optional(v.pipe(v.number(), v.integer(), v.minValue(-1), v.maxValue(0xffffff))),
  fgMode: v.optional(ColorModeSchema),
});

const KnownDialogSchema = v.strictObject({
  id,
  /** Matched against the text of a structurally detected dialog (or a parked prompt line). */
  pattern,
  flags: v.optional(flags),
  kind: v.picklist(DIALOG_KINDS),
  /** Key names (as sendKeys takes them) that answer it. */
  answer: v.optional(v.pipe(v.array(v.string()), v.minLength(1), v.maxLength(16))),
  /** True when the answer is harmless and may be sent under `safe-only`. */
  safe: v.optional(v.boolean(), false),
  /**
   * The highlighted option's label must match this for the answer to be safe (an `Enter` answers
   * whatever is highlighted). Absent: any.
   */
  selected: v.optional(pattern),
});

export const ProfileSchema = v.strictObject({
  id,
  description: v.optional(v.string(), ''),
  /** Program basenames this profile is the default for (an allow entry's `profile` wins). */
  commands: v.optional(v.array(v.string()), []),
  /** The text left of the cursor on a parked row that makes it a prompt (the generic rule). */
  prompt: v.optional(PatternSchema),
  /** A row starting with this is a prompt even with text typed after it (`$ git st`). */
  promptPrefix: v.optional(PatternSchema),
  /** The input line of a TUI composer: its prefix, searched in the bottom rows. */
  composer: v.optional(v.strictObject({ prefix: pattern, flags: v.optional(flags), bottomRows: v.optional(bottomRows, 12) })),
  /** Cells on the input line that are a suggestion (ghost text), never typed input. */
  ghost: v.optional(v.array(CellRuleSchema), [{ dim: true }]),
  working: v.optional(v.array(MarkerSchema), []),
  queued: v.optional(v.array(MarkerSchema), []),
  dialogs: v.optional(v.array(KnownDialogSchema), []),
  /** Extra words that make a dialog destructive / an approval / a sign-in, besides the engine's. */
  risk: v.optional(
    v.strictObject({
      destructive: v.optional(v.array(PatternSchema), []),
      approval: v.optional(v.array(PatternSchema), []),
      auth: v.optional(v.array(PatternSchema), []),
    }),
    {},
  ),
  /** Read-side rewriting, declarative. */
  transformSnapshot: v.optional(
    v.strictObject({
      stripGhost: v.optional(v.boolean(), false),
      dropRows: v.optional(v.array(PatternSchema), []),
    }),
    {},
  ),
  /**
   * Where the program shows what the drive has cost so far (an AI CLI's spend line): a pattern whose
   * first capture group is a decimal number of US dollars, matched on the visible screen text.
   * Enforces config `drive.maxCostUsd`; absent = no cost reading for this program.
   */
  cost: v.optional(v.strictObject({ pattern, flags: v.optional(flags), bottomRows: v.optional(bottomRows) })),
  /** How a multi-line message stays one submission. */
  softNewline: v.optional(v.picklist(['bracketed-paste', 'meta-enter']), 'bracketed-paste'),
  /** Variables an operator may want in the allow entry's `env` (never applied automatically). */
  recommendedEnv: v.optional(v.record(v.pipe(v.string(), v.regex(/^[A-Za-z_][A-Za-z0-9_]*$/)), v.string()), {}),
});

export type ProfileInput = v.InferInput<typeof ProfileSchema>;

export interface CellRule {
  readonly dim?: boolean;
  readonly bold?: boolean;
  readonly inverse?: boolean;
  readonly fg?: number;
  readonly fgMode?: 'default' | 'palette' | 'rgb';
}

export interface Marker {
  readonly id: string;
  readonly re: RegExp;
  /** Rows counted up from the last row with content; undefined = the whole screen. */
  readonly bottomRows: number | undefined;
}

export interface KnownDialog {
  readonly id: string;
  readonly re: RegExp;
  readonly kind: DialogKind;
  readonly answer: readonly string[] | undefined;
  readonly safe: boolean;
  /** The highlighted option a safe answer requires, when the profile names one. */
  readonly selected: RegExp | undefined;
}

export interface Profile {
  readonly id: string;
  readonly description: string;
  readonly commands: readonly string[];
  readonly prompt: RegExp;
  readonly promptPrefix: RegExp;
  readonly composer: { readonly prefix: RegExp; readonly bottomRows: number } | undefined;
  readonly ghost: readonly CellRule[];
  readonly working: readonly Marker[];
  readonly queued: readonly Marker[];
  readonly dialogs: readonly KnownDialog[];
  readonly risk: { readonly destructive: readonly RegExp[]; readonly approval: readonly RegExp[]; readonly auth: readonly RegExp[] };
  readonly transform: { readonly stripGhost: boolean; readonly dropRows: readonly RegExp[] };
  readonly softNewline: SoftNewline;
  /** The cost reading rule (first capture group = USD), when the program shows its spend. */
  readonly cost?: { readonly re: RegExp; readonly bottomRows: number | undefined };
  readonly recommendedEnv: Readonly<Record<string, string>>;
}

/**
 * The engine's prompt rule when a profile has none: the text left of the cursor ends with a
 * prompt character (`$ `, `# `, `> `, `>>> `, `: `, `? `, `] `, `) `, `❯ `, `… `) or `...`.
 */
export const DEFAULT_PROMPT_SOURCE = '(?:[$#>:?»❯›)\\]]|\\.\\.\\.) ?$';
/**
 * The engine's rule for a prompt with typed text after it: the row starts with a shell prompt
 * (`user@host:~/dir$ `, `# `), a Python or IPython prompt, or `❯ `. Narrower than the parked
 * rule on purpose: `:` and `?` end too many progress lines to count mid-row.
 */
export const DEFAULT_PROMPT_PREFIX_SOURCE = '^(?:[\\w@.:~/()\\[\\]+-]{0,60}[$#]|>>>|\\.\\.\\.|❯|In \\[\\d{1,5}\\]:) ';

/** The rules used when no profile is given: the generic structure, no program-specific markers. */
export const GENERIC_PROFILE: Profile = compileOrThrow({ id: 'generic', description: 'the engine rules alone' });

/** A set of compiled profiles by id. */
export class ProfileSet {
  readonly #byId: ReadonlyMap<string, Profile>;

  constructor(profiles: readonly Profile[]) {
    this.#byId = new Map(profiles.map((p) => [p.id, p]));
  }

  get ids(): string[] {
    return [...this.#byId.keys()];
  }

  get(profileId: string): Profile | undefined {
    return this.#byId.get(profileId);
  }

  /**
   * The profile for a drive: the allow entry's explicit `profile`, else the profile whose id is
   * the allowId, else one that lists the program's basename in `commands`, else `shell`
   * (else the generic rules).
   */
  select(opts: { readonly profile?: string | undefined; readonly allowId?: string | undefined; readonly binary?: string | undefined }): Profile {
    if (opts.profile !== undefined) {
      const p = this.#byId.get(opts.profile);
      if (p) return p;
    }
    if (opts.allowId !== undefined) {
      const p = this.#byId.get(opts.allowId);
      if (p) return p;
    }
    if (opts.binary !== undefined) {
      const base = opts.binary.slice(opts.binary.lastIndexOf('/') + 1);
      for (const p of this.#byId.values()) if (p.commands.includes(base)) return p;
    }
    return this.#byId.get('shell') ?? GENERIC_PROFILE;
  }
}

export interface ProfileSource {
  /** Where it came from (a file name): the prefix of every issue path. */
  readonly name: string;
  readonly data: unknown;
}

/**
 * Validates and compiles profiles. Throws `ConfigError` (CONFIG_INVALID) listing every issue with
 * its path: schema errors, duplicate ids, unsafe or invalid patterns, unknown answer keys, a
 * dialog marked safe that is destructive/approval/auth or has no answer.
 */
export function loadProfiles(sources: readonly ProfileSource[]): ProfileSet {
  const issues: ConfigIssue[] = [];
  const profiles: Profile[] = [];
  const seen = new Map<string, string>();
  for (const source of sources) {
    const compiled = compileProfile(source.data, source.name, issues);
    if (!compiled) continue;
    const earlier = seen.get(compiled.id);
    if (earlier !== undefined) {
      issues.push({ path: `${source.name}: id`, message: `duplicate profile id "${compiled.id}" (also in ${earlier})` });
      continue;
    }
    seen.set(compiled.id, source.name);
    profiles.push(compiled);
  }
  if (issues.length > 0) {
    throw new ConfigError(`invalid profiles: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, issues);
  }
  return new ProfileSet(profiles);
}

/** One profile; issues are appended (paths prefixed with `name`), undefined when it is invalid. */
export function compileProfile(data: unknown, name: string, issues: ConfigIssue[]): Profile | undefined {
  const result = v.safeParse(ProfileSchema, data);
  if (!result.success) {
    for (const issue of result.issues) issues.push({ path: `${name}: ${v.getDotPath(issue) ?? '(root)'}`, message: issue.message });
    return undefined;
  }
  const p = result.output;
  const before = issues.length;
  // Always compiled with u: a class such as [✻✶] must hold code points, not UTF-16 halves.
  const re = (path: string, source: string, fl = ''): RegExp => {
    const withU = fl.includes('u') ? fl : `${fl}u`;
    const bad = checkRegexSafety(source, withU);
    for (const b of bad) issues.push({ path: `${name}: ${path}`, message: `unsafe pattern: ${b.message}` });
    return bad.length > 0 ? /(?!)/ : new RegExp(source, withU);
  };
  const patterns = (path: string, list: readonly (string | { pattern: string; flags?: string | undefined })[], defaultFlags: string): RegExp[] =>
    list.map((item, i) => (typeof item === 'string' ? re(`${path}.${i}`, item, defaultFlags) : re(`${path}.${i}.pattern`, item.pattern, item.flags ?? '')));
  const markers = (path: string, list: typeof p.working): Marker[] => {
    const ids = new Set<string>();
    return list.map((m, i) => {
      if (ids.has(m.id)) issues.push({ path: `${name}: ${path}.${i}.id`, message: `duplicate marker id "${m.id}"` });
      ids.add(m.id);
      return { id: m.id, re: re(`${path}.${i}.pattern`, m.pattern, m.flags ?? ''), bottomRows: m.bottomRows };
    });
  };
  const dialogIds = new Set<string>();
  const dialogs: KnownDialog[] = p.dialogs.map((d, i) => {
    const path = `dialogs.${i}`;
    if (dialogIds.has(d.id)) issues.push({ path: `${name}: ${path}.id`, message: `duplicate dialog id "${d.id}"` });
    dialogIds.add(d.id);
    for (const [k, key] of (d.answer ?? []).entries()) {
      try {
        normalizeKey(key);
      } catch (err) {
        issues.push({ path: `${name}: ${path}.answer.${k}`, message: (err as Error).message });
      }
    }
    if (d.safe && ESCALATING_KINDS.has(d.kind)) issues.push({ path: `${name}: ${path}.safe`, message: `a ${d.kind} dialog is never safe: it always goes to a human` });
    if (d.safe && !d.answer) issues.push({ path: `${name}: ${path}.safe`, message: 'a safe dialog needs an answer' });
    const selected = d.selected === undefined ? undefined : re(`${path}.selected`, d.selected, d.flags ?? '');
    return { id: d.id, re: re(`${path}.pattern`, d.pattern, d.flags ?? ''), kind: d.kind, answer: d.answer, safe: d.safe, selected };
  });
  const spec = (given: (typeof p)['prompt'], fallback: string): { pattern: string; flags: string } =>
    given === undefined ? { pattern: fallback, flags: '' } : typeof given === 'string' ? { pattern: given, flags: '' } : { pattern: given.pattern, flags: given.flags ?? '' };
  const promptSource = spec(p.prompt, DEFAULT_PROMPT_SOURCE);
  const prefixSource = spec(p.promptPrefix, DEFAULT_PROMPT_PREFIX_SOURCE);
  const profile: Profile = {
    id: p.id,
    description: p.description,
    commands: p.commands,
    prompt: re('prompt', promptSource.pattern, promptSource.flags),
    promptPrefix: re('promptPrefix', prefixSource.pattern, prefixSource.flags),
    composer: p.composer ? { prefix: re('composer.prefix', p.composer.prefix, p.composer.flags ?? ''), bottomRows: p.composer.bottomRows } : undefined,
    ghost: p.ghost,
    working: markers('working', p.working),
    queued: markers('queued', p.queued),
    dialogs,
    risk: {
      destructive: patterns('risk.destructive', p.risk.destructive, 'i'),
      approval: patterns('risk.approval', p.risk.approval, 'i'),
      auth: patterns('risk.auth', p.risk.auth, 'i'),
    },
    transform: { stripGhost: p.transformSnapshot.stripGhost, dropRows: patterns('transformSnapshot.dropRows', p.transformSnapshot.dropRows, '') },
    softNewline: p.softNewline,
    ...(p.cost ? { cost: { re: re('cost.pattern', p.cost.pattern, p.cost.flags ?? ''), bottomRows: p.cost.bottomRows } } : {}),
    recommendedEnv: p.recommendedEnv,
  };
  return issues.length > before ? undefined : profile;
}

function compileOrThrow(data: ProfileInput): Profile {
  const issues: ConfigIssue[] = [];
  const p = compileProfile(data, data.id, issues);
  if (!p) throw new ConfigError(`built-in profile ${data.id} is invalid`, issues);
  return p;
}
