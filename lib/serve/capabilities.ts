/**
 * What a capability token may do, decided from its scope alone: verb classes (observe, drive,
 * admin), optionally only some drives by name or by allow entry, until an expiry. The verb table
 * (verbs.ts) names each verb's class; this module answers "may this scope do that to this drive"
 * and "is this scope within that one" (a token only mints or revokes narrower tokens).
 */
import * as v from 'valibot';
import { CAPABILITY_CLASSES, type CapabilityClass, type Scope } from '../wire/protocol.js';
import { CapabilityError } from '../wire/host-error.js';

/** The owner (and an in-process command with no host): every class, every drive, no expiry. */
export const OWNER_SCOPE: Scope = { classes: CAPABILITY_CLASSES };

export const SCOPE_BOUNDS = {
  /** Names listed in a scope: a token is for an agent's few drives, not a fleet inventory. */
  names: 256,
  /** A drive name as create() accepts it; an allow id as the config spells it. */
  nameChars: 64,
  /** Tokens live at most a year: a longer grant is a forgotten one. */
  ttlMs: 366 * 24 * 3600 * 1000,
  labelChars: 64,
} as const;

const NAME = v.pipe(v.string(), v.regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'a name of letters, digits, "_", "." or "-"'));

/** What a mint request may ask for. */
export const MintRequestSchema = v.strictObject({
  classes: v.pipe(v.array(v.picklist(CAPABILITY_CLASSES)), v.minLength(1), v.maxLength(CAPABILITY_CLASSES.length)),
  drives: v.optional(v.pipe(v.array(NAME), v.maxLength(SCOPE_BOUNDS.names))),
  allowIds: v.optional(v.pipe(v.array(NAME), v.maxLength(SCOPE_BOUNDS.names))),
  ttlMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1000), v.maxValue(SCOPE_BOUNDS.ttlMs))),
  label: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9][A-Za-z0-9 _.:@-]{0,63}$/, 'a short label of letters, digits, spaces and _.:@-'))),
});
export type MintRequest = v.InferOutput<typeof MintRequestSchema>;

export function allowsClass(scope: Scope, cls: CapabilityClass): boolean {
  return scope.classes.includes(cls);
}

export function isExpired(scope: Scope, now: number): boolean {
  return scope.expiresAt !== undefined && now >= scope.expiresAt;
}

/** True when the scope reaches every drive (no name or allow-entry restriction). */
export function isUnrestricted(scope: Scope): boolean {
  return scope.drives === undefined && scope.allowIds === undefined;
}

/** May `scope` touch the drive `name`, launched from `allowId` (undefined: not known to the host)? */
export function allowsDrive(scope: Scope, name: string, allowId: string | undefined): boolean {
  if (scope.drives !== undefined && !scope.drives.includes(name)) return false;
  if (scope.allowIds !== undefined && (allowId === undefined || !scope.allowIds.includes(allowId))) return false;
  return true;
}

/** Throws NOT_PERMITTED unless the scope may touch the drive; the message never says whether it exists. */
export function requireDrive(scope: Scope, tokenId: string, name: string, allowId: string | undefined): void {
  if (!allowsDrive(scope, name, allowId)) {
    throw new CapabilityError('NOT_PERMITTED', `token ${tokenId} may not touch drive "${name}" (outside its drives or allow entries)`, { tokenId, drive: name });
  }
}

function subset(inner: readonly string[] | undefined, outer: readonly string[] | undefined): boolean {
  if (outer === undefined) return true;
  if (inner === undefined) return false;
  return inner.every((x) => outer.includes(x));
}

/** True when everything `inner` allows, `outer` allows too (classes, drives, allow entries, time). */
export function isWithin(inner: Scope, outer: Scope): boolean {
  if (!inner.classes.every((c) => outer.classes.includes(c))) return false;
  if (!subset(inner.drives, outer.drives) || !subset(inner.allowIds, outer.allowIds)) return false;
  if (outer.expiresAt !== undefined && (inner.expiresAt === undefined || inner.expiresAt > outer.expiresAt)) return false;
  return true;
}

/** The scope a mint request stands for, at `now`. */
export function scopeOf(request: MintRequest, now: number): Scope {
  return {
    classes: CAPABILITY_CLASSES.filter((c) => request.classes.includes(c)),
    ...(request.drives !== undefined ? { drives: [...new Set(request.drives)] } : {}),
    ...(request.allowIds !== undefined ? { allowIds: [...new Set(request.allowIds)] } : {}),
    ...(request.ttlMs !== undefined ? { expiresAt: now + request.ttlMs } : {}),
  };
}
