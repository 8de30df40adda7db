/**
 * The generated tmux config of a drive. The session itself is created by the config file, not by
 * command-line arguments: tmux splits argv words that end in ';' into separate commands
 * (cmd_parse_from_arguments), so a caller's argument could become a tmux command. In the config
 * every word is single-quoted, which the tmux lexer takes fully literally.
 */
import { quote } from '../../lib/control/encode.js';

/**
 * One argv word for the config: single-quoted runs (fully literal) with each control byte as an
 * adjacent double-quoted octal escape, which the lexer joins into the same word ('a'"\012"'b').
 */
export function confWord(word: string): string {
  if (word.length === 0) return "''";
  return word
    .split(/([\x00-\x1f\x7f])/)
    .filter((part) => part.length > 0)
    .map((part) => (/^[\x00-\x1f\x7f]$/.test(part) ? `"\\${part.charCodeAt(0).toString(8).padStart(3, '0')}"` : quote(part)))
    .join('');
}

export const DIED_MARKER = 'tmux-drive:pane-died';

export interface ServerConfInput {
  readonly session: string;
  readonly cols: number;
  readonly rows: number;
  readonly scrollback: number;
  readonly cwd: string;
  readonly argv: readonly string[];
}

export function serverConf(input: ServerConfInput): string {
  if (input.argv.length < 2) {
    // tmux runs a single word through `$SHELL -c` (spawn.c): never give it one.
    throw new Error('a pane argv needs at least two words');
  }
  return [
    // history-limit applies to panes created after it is set: before new-session.
    `set -g history-limit ${input.scrollback}`,
    'set -g remain-on-exit on',
    "set -g remain-on-exit-format ''",
    'set -g scroll-on-clear off',
    'set -g status off',
    'set -s escape-time 0',
    "set -g update-environment ''",
    'set -s exit-unattached off',
    'set -g destroy-unattached off',
    'set -g automatic-rename off',
    'set -g allow-rename off',
    'set -s default-terminal tmux-256color',
    // A program must not reach tmux's paste buffers or an operator's clipboard through OSC 52.
    'set -s set-clipboard off',
    `set -g default-size ${input.cols}x${input.rows}`,
    // A hook's `display-message -p` reaches control clients as a bare line (tmux 3.3a has no
    // pane-died notification); the backend confirms it with a pane_dead query.
    `set-hook -g pane-died ${quote(`display-message -p '${DIED_MARKER} #{pane_id}'`)}`,
    `new-session -d -s ${quote(input.session)} -x ${input.cols} -y ${input.rows} -c ${confWord(input.cwd)} -- ${input.argv.map(confWord).join(' ')}`,
    // After new-session: tmux 3.3a segfaults when `window-size manual` is global before the first
    // detached session exists (measured here).
    'set -g window-size manual',
    '',
  ].join('\n');
}
