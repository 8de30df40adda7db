/**
 * The CLI's commands as one table. Each maps 1:1 onto a Driver/Session call: the CLI parses and
 * prints, the library decides (allowlist, config, leases). A surface adds fluency, never authority.
 * The drive's own commands are in drive-commands.ts, the host's (serve, token, mcp, doctor) in
 * host-commands.ts; the drives' lifecycle (create, list, prune, attach) is here.
 */
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { intArg, usageError } from './parse-command-line.js';
import { renderTable, shellQuote } from './render-text.js';
import { str, type CommandSpec } from './command-spec.js';
import { keyCommand, killCommand, readCommand, resizeCommand, sendCommand, signalCommand, statusCommand, transcriptCommand, waitCommand } from './drive-commands.js';
import { doctorCommand, mcpCommand, serveCommand, tokenCommand } from './host-commands.js';

export type { CommandContext, CommandResult, CommandSpec } from './command-spec.js';
export { WAIT_TIMEOUT_EXIT } from './drive-commands.js';
export { DoctorFailed } from './host-commands.js';

function parseEnv(pairs: readonly string[]): Record<string, string> | undefined {
  if (pairs.length === 0) return undefined;
  const env: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw usageError(`--env takes NAME=VALUE (got "${pair}")`);
    env[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return env;
}

export const createCommand: CommandSpec = {
  name: 'create',
  usage: 'create --allow ID [--name NAME] [--project P] [--cwd DIR] [--cols N] [--rows N] [--env NAME=VALUE]… [--objective TEXT] [-- ARGS…]',
  summary: 'launch an allowlisted program in its own tmux server (sandboxed); it keeps running after this command',
  help: [
    '--allow ID        the allow entry (from the operator config) to launch',
    '--name NAME       a stable name to find the drive again (default: random); also its id',
    '--project P       run in <dataDir>/workspace/projects/P (created once, reopened by name)',
    '--cwd DIR         a directory inside the workspace (outside: clamped to it)',
    '--env NAME=VALUE  a variable the allow entry lists in passEnv (repeatable)',
    '-- ARGS…          the program\'s arguments (after the entry\'s pinned argsPrefix)',
  ],
  options: {
    allow: { type: 'string' },
    name: { type: 'string' },
    project: { type: 'string' },
    cwd: { type: 'string' },
    cols: { type: 'string' },
    rows: { type: 'string' },
    env: { type: 'string', multiple: true },
    objective: { type: 'string' },
  },
  positionals: [0, 0],
  passThrough: true,
  async run(ctx) {
    const allowId = str(ctx.values.allow);
    if (allowId === undefined) throw usageError('create: --allow ID is required (the id of an allow entry in the config)');
    const cols = intArg('--cols', str(ctx.values.cols), 2, 1000);
    const rows = intArg('--rows', str(ctx.values.rows), 2, 1000);
    const env = parseEnv((ctx.values.env as string[] | undefined) ?? []);
    const opts = {
      allowId,
      ...(ctx.rest.length > 0 ? { args: [...ctx.rest] } : {}),
      ...(str(ctx.values.name) !== undefined ? { name: str(ctx.values.name) } : {}),
      ...(str(ctx.values.project) !== undefined ? { project: str(ctx.values.project) } : {}),
      ...(str(ctx.values.cwd) !== undefined ? { cwd: str(ctx.values.cwd) } : {}),
      ...(cols !== undefined ? { cols } : {}),
      ...(rows !== undefined ? { rows } : {}),
      ...(env ? { env } : {}),
      ...(str(ctx.values.objective) !== undefined ? { objective: str(ctx.values.objective) } : {}),
    };
    const s = await (await ctx.gate()).client.create(opts);
    const attach = await s.attachCommand();
    return {
      json: { ...s.info, attachCommand: attach },
      text: `created ${s.id} (allow ${s.info.allowId}, ${s.info.cols}x${s.info.rows}); it keeps running: drive it with tmux-drive send/key/wait/read ${s.id}\ntake over: ${shellQuote(attach)}`,
    };
  },
};

export const listCommand: CommandSpec = {
  name: 'list',
  usage: 'list',
  summary: 'the drives this host can drive (live, exited, failed)',
  options: {},
  positionals: [0, 0],
  async run(ctx) {
    const list = await (await ctx.gate()).client.list();
    const rows = list.map((i) => [i.id, i.allowId, i.state, i.reason ?? (i.exit ? `exit ${i.exit.code ?? `signal ${i.exit.signal ?? '?'}`}` : ''), i.createdAt]);
    return {
      json: { sessions: list },
      text: list.length === 0 ? 'no drives' : renderTable(['ID', 'ALLOW', 'STATE', 'REASON', 'CREATED'], rows),
    };
  },
};

export const pruneCommand: CommandSpec = {
  name: 'prune',
  usage: 'prune [ID…]',
  summary: 'end and forget finished drives (exited or failed; all, or these): a server still up is killed (verified), the journal row removed',
  options: {},
  positionals: [0, 1000],
  async run(ctx) {
    const ids = ctx.positionals.length > 0 ? [...ctx.positionals] : undefined;
    const pruned = await (await ctx.gate()).client.prune(ids ? { ids } : {});
    const rows = pruned.map((p) => [p.id, p.state, p.pruned ? 'pruned' : `kept: ${p.kept ?? 'unknown'}`]);
    return {
      json: { pruned },
      text: pruned.length === 0 ? 'no finished drives' : renderTable(['ID', 'STATE', 'RESULT'], rows),
      ...(pruned.some((p) => !p.pruned) ? { exitCode: 1 } : {}),
    };
  },
};

export const attachCommand: CommandSpec = {
  name: 'attach',
  usage: 'attach ID [--read-only]',
  summary: 'take over in this terminal (tmux attach; detach with C-b d): through a serving host, every other caller\'s input is refused (OPERATOR_HOLD) meanwhile; without a terminal, print the command',
  options: { 'read-only': { type: 'boolean' } },
  positionals: [1, 1],
  async run(ctx) {
    const access = await ctx.gate();
    const s = access.client.drive(ctx.positionals[0] as string);
    const readOnly = ctx.values['read-only'] === true;
    const argv = await s.attachCommand({ readOnly });
    if (!ctx.stdinIsTty || ctx.global.json) return { json: { id: s.id, argv }, text: shellQuote(argv) };
    if (access.mode === 'host' && !readOnly) {
      // Through a serving host, the person at this terminal holds agents off (OPERATOR_HOLD)
      // while attached; the hold ends when tmux exits, or with this process's connection. The
      // client takes it again on a standby that takes over; one it could not is said once tmux
      // exits (the terminal is tmux's until then).
      const lost: string[] = [];
      const onHoldLost = access.client.on('holdLost', (_drive, err) => lost.push(`${err.code}: ${err.message}`));
      const onClosed = access.client.on('closed', (reason) => lost.push(`no host: ${reason}`));
      await s.hold();
      try {
        return { json: null, text: '', exitCode: await runInherited(argv) };
      } finally {
        onHoldLost.dispose();
        onClosed.dispose();
        // No host now (killed, none took over yet): the hold went with it; do not wait for one.
        if (access.client.connected) await s.release().catch(() => false);
        for (const why of lost) ctx.stderr.write(`tmux-drive attach: warning: your hold on ${s.id} ended while you were attached (others' input was no longer refused): ${why.replace(/\s*\n\s*/g, ' ')}\n`);
      }
    }
    // The operator's tmux client needs no lease: the driver is closed first, so that the next
    // host (or this CLI again) can drive while the operator watches.
    return { json: null, text: '', afterClose: () => runInherited(argv) };
  },
};

/** Every command, in the order help lists them. */
export const COMMANDS: readonly CommandSpec[] = [
  createCommand,
  listCommand,
  readCommand,
  sendCommand,
  keyCommand,
  waitCommand,
  statusCommand,
  resizeCommand,
  signalCommand,
  killCommand,
  pruneCommand,
  attachCommand,
  doctorCommand,
  mcpCommand,
  transcriptCommand,
  serveCommand,
  tokenCommand,
];

/** Runs the operator's tmux client on this terminal and returns its exit status. */
function runInherited(argv: readonly string[]): Promise<number> {
  const [file, ...args] = argv;
  return new Promise((resolve, reject) => {
    const child = spawn(file as string, args, { stdio: 'inherit' });
    child.once('error', reject);
    child.once('exit', (code, signal) => resolve(code ?? 128 + (signal ? (constants.signals[signal] ?? 0) : 0)));
  });
}
