/**
 * What both recorders share: where the package is, the pane's process root, and the cells of a
 * screen re-parsed from its ANSI read into a fresh mirror (the read gives text; perception needs
 * cells: attributes, wide characters).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Mirror } from '../../lib/emulator/mirror.js';
import { findProcesses, processTree } from '../../backends/process/process-tree.js';

export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error('package.json not found above the recorder');
    dir = up;
  }
  return dir;
}

export function replayCells(ansi: string, cols: number, rows: number): ReturnType<Mirror['cells']> & { lines: readonly string[] } {
  const mirror = new Mirror({ cols, rows, scrollback: 0, syncWriteMaxBytes: 1 << 24 });
  mirror.write(new TextEncoder().encode(ansi));
  const cells = mirror.cells();
  const lines = mirror.snapshot({ format: 'text' }).lines;
  mirror.dispose();
  return { ...cells, lines };
}

/** The pane's root pid: the tmux server's child (bwrap), found by the drive's socket path. */
export function paneRoot(socket: string): number | undefined {
  // The server's command line names the socket; control clients (-C) do too and are not it.
  for (const pid of findProcesses((cmd) => cmd.includes(socket) && !cmd.includes('\0-C\0'))) {
    const child = processTree(pid).find((p) => p.ppid === pid && !p.comm.startsWith('tmux'));
    if (child) return child.pid;
  }
  return undefined;
}

/** The version a package installed under `aiDir` declares. */
export function installedVersion(aiDir: string, pkg: string): string | undefined {
  try {
    return (JSON.parse(readFileSync(join(aiDir, 'node_modules', pkg, 'package.json'), 'utf8')) as { version?: string }).version;
  } catch {
    return undefined;
  }
}
