/**
 * The operator console: a small web app served by the serving host (`tmux-drive serve --http
 * 127.0.0.1:PORT`). node:http serves a fixed set of static files (console/ at the package root,
 * and @xterm/xterm from its package), loaded into memory at start: no path from a request ever
 * reaches the file system. Two WebSockets (the `ws` package): /ws/fleet for the table,
 * /ws/drive/NAME for a drive page.
 *
 * Security (docs/console.md): every request but the login form needs a token (console-auth.ts);
 * Host and Origin are checked; every answer carries a CSP with no inline script, nosniff, no
 * framing, no caching; the page renders screens only through xterm.js and table cells through
 * textContent, so nothing a program prints is ever HTML.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Gate } from '../serve/gate.js';
import type { SurfaceStarter } from '../serve/serve.js';
import type { Identity } from '../wire/protocol.js';
import { TmuxDriveError, UsageError } from '../common/errors.js';
import { ConsoleAuth } from './console-auth.js';
import { FleetView } from './fleet-view.js';
import { DriveSocket } from './drive-socket.js';
import { openFleetSocket } from './fleet-socket.js';
import { isLoopback, parseConsoleAddress, type ConsoleAddress } from './console-address.js';

const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  // xterm.js sizes its rows and sets its theme colours with style elements: styles only, never script.
  "style-src 'self' 'unsafe-inline'",
  "connect-src 'self'",
  "img-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': CSP,
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  // same-origin, not no-referrer: under no-referrer a browser posts the login form with Origin: null.
  'Referrer-Policy': 'same-origin',
  'Cache-Control': 'no-store',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

/** A posted login form: a token and a little more. */
const MAX_LOGIN_BODY = 1024;
/** What one browser message may carry (typed input, a paste). */
const MAX_WS_MESSAGE = 64 * 1024;
const DRIVE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
/** Open WebSockets one console serves (tables and drive pages of every operator). */
const MAX_SOCKETS = 64;

/** A drive name from a path segment; undefined for a malformed escape or a name create() would refuse. */
function driveName(segment: string | undefined): string | undefined {
  if (segment === undefined) return undefined;
  let name: string;
  try {
    name = decodeURIComponent(segment);
  } catch {
    return undefined;
  }
  return DRIVE_NAME.test(name) ? name : undefined;
}

interface Asset {
  readonly type: string;
  readonly body: Buffer;
}

const TYPES: Readonly<Record<string, string>> = { html: 'text/html; charset=utf-8', js: 'text/javascript; charset=utf-8', mjs: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8', svg: 'image/svg+xml' };

/** console/ at the package root: two levels up from lib/console, three from dist/lib/console. */
function staticDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const up of ['../..', '../../..']) {
    const dir = join(here, up, 'console');
    if (existsSync(join(dir, 'index.html'))) return dir;
  }
  throw new UsageError('BAD_ARGUMENT', `the console's static files are missing (looked for console/index.html above ${here})`);
}

function loadAssets(): Map<string, Asset> {
  const dir = staticDir();
  const xterm = dirname(createRequire(import.meta.url).resolve('@xterm/xterm'));
  const files: [string, string][] = [
    ['/static/console.css', join(dir, 'console.css')],
    ['/static/table.js', join(dir, 'table.js')],
    ['/static/drive.js', join(dir, 'drive.js')],
    ['/static/common.js', join(dir, 'common.js')],
    ['/vendor/xterm.mjs', join(xterm, 'xterm.mjs')],
    ['/vendor/xterm.css', join(xterm, '..', 'css', 'xterm.css')],
    ['/', join(dir, 'index.html')],
    ['/drive', join(dir, 'drive.html')],
    ['/login', join(dir, 'login.html')],
  ];
  return new Map(files.map(([path, file]) => [path, { type: TYPES[file.slice(file.lastIndexOf('.') + 1)] ?? 'application/octet-stream', body: readFileSync(file) }]));
}

export class ConsoleServer {
  readonly fleet: FleetView;
  private readonly auth: ConsoleAuth;
  private readonly assets: Map<string, Asset>;
  private readonly wss: WebSocketServer;
  private readonly sockets = new Set<WebSocket>();

  private constructor(
    private readonly server: Server,
    private readonly gate: Gate,
    readonly address: ConsoleAddress,
  ) {
    this.fleet = new FleetView(gate.driver);
    this.assets = loadAssets();
    const hosts = [`${address.host.includes(':') ? `[${address.host}]` : address.host}:${address.port}`];
    if (isLoopback(address.host)) hosts.push(`localhost:${address.port}`, `127.0.0.1:${address.port}`, `[::1]:${address.port}`);
    this.auth = new ConsoleAuth(gate, [...new Set(hosts)]);
    this.wss = new WebSocketServer({ noServer: true, maxPayload: MAX_WS_MESSAGE });
    // A request that breaks a handler is that request's 500, never the host's end.
    server.on('request', (req, res) => {
      try {
        this.request(req, res);
      } catch {
        if (!res.headersSent) this.reply(res, 500, 'text/plain; charset=utf-8', 'internal error\n');
        else res.destroy();
      }
    });
    server.on('upgrade', (req, socket, head) => {
      try {
        this.upgrade(req, socket, head);
      } catch {
        socket.destroy();
      }
    });
  }

  /**
   * The console as a serving host's surface at `address` (`HOST:PORT`, port 0: any free one;
   * `--http`): `serve({ console: ConsoleServer.at('127.0.0.1:8080') })`. The address is checked
   * against the config (loopback unless console.addresses names it) before the host takes
   * anything; the console listens over the host's gate.
   */
  static at(address: string): SurfaceStarter<ConsoleServer> {
    return (config) => {
      const bound = parseConsoleAddress(address, config.console.addresses);
      return (gate) => ConsoleServer.listen(gate, bound);
    };
  }

  /** Listens on `address` (port 0: any free port, see `url`). */
  static async listen(gate: Gate, address: ConsoleAddress): Promise<ConsoleServer> {
    const server = createServer({ requestTimeout: 30_000, headersTimeout: 10_000 });
    const bound = await new Promise<ConsoleAddress>((resolve, reject) => {
      server.once('error', (err: NodeJS.ErrnoException) => {
        reject(new TmuxDriveError('CONSOLE_LISTEN_FAILED', `the console cannot listen on ${address.host}:${address.port} (${err.code ?? err.message})`, { host: address.host, port: address.port, errno: err.code ?? null }));
      });
      server.listen(address.port, address.host, () => {
        const a = server.address();
        resolve({ host: address.host, port: typeof a === 'object' && a ? a.port : address.port });
      });
    });
    server.on('error', () => undefined);
    try {
      return new ConsoleServer(server, gate, bound);
    } catch (err) {
      server.close();
      throw err;
    }
  }

  get url(): string {
    const h = this.address.host;
    return `http://${h.includes(':') ? `[${h}]` : h}:${this.address.port}/`;
  }

  get socketCount(): number {
    return this.sockets.size;
  }

  async close(): Promise<void> {
    for (const ws of this.sockets) ws.close(1001, 'host_closing');
    this.wss.close();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private reply(res: ServerResponse, status: number, type: string, body: string | Buffer, extra: Record<string, string> = {}): void {
    res.writeHead(status, { ...HEADERS, 'Content-Type': type, ...extra });
    res.end(body);
  }

  private request(req: IncomingMessage, res: ServerResponse): void {
    if (!this.auth.hostAllowed(req)) return this.reply(res, 421, 'text/plain; charset=utf-8', 'this console answers only to its own address\n');
    const path = (req.url ?? '/').split('?', 1)[0] as string;
    if (path === '/login' && req.method === 'POST') return void this.login(req, res);
    const identity = this.auth.identify(req);
    if (!identity) {
      // The login form is the one thing shown without a token (static, no screen text in it).
      const form = this.assets.get('/login') as Asset;
      return this.reply(res, 401, form.type, form.body, { 'WWW-Authenticate': 'Bearer realm="tmux-drive console"' });
    }
    if (req.method !== 'GET' && !(req.method === 'POST' && path === '/logout')) return this.reply(res, 405, 'text/plain; charset=utf-8', 'method not allowed\n');
    if (path === '/logout') {
      if (!this.auth.originAllowed(req)) return this.reply(res, 403, 'text/plain; charset=utf-8', 'cross-origin request refused\n');
      this.auth.logout(req);
      return this.reply(res, 303, 'text/plain; charset=utf-8', '', { Location: '/', 'Set-Cookie': ConsoleAuth.clearedCookie() });
    }
    if (path === '/api/whoami') return this.reply(res, 200, 'application/json', JSON.stringify(this.whoami(identity)));
    const drivePage = /^\/drive\/([^/]+)$/.exec(path);
    const asset = drivePage ? (driveName(drivePage[1]) !== undefined ? this.assets.get('/drive') : undefined) : path === '/login' || path === '/drive' ? undefined : this.assets.get(path);
    if (!asset) return this.reply(res, 404, 'text/plain; charset=utf-8', 'not found\n');
    this.reply(res, 200, asset.type, asset.body);
  }

  private whoami(identity: Identity): Record<string, unknown> {
    const { tokenId, scope, label } = identity;
    return { tokenId, classes: scope.classes, ...(scope.drives ? { drives: scope.drives } : {}), ...(scope.allowIds ? { allowIds: scope.allowIds } : {}), ...(label ? { label } : {}) };
  }

  private login(req: IncomingMessage, res: ServerResponse): void {
    // Another site must not log this browser in with a token of its choosing.
    if (!this.auth.originAllowed(req) || req.headers.origin === undefined) return this.reply(res, 403, 'text/plain; charset=utf-8', 'cross-origin login refused\n');
    let body = '';
    let tooLarge = false;
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      if (tooLarge) return;
      body += chunk;
      if (body.length > MAX_LOGIN_BODY) {
        tooLarge = true;
        this.reply(res, 413, 'text/plain; charset=utf-8', 'too large\n');
        req.destroy();
      }
    });
    req.on('end', () => {
      if (tooLarge) return;
      const token = new URLSearchParams(body).get('token')?.trim();
      try {
        const { id } = this.auth.login(token);
        this.reply(res, 303, 'text/plain; charset=utf-8', '', { Location: '/', 'Set-Cookie': ConsoleAuth.cookie(id) });
      } catch {
        const form = this.assets.get('/login') as Asset;
        this.reply(res, 401, form.type, form.body);
      }
    });
  }

  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const refuse = (status: number, text: string): void => {
      socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    };
    if (!this.auth.hostAllowed(req)) return refuse(421, 'Misdirected Request');
    // A browser always sends Origin: another site's page is refused here, cookie or not.
    if (!this.auth.originAllowed(req)) return refuse(403, 'Forbidden');
    const identity = this.auth.identify(req);
    if (!identity) return refuse(401, 'Unauthorized');
    const path = (req.url ?? '/').split('?', 1)[0] as string;
    const name = driveName(/^\/ws\/drive\/([^/]+)$/.exec(path)?.[1]);
    if (path !== '/ws/fleet' && name === undefined) return refuse(404, 'Not Found');
    if (this.sockets.size >= MAX_SOCKETS) return refuse(503, 'Service Unavailable');
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      this.sockets.add(ws);
      ws.on('close', () => this.sockets.delete(ws));
      if (name === undefined) {
        void openFleetSocket(ws, this.gate, identity, this.fleet);
        return;
      }
      const page = new DriveSocket({ ws, gate: this.gate, identity, drive: name, fleet: this.fleet, stillValid: () => this.auth.stillValid(identity) });
      void page.start();
    });
  }
}
