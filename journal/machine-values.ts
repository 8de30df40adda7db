/**
 * What the journal accepts: machine tokens, ids, hashes, numbers. Every string that reaches a
 * column passes one of these shapes first, so free text (screen bytes, typed text, environment
 * values, secrets with their usual mix of cases, spaces and punctuation) cannot be stored. The
 * schema repeats the character classes as CHECK constraints, so a bug here still cannot write it.
 */
import { createHash } from 'node:crypto';
import { JournalError } from './journal-error.js';

/** A small record of machine tokens: `{ key: 'enter', count: 2, paste: false }`. */
export type MachineTags = Readonly<Record<string, string | number | boolean>>;

/** Session ids and names: the driver's stable names (also tmux socket and session names). */
export const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
/** Allow-entry ids, as the config schema spells them. */
export const ALLOW_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** A machine reason or tag value: lower case, digits and `_ . : -`, never a space. */
export const TOKEN = /^[a-z0-9_.:-]{0,64}$/;
/** Event kinds and incident kinds. */
export const KIND = /^[a-z][a-z0-9_.:-]{0,31}$/;
export const TAG_KEY = /^[a-z][a-z0-9_]{0,31}$/;
/** sha256, lower-case hex. */
export const HASH = /^[0-9a-f]{64}$/;
/** A structural digest, optionally prefixed by its algorithm: `fnv1a64:0123456789abcdef`. */
export const DIGEST = /^(?:[a-z0-9]{1,16}:)?[0-9a-f]{16,128}$/;
/** The key an auto-answer sent, by name (`Enter`, `y`, `1`, `S-Tab`, `Down+Enter`), never text. */
export const KEY_NAME = /^[A-Za-z0-9_+-]{1,32}$/;
/** Sixteen tags hold any machine detail an event needs; more is a sign of content creeping in. */
export const MAX_TAGS = 16;

function describe(value: unknown): string {
  if (typeof value === 'string') return `a string of ${value.length} characters`;
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

/** Throws JOURNAL_BAD_VALUE naming the field and the rule, never the value. */
export function reject(field: string, value: unknown, rule: string): never {
  throw new JournalError('JOURNAL_BAD_VALUE', `journal: ${field} is ${describe(value)}, expected ${rule}; the journal stores machine values only, never free text`, { field, rule });
}

export function checkString(field: string, value: unknown, pattern: RegExp, rule: string): string {
  if (typeof value !== 'string' || !pattern.test(value)) reject(field, value, rule);
  return value;
}

export function checkToken(field: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || !TOKEN.test(value)) reject(field, value, 'a machine token ([a-z0-9_.:-]{1,64})');
  return value;
}

export function checkKind(field: string, value: unknown): string {
  return checkString(field, value, KIND, 'a kind ([a-z][a-z0-9_.:-]{0,31})');
}

export function checkSessionId(field: string, value: unknown): string {
  return checkString(field, value, SESSION_ID, 'a session id ([A-Za-z0-9][A-Za-z0-9_-]{0,63})');
}

export function checkHash(field: string, value: unknown): string {
  return checkString(field, value, HASH, 'a sha256 hex digest (use hashOf)');
}

export function checkInteger(field: string, value: unknown, min: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) reject(field, value, `an integer ≥ ${min}`);
  return value;
}

export function checkOneOf<T extends string>(field: string, value: unknown, allowed: readonly T[]): T {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) reject(field, value, `one of ${allowed.join(', ')}`);
  return value as T;
}

/**
 * Validates tags and encodes them as compact JSON (null when empty, which stores nothing).
 * Keys match TAG_KEY; values are tokens, finite numbers or booleans; anything else is rejected.
 */
export function encodeTags(tags: MachineTags | undefined, field = 'tags'): string | null {
  if (tags === undefined) return null;
  if (typeof tags !== 'object' || tags === null || Array.isArray(tags)) reject(field, tags, 'a plain object of machine tags');
  const proto: unknown = Object.getPrototypeOf(tags);
  if ((proto !== Object.prototype && proto !== null) || Object.getOwnPropertySymbols(tags).length > 0) reject(field, tags, 'a plain object of machine tags');
  const keys = Object.keys(tags);
  if (keys.length === 0) return null;
  if (keys.length > MAX_TAGS) reject(field, tags, `at most ${MAX_TAGS} tags`);
  for (const key of keys) {
    if (!TAG_KEY.test(key)) reject(`a key of ${field}`, key, 'a tag key ([a-z][a-z0-9_]{0,31})');
    const value: unknown = tags[key];
    if (typeof value === 'string') {
      if (!TOKEN.test(value)) reject(`${field}.${key}`, value, 'a machine token ([a-z0-9_.:-]{0,64})');
    } else if (typeof value === 'number') {
      if (!Number.isFinite(value)) reject(`${field}.${key}`, value, 'a finite number');
    } else if (typeof value !== 'boolean') {
      reject(`${field}.${key}`, value, 'a machine token, a finite number or a boolean');
    }
  }
  return JSON.stringify(tags);
}

export function decodeTags(text: string | null): MachineTags {
  return text === null ? {} : (JSON.parse(text) as MachineTags);
}

/**
 * sha256 hex of a value the journal must not hold but may need to recognise (an argv, an
 * objective). A string is hashed as its UTF-8 bytes; an argv as its JSON array, so
 * `['a b']` and `['a', 'b']` differ.
 */
export function hashOf(value: string | readonly string[]): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** A retired drive's id is longer than any drive name (lib/driver's DRIVE_NAME: at most 48). */
export const RETIRED_ID_MIN = 49;

/**
 * True for the id of a row `retire` moved aside (its name was taken by a new drive). Here, not in
 * session-rows.ts: the public typings re-export it, and session-rows' reach better-sqlite3's.
 */
export function isRetiredSessionId(id: string): boolean {
  return id.length >= RETIRED_ID_MIN && /^r[0-9]+-/.test(id);
}
