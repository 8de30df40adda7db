/**
 * The child's environment is built, never inherited: a curated base, the entry's fixed `env`,
 * and only the caller variables the entry names in `passEnv`. Interpreter-control variables and
 * nested-CLI markers are refused even when an operator lists them, because they turn a harmless
 * launch into arbitrary code (NODE_OPTIONS=--require, BASH_ENV, PYTHONSTARTUP, …).
 */
import { PolicyError, UsageError } from '../common/errors.js';

const SCRUBBED_NAMES: ReadonlySet<string> = new Set([
  'NODE_OPTIONS', 'NODE_PATH', 'NODE_REPL_EXTERNAL_MODULE', 'BASH_ENV', 'ENV', 'PROMPT_COMMAND', 'SHELLOPTS', 'BASHOPTS',
  'PYTHONSTARTUP', 'PYTHONPATH', 'PYTHONHOME', 'PYTHONINSPECT', 'PERL5OPT', 'PERL5LIB', 'PERLLIB', 'RUBYOPT', 'RUBYLIB',
  'LD_PRELOAD', 'LD_LIBRARY_PATH', 'LD_AUDIT', 'GCONV_PATH', 'IFS', 'CDPATH', 'GLOBIGNORE', 'JAVA_TOOL_OPTIONS',
  '_JAVA_OPTIONS', 'GIT_SSH_COMMAND', 'EDITOR_OPTIONS', 'CLAUDECODE', 'TMUX', 'TMUX_PANE', 'TMUX_TMPDIR',
  // Also code by environment: python imports a warnings category's module, runs a user site's .pth
  // files and a breakpoint hook; git applies config given through the environment (core.pager,
  // core.sshCommand, …) and runs the helpers named here; zsh, Lua, Perl's debugger, the JDK and
  // .NET load the files or hooks named here. (GIT_PAGER=cat and the like stay usable in an
  // entry's env: they name a command the operator chose.)
  'PYTHONWARNINGS', 'PYTHONUSERBASE', 'PYTHONBREAKPOINT', 'PYTHONEXECUTABLE', 'PERL5DB', 'LUA_INIT', 'ZDOTDIR',
  'JDK_JAVA_OPTIONS', 'DOTNET_STARTUP_HOOKS', 'GIT_CONFIG_PARAMETERS', 'GIT_CONFIG_COUNT', 'GIT_EXEC_PATH', 'GIT_SSH',
  'GIT_PROXY_COMMAND', 'GIT_EXTERNAL_DIFF',
]);
const SCRUBBED_PREFIXES: readonly string[] = ['CLAUDE_CODE_', 'TMUX_DRIVE_', 'BASH_FUNC_', 'LD_', 'DYLD_', 'GIT_CONFIG_KEY_', 'GIT_CONFIG_VALUE_', 'LUA_INIT_'];

/** True for a variable no drive may receive, whoever asks. */
export function isScrubbedVariable(name: string): boolean {
  return SCRUBBED_NAMES.has(name) || SCRUBBED_PREFIXES.some((p) => name.startsWith(p)) || name.includes('%%');
}

export interface ChildEnvInput {
  /** HOME as the jail sees it. */
  readonly home: string;
  /** Fixed variables from the allow entry (operator-set). */
  readonly entryEnv: Readonly<Record<string, string>>;
  /** Names a caller may set. */
  readonly passEnv: readonly string[];
  /** What the caller asked for through create({ env }). */
  readonly callerEnv: Readonly<Record<string, string>>;
}

export const CURATED_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

export function buildChildEnv(input: ChildEnvInput): Record<string, string> {
  const env: Record<string, string> = {
    PATH: CURATED_PATH,
    HOME: input.home,
    LANG: 'C.UTF-8',
    TERM: 'tmux-256color',
  };
  for (const [k, val] of Object.entries(input.entryEnv)) {
    if (isScrubbedVariable(k)) continue;
    env[k] = val;
  }
  for (const [k, val] of Object.entries(input.callerEnv)) {
    if (!input.passEnv.includes(k)) {
      throw new PolicyError('NOT_ALLOWED', `env variable "${k}" is not in this entry's passEnv; an operator must list it there first`, { variable: k });
    }
    if (isScrubbedVariable(k)) {
      throw new PolicyError('NOT_ALLOWED', `env variable "${k}" controls an interpreter or the driver and is never passed to a drive`, { variable: k });
    }
    if (typeof val !== 'string') throw new UsageError('BAD_ARGUMENT', `env variable "${k}" must be a string`, { variable: k });
    if (val.includes('\0')) throw new PolicyError('NOT_ALLOWED', `env variable "${k}" contains a NUL byte`, { variable: k });
    env[k] = val;
  }
  return env;
}
