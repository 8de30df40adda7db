/**
 * A dialog before it is named: where the structure was found (rows, columns, a box), its options
 * and which one is selected, and the row of its question. The selected option is the one whose
 * style stands apart from its siblings' (inverse, a background, a colour, bold), or the one a
 * pointer glyph marks.
 */
import type { ScreenCell, ScreenGrid } from './screen.js';

/** `field`: a one-row box, a text entry (an API-key box): the program waits for typed text. */
export type DialogStructure = 'box' | 'options' | 'selector' | 'buttons' | 'field' | 'choice' | 'prompt';

export interface DialogBox {
  readonly top: number;
  readonly bottom: number;
  readonly left: number;
  readonly right: number;
}

export interface DialogCandidate {
  readonly structure: Set<DialogStructure>;
  readonly top: number;
  readonly bottom: number;
  readonly left: number;
  readonly right: number;
  readonly options: readonly string[];
  readonly selected: number | undefined;
  readonly boxRows: number | undefined;
  /** Row of the question the dialog asks (for the digest), or -1. */
  readonly questionRow: number;
}

/**
 * A cell style signature for the label starting at `x`: inverse (i), background (b…), foreground
 * (f…), bold (B). Only the first few ink cells count (a label's colour, not its row's).
 */
export function styleOf(grid: ScreenGrid, y: number, x: number, right: number): string {
  if (!grid.hasAttributes) return '';
  const row = grid.row(y);
  for (let c = x; c < Math.min(right, row.length); c++) {
    const cell = row[c] as ScreenCell;
    if (cell.ch === ' ' || cell.ch === '') continue;
    return cellStyle(cell);
  }
  return '';
}

export function cellStyle(cell: ScreenCell): string {
  return `${cell.inverse ? 'i' : ''}${cell.bgMode !== 'default' ? `b${cell.bg}` : ''}${cell.fgMode !== 'default' ? `f${cell.fg}` : ''}${cell.bold ? 'B' : ''}`;
}

/**
 * The index of the one style unlike all the others (which agree), or undefined. With two
 * entries, the odd one is the one that is styled while the other is plain.
 */
export function oddOneOut(styles: readonly string[]): number | undefined {
  if (styles.length < 2) return undefined;
  if (styles.length === 2) {
    const [a, b] = styles as [string, string];
    if (a === b) return undefined;
    if (a === '' || b === '') return a === '' ? 1 : 0;
    return undefined;
  }
  const counts = new Map<string, number>();
  for (const s of styles) counts.set(s, (counts.get(s) ?? 0) + 1);
  if (counts.size !== 2) return undefined;
  const odd = [...counts].find(([, n]) => n === 1)?.[0];
  return odd === undefined ? undefined : styles.indexOf(odd);
}
