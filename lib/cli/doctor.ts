/**
 * `tmux-drive doctor`: what this machine has and lacks, each line ok / FAIL / warn with the fix.
 * Every check runs the real thing (tmux -V, a bwrap jail, loading node-pty and SQLite, writing
 * into the data dir, validating the config) rather than guessing from file names.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { findExecutable } from '../launch/plan-launch.js';
import { defaultDataDir, loadConfig, type LoadedConfig } from '../driver/load-config.js';
import { TmuxDriveError } from '../common/errors.js';
import { checkDataDir as checkDataDirPath, makeDataDir } from '../driver/data-dir.js';
import { nativeShmView } from '../../journal/shm-view.js';

export interface DoctorCheck {
  readonly name: string;
  readonly ok: boolean;
  /** A failing required check makes doctor exit non-zero; others are warnings. */
  readonly required: boolean;
  readonly detail: string;
  readonly fix?: string;
}

export interface DoctorReport {
  readonly ok: boolean;
  readonly checks: readonly DoctorCheck[];
}

export interface DoctorOptions {
  readonly dataDir?: string;
  readonly config?: string;
  readonly env?: NodeJS.ProcessEnv;
}

/** tmux 3.2 brought the control-mode features the backend relies on (pause-after, subscriptions). */
const MIN_TMUX: readonly [number, number] = [3, 2];
const MIN_NODE_MAJOR = 20;
const PROBE_TIMEOUT_MS = 10_000;

function run(file: string, args: readonly string[]): { status: number | null; stdout: string; stderr: string; error?: Error } {
  const r = spawnSync(file, args, { encoding: 'utf8', timeout: PROBE_TIMEOUT_MS, stdio: ['ignore', 'pipe', 'pipe'] });
  return { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '', ...(r.error ? { error: r.error } : {}) };
}

function firstLine(text: string): string {
  return text.trim().split('\n')[0] ?? '';
}

/** "tmux 3.3a" → [3, 3]; "tmux next-3.4" → [3, 4]; unparsable → undefined. */
export function tmuxVersion(output: string): readonly [number, number] | undefined {
  const m = /(\d+)\.(\d+)/.exec(output);
  return m ? [Number(m[1]), Number(m[2])] : undefined;
}

function checkNode(): DoctorCheck {
  const major = Number(process.versions.node.split('.')[0]);
  return major >= MIN_NODE_MAJOR
    ? { name: 'node', ok: true, required: true, detail: `node ${process.versions.node} at ${process.execPath}` }
    : { name: 'node', ok: false, required: true, detail: `node ${process.versions.node} is older than ${MIN_NODE_MAJOR}`, fix: `install Node.js ${MIN_NODE_MAJOR} or later` };
}

function checkTmux(): DoctorCheck {
  const path = findExecutable('tmux');
  const fix = `install tmux ${MIN_TMUX.join('.')} or later: apt-get install tmux`;
  if (!path) return { name: 'tmux', ok: false, required: true, detail: 'tmux is not on PATH', fix };
  const r = run(path, ['-V']);
  const text = firstLine(r.stdout || r.stderr);
  const v = tmuxVersion(text);
  if (r.status !== 0 || !v) return { name: 'tmux', ok: false, required: true, detail: `${path} -V failed: ${r.error?.message ?? (text || `exit ${String(r.status)}`)}`, fix };
  const ok = v[0] > MIN_TMUX[0] || (v[0] === MIN_TMUX[0] && v[1] >= MIN_TMUX[1]);
  return ok
    ? { name: 'tmux', ok, required: true, detail: `${text} at ${path}` }
    : { name: 'tmux', ok, required: true, detail: `${text} at ${path} is older than ${MIN_TMUX.join('.')}`, fix };
}

function checkBwrap(sandboxDisabled: boolean): DoctorCheck {
  const required = !sandboxDisabled;
  const note = sandboxDisabled ? ' (not needed: the config sets unsafeDisableSandbox)' : '';
  const path = findExecutable('bwrap');
  if (!path) {
    return { name: 'bwrap', ok: false, required, detail: `bubblewrap (bwrap) is not on PATH: nothing can launch sandboxed${note}`, fix: 'apt-get install bubblewrap' };
  }
  const version = firstLine(run(path, ['--version']).stdout) || 'bwrap';
  const r = run(path, ['--ro-bind', '/', '/', '--unshare-all', '--die-with-parent', '/bin/true']);
  if (r.status === 0) return { name: 'bwrap', ok: true, required, detail: `${version} at ${path}; user namespaces work` };
  return {
    name: 'bwrap',
    ok: false,
    required,
    detail: `${path} cannot create a jail: ${r.error?.message ?? (firstLine(r.stderr) || `exit ${String(r.status)}`)}${note}`,
    fix: 'allow unprivileged user namespaces: sysctl -w kernel.unprivileged_userns_clone=1 (Debian), or kernel.apparmor_restrict_unprivileged_userns=0 (Ubuntu 24.04+); in a container, run it with user namespaces allowed',
  };
}

async function checkNodePty(required: boolean): Promise<DoctorCheck> {
  const why = required ? '' : ' (needed only by allow entries with backend: spawn)';
  try {
    const mod = (await import('node-pty')) as { spawn?: unknown; default?: { spawn?: unknown } };
    const ok = typeof (mod.spawn ?? mod.default?.spawn) === 'function';
    return ok
      ? { name: 'node-pty', ok, required, detail: 'node-pty loads' }
      : { name: 'node-pty', ok, required, detail: `node-pty loaded without a spawn function${why}`, fix: 'npm rebuild node-pty' };
  } catch (err) {
    return { name: 'node-pty', ok: false, required, detail: `node-pty does not load: ${firstLine((err as Error).message)}${why}`, fix: 'npm rebuild node-pty (needs python3, make and g++)' };
  }
}

async function checkSqlite(): Promise<DoctorCheck> {
  try {
    const mod = (await import('better-sqlite3')) as unknown as { default: new (file: string) => { prepare(sql: string): { get(): unknown }; close(): void } };
    const db = new mod.default(':memory:');
    db.prepare('select 1').get();
    db.close();
    return { name: 'sqlite', ok: true, required: true, detail: 'better-sqlite3 loads (the journal)' };
  } catch (err) {
    return { name: 'sqlite', ok: false, required: true, detail: `better-sqlite3 does not load: ${firstLine((err as Error).message)}`, fix: 'npm rebuild better-sqlite3 (needs python3, make and g++)' };
  }
}

/** The one native module of this package (not required: without it the lease check reads with pread(2)). */
function checkShmView(): DoctorCheck {
  const loaded = nativeShmView();
  return loaded === true
    ? { name: 'shm view', ok: true, required: false, detail: 'native/shm_view.c loads: the lease check reads the journal\'s WAL-index header from memory' }
    : { name: 'shm view', ok: false, required: false, detail: `${loaded}: the lease check reads the WAL-index header with pread(2), a system call per key`, fix: 'run npm install again where python3, make and g++ are: it builds native/shm_view.c with node-gyp' };
}

function checkDataDir(dataDir: string): DoctorCheck {
  try {
    // The library's own checks first (never a recursive mkdir under /proc, which spins).
    const real = makeDataDir(checkDataDirPath(dataDir));
    const probe = join(real, `.doctor-${process.pid}`);
    writeFileSync(probe, 'probe');
    rmSync(probe);
    // checkDataDirPath already refused a data dir whose drive sockets would not fit in sun_path.
    return { name: 'data dir', ok: true, required: true, detail: `${real} is writable` };
  } catch (err) {
    const detail = err instanceof TmuxDriveError ? `${err.code}: ${firstLine(err.message)}` : `${dataDir} is not writable: ${firstLine((err as Error).message)}`;
    return { name: 'data dir', ok: false, required: true, detail, fix: 'pick a writable directory of your own, outside /proc, /sys and /dev, with a short enough path, with --data-dir; or fix its owner and mode (700)' };
  }
}

function checkAllowEntries(loaded: LoadedConfig): DoctorCheck[] {
  const { allow } = loaded.config;
  if (allow.length === 0) {
    return [{ name: 'allowlist', ok: false, required: false, detail: 'the allowlist is empty: nothing can launch', fix: 'add entries under "allow" in the config file (see docs/guide.md)' }];
  }
  return allow.map((entry): DoctorCheck => {
    try {
      const binary = realpathSync(entry.match.path);
      accessSync(binary, constants.X_OK);
      return { name: `allow ${entry.id}`, ok: true, required: true, detail: `${entry.match.path}${binary === entry.match.path ? '' : ` → ${binary}`} (profile ${entry.profile ?? 'by id'}, backend ${entry.backend}, filesystem ${entry.scope.filesystem}, network ${entry.scope.network})` };
    } catch {
      return { name: `allow ${entry.id}`, ok: false, required: true, detail: `${entry.match.path} is not an executable file here`, fix: `install it or correct allow[id=${entry.id}].match.path` };
    }
  });
}

export async function runDoctor(opts: DoctorOptions = {}): Promise<DoctorReport> {
  const checks: DoctorCheck[] = [checkNode(), checkTmux()];
  let loaded: LoadedConfig | undefined;
  let configCheck: DoctorCheck;
  try {
    loaded = loadConfig(opts.config, opts.dataDir);
    configCheck = { name: 'config', ok: true, required: true, detail: `${loaded.source}: valid; ${loaded.config.allow.length} allow entr${loaded.config.allow.length === 1 ? 'y' : 'ies'}${loaded.config.allow.length ? ` (${loaded.config.allow.map((e) => e.id).join(', ')})` : ''}` };
  } catch (err) {
    const msg = err instanceof TmuxDriveError ? `${err.code}: ${err.message}` : (err as Error).message;
    configCheck = { name: 'config', ok: false, required: true, detail: msg, fix: 'correct the keys named above; the schema is docs/config.schema.json' };
  }
  const sandboxDisabled = loaded?.config.unsafeDisableSandbox ?? false;
  checks.push(checkBwrap(sandboxDisabled));
  checks.push(await checkNodePty(loaded?.config.allow.some((e) => e.backend === 'spawn') ?? false));
  checks.push(await checkSqlite());
  checks.push(checkShmView());
  checks.push(checkDataDir(resolve(opts.dataDir ?? loaded?.dataDir ?? defaultDataDir(opts.env))));
  checks.push(configCheck);
  if (loaded) {
    if (loaded.config.unsafeDisableSandbox) checks.push({ name: 'sandbox', ok: false, required: false, detail: 'unsafeDisableSandbox is set: drives run WITHOUT bwrap, with the host filesystem and network', fix: 'remove unsafeDisableSandbox from the config file' });
    checks.push(...checkAllowEntries(loaded));
  }
  return { ok: checks.every((c) => c.ok || !c.required), checks };
}

export function renderDoctor(report: DoctorReport): string {
  const width = Math.max(...report.checks.map((c) => c.name.length));
  return report.checks
    .map((c) => {
      const mark = c.ok ? 'ok  ' : c.required ? 'FAIL' : 'warn';
      return `${mark}  ${c.name.padEnd(width)}  ${c.detail}${!c.ok && c.fix ? `\n      ${' '.repeat(width)}  fix: ${c.fix}` : ''}`;
    })
    .join('\n');
}
