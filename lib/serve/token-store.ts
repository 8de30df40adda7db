/**
 * Capability tokens of one data dir. A token is 256 random bits (`tdk_` + base64url); the host
 * keeps only its sha256 and its scope (`<dataDir>/serve/tokens.json`, 0600, replaced atomically),
 * so a copy of the store grants nothing. The owner's token is the one exception: it lives in
 * `<dataDir>/serve/owner.token` (0600) for the data dir's own user to present, as ssh keeps a
 * private key; every other token is shown once, at mint. Only the serving host writes the store
 * (it holds the exclusive lock): mint and revoke need a host.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { TmuxDriveError } from '../common/errors.js';
import { CAPABILITY_CLASSES, type Identity, type Scope } from '../wire/protocol.js';
import { OWNER_SCOPE, isExpired } from './capabilities.js';
import type { ServePaths } from './serve-paths.js';

const TOKEN = /^tdk_[A-Za-z0-9_-]{43}$/;
const STORE_VERSION = 1;
/** A store this large is not one this host wrote (a few hundred bytes a token). */
const MAX_STORE_BYTES = 4 * 1024 * 1024;
/** Tokens one data dir keeps; revoke or let expire before minting more. */
export const MAX_TOKENS = 4096;

export interface TokenRecord {
  readonly id: string;
  /** sha256 of the token, hex. */
  readonly hash: string;
  readonly scope: Scope;
  readonly label?: string;
  readonly createdAt: number;
  /** The id of the token that minted it. */
  readonly mintedBy: string;
}

/** A token as listed: everything but its hash. */
export type TokenInfo = Omit<TokenRecord, 'hash'>;

export type Verdict = { readonly ok: true; readonly identity: Identity } | { readonly ok: false; readonly reason: 'malformed' | 'unknown' | 'expired' };

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

function newToken(): string {
  return `tdk_${randomBytes(32).toString('base64url')}`;
}

/** Which version of a file was read: a write replaces it (a new inode), so any change moves one of these. */
export interface FileStamp {
  readonly ino: number;
  readonly size: number;
  readonly mtimeMs: number;
}

/** The store's two files as read: undefined for a file that was absent. */
export interface StoreStamp {
  readonly owner: FileStamp | undefined;
  readonly tokens: FileStamp | undefined;
}

function stampOf(st: { ino: number; size: number; mtimeMs: number }): FileStamp {
  return { ino: st.ino, size: st.size, mtimeMs: st.mtimeMs };
}

function sameStamp(a: FileStamp | undefined, b: FileStamp | undefined): boolean {
  return a === undefined || b === undefined ? a === b : a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs;
}

/** The file's stamp now (undefined when absent; a file that cannot be stat'ed is a change). */
function statStamp(path: string): FileStamp | undefined | 'unknown' {
  try {
    return stampOf(lstatSync(path));
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? undefined : 'unknown';
  }
}

function readSmallFile(path: string): string | undefined {
  return readStampedFile(path)?.text;
}

/** The file's text and the stamp of the very descriptor it was read through. */
function readStampedFile(path: string): { readonly text: string; readonly stamp: FileStamp } | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new TmuxDriveError('DATA_DIR_INVALID', `cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`, { path });
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > MAX_STORE_BYTES) throw new TmuxDriveError('DATA_DIR_INVALID', `${path} is not a token file this host wrote`, { path });
    if ((st.mode & 0o077) !== 0) throw new TmuxDriveError('DATA_DIR_INVALID', `${path} is readable by others (mode ${(st.mode & 0o777).toString(8)}): chmod 600 it`, { path });
    return { text: readFileSync(fd, 'utf8'), stamp: stampOf(st) };
  } finally {
    closeSync(fd);
  }
}

/** Writes `text` to `path` through a new 0600 file renamed over it: readers see the old or the new. */
function writeAtomically(path: string, text: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  rmSync(tmp, { force: true });
  const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  try {
    const bytes = Buffer.from(text, 'utf8');
    let written = 0;
    while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}

function isScope(v: unknown): v is Scope {
  if (typeof v !== 'object' || v === null) return false;
  const s = v as Record<string, unknown>;
  const names = (x: unknown): boolean => x === undefined || (Array.isArray(x) && x.every((n) => typeof n === 'string'));
  return Array.isArray(s.classes) && s.classes.every((c) => (CAPABILITY_CLASSES as readonly unknown[]).includes(c)) && names(s.drives) && names(s.allowIds) && (s.expiresAt === undefined || typeof s.expiresAt === 'number');
}

function isRecord(v: unknown): v is TokenRecord {
  if (typeof v !== 'object' || v === null) return false;
  const r = v as Record<string, unknown>;
  return typeof r.id === 'string' && typeof r.hash === 'string' && /^[0-9a-f]{64}$/.test(r.hash) && isScope(r.scope) && typeof r.createdAt === 'number' && typeof r.mintedBy === 'string';
}

export class TokenStore {
  private readonly byHash = new Map<string, TokenRecord>();
  private readonly ownerHash: Buffer;

  private constructor(
    private readonly paths: ServePaths,
    ownerToken: string,
    records: readonly TokenRecord[],
    private readonly now: () => number,
  ) {
    this.ownerHash = Buffer.from(sha256(ownerToken), 'hex');
    for (const r of records) this.byHash.set(r.hash, r);
  }

  /** Loads the store, creating the owner's token on first use. */
  static open(paths: ServePaths, now: () => number = Date.now): TokenStore {
    return TokenStore.load(paths, true, now).store as TokenStore;
  }

  /**
   * Loads the store as it is now without writing anything (a standby reads it while the holder
   * may still change it): no store when the owner's token is not made yet. The stamp says which
   * files were read, for `unchanged()` at takeover.
   */
  static peek(paths: ServePaths, now: () => number = Date.now): { readonly store: TokenStore | undefined; readonly stamp: StoreStamp } {
    return TokenStore.load(paths, false, now);
  }

  /** Whether the store's files are still the ones `stamp` names (then what was read from them holds). */
  static unchanged(paths: ServePaths, stamp: StoreStamp): boolean {
    const owner = statStamp(paths.ownerToken);
    const tokens = statStamp(paths.tokens);
    return owner !== 'unknown' && tokens !== 'unknown' && sameStamp(owner, stamp.owner) && sameStamp(tokens, stamp.tokens);
  }

  private static load(paths: ServePaths, create: boolean, now: () => number): { readonly store: TokenStore | undefined; readonly stamp: StoreStamp } {
    const ownerFile = readStampedFile(paths.ownerToken);
    let owner = ownerFile?.text.trim();
    if (owner === undefined) {
      if (!create) return { store: undefined, stamp: { owner: undefined, tokens: undefined } };
      owner = newToken();
      writeAtomically(paths.ownerToken, `${owner}\n`);
    }
    if (!TOKEN.test(owner)) throw new TmuxDriveError('DATA_DIR_INVALID', `${paths.ownerToken} does not hold a token: delete it and restart the host to make a new one`, { path: paths.ownerToken });
    const tokensFile = readStampedFile(paths.tokens);
    let records: TokenRecord[] = [];
    if (tokensFile !== undefined) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(tokensFile.text);
      } catch {
        parsed = undefined;
      }
      const doc = parsed as { version?: unknown; tokens?: unknown } | undefined;
      if (!doc || doc.version !== STORE_VERSION || !Array.isArray(doc.tokens) || !doc.tokens.every(isRecord)) {
        throw new TmuxDriveError('DATA_DIR_INVALID', `${paths.tokens} is not a token store this host wrote (version ${STORE_VERSION})`, { path: paths.tokens });
      }
      records = doc.tokens as TokenRecord[];
    }
    return { store: new TokenStore(paths, owner, records, now), stamp: { owner: ownerFile?.stamp, tokens: tokensFile?.stamp } };
  }

  /**
   * Runs verify's code once, on a scratch store and a token nobody holds (crypto's first use, ~17 ms
   * cold here, is then not on a takeover's clock). Reads and writes nothing.
   */
  static rehearse(paths: ServePaths): void {
    new TokenStore(paths, newToken(), [], Date.now).verify(newToken());
  }

  /** Who presents `token`: the owner, a minted token, or nobody (and why). */
  verify(token: unknown): Verdict {
    if (typeof token !== 'string' || !TOKEN.test(token)) return { ok: false, reason: 'malformed' };
    const hash = sha256(token);
    if (timingSafeEqual(Buffer.from(hash, 'hex'), this.ownerHash)) return { ok: true, identity: { tokenId: 'owner', scope: OWNER_SCOPE } };
    const record = this.byHash.get(hash);
    if (!record) return { ok: false, reason: 'unknown' };
    if (isExpired(record.scope, this.now())) return { ok: false, reason: 'expired' };
    return { ok: true, identity: { tokenId: record.id, scope: record.scope, ...(record.label ? { label: record.label } : {}) } };
  }

  /** A minted token's current record (undefined once revoked); the owner's is fixed. */
  current(id: string): TokenRecord | undefined {
    for (const r of this.byHash.values()) if (r.id === id) return r;
    return undefined;
  }

  mint(scope: Scope, mintedBy: string, label?: string): { readonly token: string; readonly info: TokenInfo } {
    this.dropExpired();
    if (this.byHash.size >= MAX_TOKENS) throw new TmuxDriveError('LIMIT_REACHED', `this data dir keeps at most ${MAX_TOKENS} tokens: revoke some first`, { cap: 'tokens' });
    const token = newToken();
    const record: TokenRecord = { id: `tk_${randomBytes(6).toString('hex')}`, hash: sha256(token), scope, ...(label ? { label } : {}), createdAt: this.now(), mintedBy };
    this.byHash.set(record.hash, record);
    this.save();
    const { hash: _hash, ...info } = record;
    return { token, info };
  }

  /** Removes a minted token; false when there is no such token. */
  revoke(id: string): boolean {
    const record = this.current(id);
    if (!record) return false;
    this.byHash.delete(record.hash);
    this.save();
    return true;
  }

  list(): TokenInfo[] {
    return [...this.byHash.values()].map(({ hash: _hash, ...info }) => info);
  }

  private dropExpired(): void {
    const now = this.now();
    for (const [hash, r] of this.byHash) if (isExpired(r.scope, now)) this.byHash.delete(hash);
  }

  private save(): void {
    writeAtomically(this.paths.tokens, `${JSON.stringify({ version: STORE_VERSION, tokens: [...this.byHash.values()] })}\n`);
  }
}

/** The owner's token of a data dir, for a client on its machine (undefined when none was made yet). */
export function readOwnerToken(paths: ServePaths): string | undefined {
  const text = readSmallFile(paths.ownerToken)?.trim();
  return text !== undefined && TOKEN.test(text) ? text : undefined;
}
