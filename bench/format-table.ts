/** Renders a BenchResult as a plain-text table for the terminal. */
import type { BenchResult } from './benchmark.js';

function fmt(v: number | null): string {
  if (v === null || Number.isNaN(v)) return '–';
  if (!Number.isFinite(v)) return '∞';
  const a = Math.abs(v);
  if (Number.isInteger(v)) return String(v);
  if (a >= 100) return v.toFixed(0);
  if (a >= 10) return v.toFixed(1);
  if (a >= 1) return v.toFixed(2);
  if (a >= 0.01) return v.toFixed(3);
  if (a === 0) return '0';
  return v.toPrecision(2);
}

function pad(cells: string[], widths: number[], alignRight: boolean[]): string {
  return cells.map((c, i) => (alignRight[i] ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0))).join('  ');
}

export function formatTable(result: BenchResult): string {
  const header = ['', ...result.columns];
  const body = result.rows.map((r) => [`${r.baseline ? '  ' : '▶ '}${r.subject}`, ...r.values.map(fmt)]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => (b[i] ?? '').length)));
  const right = header.map((_, i) => i > 0);
  const lines = [`== ${result.name} ==  ${result.workload}`, pad(header, widths, right), ...body.map((b) => pad(b, widths, right))];
  if (result.verdicts.length > 0) {
    lines.push('');
    const labelWidth = Math.max(...result.verdicts.map((v) => v.label.length));
    for (const v of result.verdicts) {
      const value = v.unit === 'x' ? `${fmt(v.value)}x` : `${fmt(v.value)} ${v.unit}`;
      const target = v.target ? `  target ${v.target}: ${v.met ? 'met' : 'NOT MET'}` : '';
      lines.push(`  ${v.label.padEnd(labelWidth)}  ${value.padStart(10)}${target}`);
    }
  }
  for (const note of result.notes) lines.push(`  · ${note}`);
  return lines.join('\n');
}

