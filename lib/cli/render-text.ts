/** Readable renderings of API results for the CLI's text mode (--json prints the values as is). */
import type { SessionStatus } from '../perceive/status.js';
import type { WaitResult } from '../session/session.js';

/** A POSIX shell word for each argument: what an operator can paste into a shell. */
export function shellQuote(argv: readonly string[]): string {
  return argv.map((a) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(' ');
}

export function renderTable(head: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(head), ...rows.map(line)].join('\n');
}

export function renderStatus(id: string, s: SessionStatus): string {
  const parts = [`${id}: ${s.state} (${s.confidence} confidence, reason ${s.reason})`];
  parts.push(`cursor ${s.cursor.x},${s.cursor.y}${s.cursor.visible ? '' : ' (hidden)'}; ${s.interactions} interaction(s)`);
  if (s.busy) parts.push(`busy: ${s.busy}`);
  if (s.exit) parts.push(`exit: code ${s.exit.code ?? 'none'}, signal ${s.exit.signal ?? 'none'}`);
  if (s.dialog) parts.push(`dialog: ${s.dialog.kind}${s.dialog.safe ? ' (safe)' : ''}${s.dialog.answer ? `, answer ${s.dialog.answer.join(' ')}` : ''}`);
  if (s.suggestion?.visible) parts.push('a dim suggestion (ghost text) is on the input line: it is not typed input');
  if (s.queued) parts.push('input is queued');
  return parts.join('\n');
}

export function renderWait(id: string, r: WaitResult): string {
  const head = `${r.outcome} after ${r.elapsedMs} ms; ${id} is ${r.status.state} (${r.status.reason})`;
  // The hint already says whether output is still arriving: printed once, as it is.
  return r.outcome === 'timeout' ? `${head}\n${r.hint}` : head;
}
