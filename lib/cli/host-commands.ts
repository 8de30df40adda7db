/**
 * The commands about the host rather than one drive: serve (the serving host in the foreground),
 * token (its capability tokens), mcp (the MCP server on stdio) and doctor (this machine).
 */
import { CAPABILITY_CLASSES, type CapabilityClass } from '../wire/protocol.js';
import { choiceArg, usageError } from './parse-command-line.js';
import { renderTable } from './render-text.js';
import { str, type CommandSpec } from './command-spec.js';

const DURATION_UNITS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `90s`, `30m`, `12h`, `7d` (or plain milliseconds) as milliseconds. */
function durationArg(label: string, raw: string): number {
  const m = /^(\d{1,12})(ms|s|m|h|d)?$/.exec(raw);
  if (!m) throw usageError(`${label} must be a duration such as 90s, 30m, 12h or 7d (got "${raw}")`, { label });
  return Number(m[1]) * (DURATION_UNITS[m[2] ?? 'ms'] ?? 1);
}

export const doctorCommand: CommandSpec = {
  name: 'doctor',
  usage: 'doctor',
  summary: 'check this machine: tmux, bwrap and user namespaces, node-pty, SQLite, the data dir, the config',
  options: {},
  positionals: [0, 0],
  async run(ctx) {
    const { runDoctor, renderDoctor } = await import('./doctor.js');
    const report = await runDoctor({ ...(ctx.global.dataDir ? { dataDir: ctx.global.dataDir } : {}), ...(ctx.global.config ? { config: ctx.global.config } : {}) });
    const failed = report.checks.filter((c) => !c.ok && c.required).map((c) => c.name);
    if (failed.length > 0) {
      throw new DoctorFailed(`${failed.length} required check(s) failed: ${failed.join(', ')}`, { json: report, text: renderDoctor(report) });
    }
    return { json: report, text: renderDoctor(report) };
  },
};

export const mcpCommand: CommandSpec = {
  name: 'mcp',
  usage: 'mcp',
  summary: 'serve the nine terminal_session_* tools over MCP on stdio (through the serving host when one serves, else one long-lived driver)',
  options: {},
  positionals: [0, 0],
  async run(ctx) {
    const { runMcpServer } = await import('../mcp/server.js');
    await runMcpServer({ gate: { ...ctx.gateOptions, reattach: 'all', persistent: true, owner: `tmux-drive mcp (pid ${process.pid})` } });
    return { json: null, text: '', raw: true };
  },
};

export const serveCommand: CommandSpec = {
  name: 'serve',
  usage: 'serve [--standby] [--http HOST:PORT]',
  summary: 'serve this data dir in the foreground: the CLI, tmux-drive mcp and clients go through it; SIGTERM stops it, the drives keep running',
  help: [
    '--standby  wait while another host serves, and take over the moment it ends (killed included)',
    '--http HOST:PORT  also serve the web console there (loopback unless the config lists the address in console.addresses); log in with a token',
    'One host per data dir: a second serve (without --standby) fails with HOST_HELD naming the holder.',
    'Ready when it prints "serving …" on stdout; logs go to stderr.',
  ],
  options: { standby: { type: 'boolean' }, http: { type: 'string' } },
  positionals: [0, 0],
  async run(ctx) {
    const { serve } = await import('../serve/serve.js');
    const http = typeof ctx.values.http === 'string' ? ctx.values.http : undefined;
    // Loaded only when asked for: a host without --http never imports the web stack.
    const webConsole = http === undefined ? undefined : (await import('../console/console-server.js')).ConsoleServer.at(http);
    const log = (message: string): void => void ctx.stderr.write(`tmux-drive serve: ${message.replace(/\s*\n\s*/g, ' ')}\n`);
    const standby = ctx.values.standby === true;
    const host = await serve({
      ...(ctx.global.dataDir ? { dataDir: ctx.global.dataDir } : {}),
      ...(ctx.global.config ? { config: ctx.global.config } : {}),
      ...(ctx.global.adoptOrphans ? { adoptOrphans: true } : {}),
      standby,
      ...(webConsole ? { console: webConsole } : {}),
      signal: ctx.signal,
      logger: { warn: (m) => log(`warning: ${m}`), info: log },
      onWaiting: (holder) => log(holder ? `standby: pid ${holder.pid} serves; waiting to take over` : 'standby: in-process commands hold the data dir; waiting for them'),
    });
    const live = host.driver.list().filter((i) => i.state === 'live').length;
    const ready = { serving: host.info.dataDir, socket: host.socketPath, pid: process.pid, drives: live, ...(host.console ? { console: host.console.url } : {}) };
    ctx.stdout.write(ctx.global.json ? `${JSON.stringify(ready)}\n` : `serving ${ready.serving} on ${ready.socket} (pid ${ready.pid}, ${live} live drive(s))${host.console ? `; console at ${host.console.url}` : ''}\n`);
    await new Promise<void>((resolve) => {
      if (ctx.signal.aborted) resolve();
      ctx.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    log('stopping: the drives keep running');
    await host.close();
    return { json: null, text: '', raw: true };
  },
};

export const tokenCommand: CommandSpec = {
  name: 'token',
  usage: 'token mint (--observe|--drive|--admin)… [--for NAME]… [--allow ID]… [--ttl DURATION] [--label TEXT] | token list | token revoke ID',
  summary: 'capability tokens of the serving host: mint one for an agent (printed once), list them, revoke one',
  help: [
    '--observe         list, read, status, transcript, wait, subscribe, events',
    '--drive           send, key, resize, signal',
    '--admin           create, kill, attach, token mint/revoke/list',
    '--for NAME        only this drive (repeatable); list shows only these',
    '--allow ID        only drives of this allow entry (repeatable)',
    '--ttl DURATION    expires after it: 90s, 30m, 12h, 7d (at most 366d)',
    'An agent presents it in TMUX_DRIVE_TOKEN; the CLI then goes only through the host.',
  ],
  options: { observe: { type: 'boolean' }, drive: { type: 'boolean' }, admin: { type: 'boolean' }, for: { type: 'string', multiple: true }, allow: { type: 'string', multiple: true }, ttl: { type: 'string' }, label: { type: 'string' } },
  positionals: [1, 2],
  async run(ctx) {
    const sub = choiceArg('token', ctx.positionals[0], ['mint', 'list', 'revoke'] as const);
    if (sub === 'revoke') {
      const id = ctx.positionals[1];
      if (id === undefined) throw usageError('token revoke: the token id is required (see tmux-drive token list)');
      await (await ctx.gate()).client.revoke(id);
      return { json: { id, revoked: true }, text: `revoked ${id}` };
    }
    if (ctx.positionals.length > 1) throw usageError(`token ${sub}: unexpected argument "${ctx.positionals[1] ?? ''}"`);
    if (sub === 'list') {
      const tokens = await (await ctx.gate()).client.tokens();
      const rows = tokens.map((t) => [t.id, t.scope.classes.join(','), t.scope.drives?.join(',') ?? '*', t.scope.allowIds?.join(',') ?? '*', t.scope.expiresAt ? new Date(t.scope.expiresAt).toISOString() : 'never', t.label ?? '']);
      return { json: { tokens }, text: tokens.length === 0 ? 'no tokens (the owner token is always valid)' : renderTable(['ID', 'CLASSES', 'DRIVES', 'ALLOW', 'EXPIRES', 'LABEL'], rows) };
    }
    const classes = CAPABILITY_CLASSES.filter((c: CapabilityClass) => ctx.values[c] === true);
    if (classes.length === 0) throw usageError('token mint: give at least one of --observe, --drive, --admin');
    const drives = ctx.values.for as string[] | undefined;
    const allowIds = ctx.values.allow as string[] | undefined;
    const ttl = str(ctx.values.ttl);
    const minted = await (await ctx.gate()).client.mint({
      classes,
      ...(drives ? { drives } : {}),
      ...(allowIds ? { allowIds } : {}),
      ...(ttl !== undefined ? { ttlMs: durationArg('--ttl', ttl) } : {}),
      ...(str(ctx.values.label) !== undefined ? { label: str(ctx.values.label) } : {}),
    });
    // Text mode prints the token alone, for TOKEN=$(tmux-drive token mint …).
    return { json: minted, text: minted.token };
  },
};

/** doctor found a required check failing: an error, carrying the report to print first. */
export class DoctorFailed extends Error {
  readonly code = 'DOCTOR_FAILED';
  constructor(
    message: string,
    readonly report: { readonly json: unknown; readonly text: string },
  ) {
    super(message);
    this.name = 'DoctorFailed';
  }
}
