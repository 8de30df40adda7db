/**
 * The private members of xterm.js 6.0.0's core that the tmux screen port works on (buffer lines,
 * pen, modes, charsets), as shapes. install-tmux-screen.ts probes each one before the port is
 * installed: another xterm version that lacks one keeps xterm's own behaviour.
 */

export interface AttrShape {
  fg: number;
  bg: number;
  extended: unknown;
  clone(): AttrShape;
}

export interface CellShape extends AttrShape {
  getChars(): string;
  getWidth(): number;
}

export interface LineShape {
  readonly length: number;
  /**
   * xterm 6's cells, three 32-bit words each (content with the width at bit 22, fg, bg): print's
   * ASCII run writes them directly. Absent in another build: print then calls setCellFromCodepoint.
   */
  readonly _data?: Uint32Array;
  isWrapped: boolean;
  getWidth(x: number): number;
  loadCell(x: number, cell: CellShape): CellShape;
  setCell(x: number, cell: CellShape): void;
  setCellFromCodepoint(x: number, codePoint: number, width: number, attrs: AttrShape): void;
  addCodepointToCell(x: number, codePoint: number, width: number): void;
}

export interface CircularListShape {
  readonly length: number;
  readonly maxLength: number;
  get(index: number): LineShape | undefined;
  set(index: number, value: LineShape): void;
  shiftElements(start: number, count: number, offset: number): void;
  trimStart(count: number): void;
}

export interface BufferShape {
  x: number;
  y: number;
  ybase: number;
  ydisp: number;
  scrollTop: number;
  scrollBottom: number;
  tabs: Record<number, boolean | undefined>;
  readonly lines: CircularListShape;
  getNullCell(attr?: AttrShape): CellShape;
  getBlankLine(attr: AttrShape, isWrapped?: boolean): LineShape;
  setupTabStops(i?: number): void;
}

export interface CharsetServiceShape {
  glevel: number;
  charset: Readonly<Record<string, string>> | undefined;
  readonly _charsets: readonly unknown[];
  setgLevel(g: number): void;
  setgCharset(g: number, charset: unknown): void;
  reset(): void;
}

export interface CoreServiceShape {
  isCursorHidden: boolean;
  decPrivateModes: { wraparound: boolean; origin: boolean };
  modes: { insertMode: boolean };
  reset(): void;
}

export interface InputHandlerShape {
  print(data: Uint32Array, start: number, end: number): void;
  _curAttrData: AttrShape;
  readonly _activeBuffer: BufferShape;
  readonly _coreService: CoreServiceShape;
  readonly _charsetService: CharsetServiceShape;
  readonly _coreMouseService: { reset(): void };
}

export interface BufferServiceShape {
  readonly cols: number;
  readonly rows: number;
  readonly buffer: BufferShape;
  readonly buffers: { readonly normal: BufferShape; readonly alt: BufferShape; activateNormalBuffer(): void; activateAltBuffer(fill?: AttrShape): void };
  scroll(eraseAttr: AttrShape, isWrapped?: boolean): void;
}

export interface CoreShape {
  _inputHandler?: InputHandlerShape;
  _bufferService?: BufferServiceShape;
}
