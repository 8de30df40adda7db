/**
 * Who a console request comes from. Every request presents a capability token of the serving
 * host: `Authorization: Bearer <token>`, or the login cookie a browser got by posting its token
 * to /login. The cookie holds a random login id (HttpOnly, SameSite=Strict), never the token; the
 * host keeps the token's identity beside it, and a login ends with its token (revoked, expired).
 *
 * The address checks: the Host header must name this console (a DNS-rebound name reaching the
 * loopback is refused), and a browser's Origin must be this console's own (no other site drives
 * a WebSocket or posts a login with the operator's cookie).
 */
import type { IncomingMessage } from 'node:http';
import { randomBytes } from 'node:crypto';
import type { Identity } from '../wire/protocol.js';
import type { Gate } from '../serve/gate.js';
import { isExpired } from '../serve/capabilities.js';

export const COOKIE_NAME = 'tdc_login';
/** Logins kept at once; the oldest goes first past this. */
const MAX_LOGINS = 256;
/** A login lasts at most this long (then the token is presented again). */
export const LOGIN_TTL_MS = 12 * 3600 * 1000;

interface Login {
  readonly identity: Identity;
  readonly expiresAt: number;
}

export class ConsoleAuth {
  private readonly logins = new Map<string, Login>();
  readonly hosts: ReadonlySet<string>;
  readonly origins: ReadonlySet<string>;

  constructor(
    private readonly gate: Gate,
    /** host:port forms this console answers to (with the loopback names when it listens there). */
    hosts: readonly string[],
    private readonly now: () => number = Date.now,
  ) {
    this.hosts = new Set(hosts.map((h) => h.toLowerCase()));
    this.origins = new Set(hosts.map((h) => `http://${h.toLowerCase()}`));
  }

  /** A login for a presented token (TOKEN_INVALID from the gate otherwise): the cookie's value. */
  login(token: unknown): { readonly id: string; readonly identity: Identity } {
    const identity = this.gate.verify(token);
    if (this.logins.size >= MAX_LOGINS) this.logins.delete(this.logins.keys().next().value as string);
    const id = randomBytes(32).toString('base64url');
    this.logins.set(id, { identity, expiresAt: this.now() + LOGIN_TTL_MS });
    return { id, identity };
  }

  logout(req: IncomingMessage): void {
    const id = cookieOf(req);
    if (id !== undefined) this.logins.delete(id);
  }

  /** The identity a request presents (bearer token or login cookie), or undefined. */
  identify(req: IncomingMessage): Identity | undefined {
    const auth = req.headers.authorization;
    if (auth !== undefined) {
      const m = /^Bearer ([A-Za-z0-9_-]{1,100})$/.exec(auth);
      if (!m) return undefined;
      try {
        return this.gate.verify(m[1]);
      } catch {
        return undefined;
      }
    }
    const id = cookieOf(req);
    if (id === undefined) return undefined;
    const login = this.logins.get(id);
    if (!login) return undefined;
    if (this.now() >= login.expiresAt || !this.stillValid(login.identity)) {
      this.logins.delete(id);
      return undefined;
    }
    return login.identity;
  }

  /** A token's identity still stands: not expired, and (a minted token) not revoked. */
  stillValid(identity: Identity): boolean {
    if (isExpired(identity.scope, this.now())) return false;
    return identity.tokenId === 'owner' || this.gate.tokens?.current(identity.tokenId) !== undefined;
  }

  hostAllowed(req: IncomingMessage): boolean {
    const host = req.headers.host;
    return host !== undefined && this.hosts.has(host.toLowerCase());
  }

  /** No Origin (not a browser, or a same-origin GET) passes; a present one must be ours. */
  originAllowed(req: IncomingMessage): boolean {
    const origin = req.headers.origin;
    return origin === undefined || this.origins.has(origin.toLowerCase());
  }

  /** The login cookie, as Set-Cookie: not readable by scripts, never sent by another site. */
  static cookie(id: string): string {
    return `${COOKIE_NAME}=${id}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${Math.floor(LOGIN_TTL_MS / 1000)}`;
  }

  static clearedCookie(): string {
    return `${COOKIE_NAME}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0`;
  }
}

function cookieOf(req: IncomingMessage): string | undefined {
  const header = req.headers.cookie;
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const [k, v] = part.trim().split('=', 2);
    if (k === COOKIE_NAME && v !== undefined && /^[A-Za-z0-9_-]{43}$/.test(v)) return v;
  }
  return undefined;
}
