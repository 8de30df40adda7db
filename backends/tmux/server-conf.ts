/**
 * The generated tmux config of a drive. The session itself is created by the config file, not by
 * command-line arguments: tmux splits argv words that end in ';' into separate commands
 * (cmd_parse_from_arguments), so a caller's argument could become a tmux command. In the config
 * every word is single-quoted, which the tmux lexer takes fully literally.
 */
import { quote } from '../../lib/control/encode.js';

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
    `set -g default-size ${input.cols}x${input.rows}`,
    // A hook's `display-message -p` reaches control clients as a bare line (tmux 3.3a has no
    // pane-died notification); the backend confirms it with a pane_dead query.
    `set-hook -g pane-died ${quote(`display-message -p '${DIED_MARKER} #{pane_id}'`)}`,
    `new-session -d -s ${quote(input.session)} -x ${input.cols} -y ${input.rows} -c ${quote(input.cwd)} -- ${input.argv.map(quote).join(' ')}`,
    // After new-session: tmux 3.3a segfaults when `window-size manual` is global before the first
    // detached session exists (measured here).
    'set -g window-size manual',
    '',
  ].join('\n');
}
