/**
 * No tmux command text outside lib/control/tmux-commands.ts (DESIGN invariant 2): every string
 * literal and template of lib/, backends/, journal/, bench/ and tools/ is read from the TypeScript
 * syntax tree (comments do not count) and searched for tmux 3.3a's command names used as commands.
 * This is how a caller's cwd once reached `new-session -c` and ran `#(…)` on the host: a command
 * line written as a template string somewhere else.
 */
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';

const ROOT = resolve(__dirname, '../../..');
const SCANNED = ['lib', 'backends', 'journal', 'bench', 'tools'];
const BUILDERS = 'lib/control/tmux-commands.ts';

/** `tmux list-commands` of 3.3a: name and alias. */
const COMMANDS: ReadonlyArray<readonly [string, string?]> = [
  ['attach-session', 'attach'], ['bind-key', 'bind'], ['break-pane', 'breakp'], ['capture-pane', 'capturep'], ['choose-buffer'], ['choose-client'],
  ['choose-tree'], ['clear-history', 'clearhist'], ['clear-prompt-history', 'clearphist'], ['clock-mode'], ['command-prompt'], ['confirm-before', 'confirm'],
  ['copy-mode'], ['customize-mode'], ['delete-buffer', 'deleteb'], ['detach-client', 'detach'], ['display-menu', 'menu'], ['display-message', 'display'],
  ['display-popup', 'popup'], ['display-panes', 'displayp'], ['find-window', 'findw'], ['has-session', 'has'], ['if-shell', 'if'], ['join-pane', 'joinp'],
  ['kill-pane', 'killp'], ['kill-server'], ['kill-session'], ['kill-window', 'killw'], ['last-pane', 'lastp'], ['last-window', 'last'], ['link-window', 'linkw'],
  ['list-buffers', 'lsb'], ['list-clients', 'lsc'], ['list-commands', 'lscm'], ['list-keys', 'lsk'], ['list-panes', 'lsp'], ['list-sessions', 'ls'],
  ['list-windows', 'lsw'], ['load-buffer', 'loadb'], ['lock-client', 'lockc'], ['lock-server', 'lock'], ['lock-session', 'locks'], ['move-pane', 'movep'],
  ['move-window', 'movew'], ['new-session', 'new'], ['new-window', 'neww'], ['next-layout', 'nextl'], ['next-window', 'next'], ['paste-buffer', 'pasteb'],
  ['pipe-pane', 'pipep'], ['previous-layout', 'prevl'], ['previous-window', 'prev'], ['refresh-client', 'refresh'], ['rename-session', 'rename'],
  ['rename-window', 'renamew'], ['resize-pane', 'resizep'], ['resize-window', 'resizew'], ['respawn-pane', 'respawnp'], ['respawn-window', 'respawnw'],
  ['rotate-window', 'rotatew'], ['run-shell', 'run'], ['save-buffer', 'saveb'], ['select-layout', 'selectl'], ['select-pane', 'selectp'],
  ['select-window', 'selectw'], ['send-keys', 'send'], ['send-prefix'], ['server-access'], ['set-buffer', 'setb'], ['set-environment', 'setenv'], ['set-hook'],
  ['set-option', 'set'], ['set-window-option', 'setw'], ['show-buffer', 'showb'], ['show-environment', 'showenv'], ['show-hooks'], ['show-messages', 'showmsgs'],
  ['show-options', 'show'], ['show-prompt-history', 'showphist'], ['show-window-options', 'showw'], ['source-file', 'source'], ['split-window', 'splitw'],
  ['start-server', 'start'], ['suspend-client', 'suspendc'], ['swap-pane', 'swapp'], ['swap-window', 'swapw'], ['switch-client', 'switchc'],
  ['unbind-key', 'unbind'], ['unlink-window', 'unlinkw'], ['wait-for', 'wait'],
];

const alternation = (words: readonly string[]): string => words.map((w) => w.replace(/[-]/g, '\\-')).join('|');
const NAMES = alternation(COMMANDS.map(([name]) => name));
const ALIASES = alternation(COMMANDS.flatMap(([, alias]) => (alias ? [alias] : [])));
/** A placeholder for `${…}` in a template: an argument we cannot see. */
const HOLE = '\u0001';
/**
 * A name used as a command: the whole string (an argv word), or a word followed by a flag, a
 * quoted or id argument, a placeholder, `;` or the end. Prose ("capture-pane polling") is not.
 */
const BY_NAME = new RegExp(`(?:^|[\\s;'"(\\[${HOLE}])(${NAMES})(?=$|\\s*;|\\s+[-'"%@$${HOLE}]|${HOLE})`);
/** An alias (set, send, display…) counts at the start of a string or after `;`, followed by a flag or a quote. */
const BY_ALIAS = new RegExp(`(?:^|;\\s*)(${ALIASES})(?=\\s+[-'"])`);

export function commandWordIn(text: string): string | undefined {
  return BY_NAME.exec(text)?.[1] ?? BY_ALIAS.exec(text)?.[1];
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') && !path.endsWith('.d.ts') ? [path] : [];
  });
}

interface Hit {
  readonly file: string;
  readonly line: number;
  readonly word: string;
  readonly text: string;
}

function hitsIn(path: string): Hit[] {
  const file = relative(ROOT, path);
  const source = ts.createSourceFile(file, readFileSync(path, 'utf8'), ts.ScriptTarget.ES2022, true);
  const hits: Hit[] = [];
  const check = (node: ts.Node, text: string): void => {
    const word = commandWordIn(text);
    if (word) hits.push({ file, line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1, word, text });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) check(node, node.text);
    else if (ts.isTemplateExpression(node)) check(node, node.head.text + node.templateSpans.map((s) => HOLE + s.literal.text).join(''));
    ts.forEachChild(node, visit);
  };
  visit(source);
  return hits;
}

describe('tmux command text lives in one module', () => {
  it('recognises command text and leaves prose alone', () => {
    for (const text of ['send-keys -t %0 -l x', `display-message -p -t ${HOLE} '#{pane_id}'`, 'set -g status off', 'kill-server', "a; set-hook -g x 'y'", `capture-pane -p -t ${HOLE}`, `new-session${HOLE}`, 'setw -g mode-keys vi', 'refresh-client -A']) {
      expect(commandWordIn(text), text).toBeDefined();
    }
    for (const text of ['capture-pane polling (subprocesses, 50 ms)', 'library / capture-pane polling, p50', 'paste-buffer-changed', 'client-session-changed', 'attach', 'wait', 'set', 'a tmux format', 'the list-clients reply']) {
      expect(commandWordIn(text), text).toBeUndefined();
    }
  });

  it(`finds none in ${SCANNED.join('/, ')}/ outside ${BUILDERS}`, () => {
    const all = SCANNED.flatMap((dir) => sourceFiles(join(ROOT, dir))).flatMap(hitsIn);
    // The scan reads real files: the builder module itself is full of command text.
    expect(all.filter((h) => h.file === BUILDERS).length).toBeGreaterThan(20);
    const outside = all.filter((h) => h.file !== BUILDERS).map((h) => `${h.file}:${h.line} ${h.word}: ${JSON.stringify(h.text.replaceAll(HOLE, '${…}'))}`);
    expect(outside).toEqual([]);
  });
});
