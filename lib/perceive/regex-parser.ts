/**
 * A parser for the JavaScript regex syntax profiles use, into the tree the safety check walks:
 * character sets, sequences, alternations, groups (lookarounds marked), quantifiers, assertions
 * and backreferences. It reads what V8 accepts (the pattern is compiled first) and only as far as
 * the check needs: a Unicode property is "any character", case folding is ASCII.
 */
import { complement, MAX_CP, union, type CharSet } from './char-set.js';

export type RegexNode =
  | { readonly t: 'chars'; readonly set: CharSet }
  | { readonly t: 'seq'; readonly items: readonly RegexNode[] }
  | { readonly t: 'alt'; readonly branches: readonly RegexNode[] }
  | { readonly t: 'group'; readonly body: RegexNode; readonly look: boolean }
  | { readonly t: 'quant'; readonly body: RegexNode; readonly min: number; readonly max: number }
  | { readonly t: 'assert' }
  | { readonly t: 'backref' };

const DIGIT: CharSet = [[0x30, 0x39]];
const WORD: CharSet = union(union(DIGIT, [[0x41, 0x5a]]), [[0x5f, 0x5f], [0x61, 0x7a]]);
const SPACE: CharSet = union(
  [
    [0x09, 0x0d],
    [0x20, 0x20],
    [0xa0, 0xa0],
    [0x1680, 0x1680],
    [0x2000, 0x200a],
  ],
  [
    [0x2028, 0x2029],
    [0x202f, 0x202f],
    [0x205f, 0x205f],
    [0x3000, 0x3000],
    [0xfeff, 0xfeff],
  ],
);
const ANY: CharSet = [[0, MAX_CP]];

export class RegexParser {
  #i = 0;
  constructor(
    private readonly src: string,
    private readonly ignoreCase: boolean,
  ) {}

  parse(): RegexNode {
    const node = this.alternation();
    if (this.#i < this.src.length) throw new Error(`unexpected "${this.src[this.#i] ?? ''}" at ${this.#i}`);
    return node;
  }

  private peek(): string | undefined {
    return this.src[this.#i];
  }

  private alternation(): RegexNode {
    const branches: RegexNode[] = [this.sequence()];
    while (this.peek() === '|') {
      this.#i++;
      branches.push(this.sequence());
    }
    return branches.length === 1 ? (branches[0] as RegexNode) : { t: 'alt', branches };
  }

  private sequence(): RegexNode {
    const items: RegexNode[] = [];
    for (let c = this.peek(); c !== undefined && c !== '|' && c !== ')'; c = this.peek()) {
      items.push(this.quantified(this.atom()));
    }
    return { t: 'seq', items };
  }

  private quantified(atom: RegexNode): RegexNode {
    let node = atom;
    for (;;) {
      const c = this.peek();
      let min: number;
      let max: number;
      if (c === '*') [min, max] = [0, Infinity];
      else if (c === '+') [min, max] = [1, Infinity];
      else if (c === '?') [min, max] = [0, 1];
      else if (c === '{') {
        const m = /^\{(\d+)(,(\d*))?\}/.exec(this.src.slice(this.#i));
        if (!m) return node; // a literal '{' (allowed without the u flag)
        min = Number(m[1]);
        max = m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]);
        this.#i += m[0].length - 1;
      } else return node;
      this.#i++;
      if (this.peek() === '?') this.#i++; // lazy: the same search space
      node = { t: 'quant', body: node, min, max };
    }
  }

  private atom(): RegexNode {
    const c = this.src[this.#i++] as string;
    switch (c) {
      case '^':
      case '$':
        return { t: 'assert' };
      case '.':
        return { t: 'chars', set: ANY };
      case '[':
        return { t: 'chars', set: this.charClass() };
      case '(':
        return this.group();
      case '\\':
        return this.escape(false);
      default: {
        const cp = this.src.codePointAt(this.#i - 1) as number;
        if (cp > 0xffff) this.#i++;
        return { t: 'chars', set: this.literal(cp) };
      }
    }
  }

  private group(): RegexNode {
    let look = false;
    if (this.src.startsWith('?:', this.#i)) this.#i += 2;
    else if (this.src.startsWith('?=', this.#i) || this.src.startsWith('?!', this.#i)) [look, this.#i] = [true, this.#i + 2];
    else if (this.src.startsWith('?<=', this.#i) || this.src.startsWith('?<!', this.#i)) [look, this.#i] = [true, this.#i + 3];
    else if (this.src.startsWith('?<', this.#i)) {
      const end = this.src.indexOf('>', this.#i);
      if (end < 0) throw new Error('unterminated group name');
      this.#i = end + 1;
    }
    const body = this.alternation();
    if (this.src[this.#i++] !== ')') throw new Error('unterminated group');
    return { t: 'group', body, look };
  }

  /** After a backslash. In a class, \b is a backspace and assertions do not exist. */
  private escape(inClass: boolean): RegexNode {
    const c = this.src[this.#i++];
    if (c === undefined) throw new Error('pattern ends with a backslash');
    switch (c) {
      case 'd':
        return { t: 'chars', set: DIGIT };
      case 'D':
        return { t: 'chars', set: complement(DIGIT) };
      case 'w':
        return { t: 'chars', set: WORD };
      case 'W':
        return { t: 'chars', set: complement(WORD) };
      case 's':
        return { t: 'chars', set: SPACE };
      case 'S':
        return { t: 'chars', set: complement(SPACE) };
      case 'b':
        return inClass ? { t: 'chars', set: [[8, 8]] } : { t: 'assert' };
      case 'B':
        return { t: 'assert' };
      case 'n':
        return { t: 'chars', set: [[10, 10]] };
      case 'r':
        return { t: 'chars', set: [[13, 13]] };
      case 't':
        return { t: 'chars', set: [[9, 9]] };
      case 'f':
        return { t: 'chars', set: [[12, 12]] };
      case 'v':
        return { t: 'chars', set: [[11, 11]] };
      case '0':
        return { t: 'chars', set: [[0, 0]] };
      case 'x': {
        const hex = this.src.slice(this.#i, this.#i + 2);
        if (!/^[0-9a-fA-F]{2}$/.test(hex)) return { t: 'chars', set: this.literal(0x78) };
        this.#i += 2;
        return { t: 'chars', set: this.literal(parseInt(hex, 16)) };
      }
      case 'u': {
        const braced = /^\{([0-9a-fA-F]{1,6})\}/.exec(this.src.slice(this.#i));
        if (braced) {
          this.#i += braced[0].length;
          return { t: 'chars', set: this.literal(parseInt(braced[1] as string, 16)) };
        }
        const hex = this.src.slice(this.#i, this.#i + 4);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) return { t: 'chars', set: this.literal(0x75) };
        this.#i += 4;
        return { t: 'chars', set: this.literal(parseInt(hex, 16)) };
      }
      case 'k':
        if (!inClass && this.peek() === '<') throw new Error('backreferences are not allowed (they can make matching exponential)');
        return { t: 'chars', set: this.literal(0x6b) };
      case 'p':
      case 'P':
        // A Unicode property: treated as "any character", the conservative choice for overlap.
        if (this.peek() === '{') {
          const end = this.src.indexOf('}', this.#i);
          if (end > 0) this.#i = end + 1;
        }
        return { t: 'chars', set: ANY };
      default:
        if (/[1-9]/.test(c) && !inClass) return { t: 'backref' };
        return { t: 'chars', set: this.literal(c.codePointAt(0) as number) };
    }
  }

  private charClass(): CharSet {
    let negate = false;
    if (this.peek() === '^') [negate, this.#i] = [true, this.#i + 1];
    let set: CharSet = [];
    let first = true;
    for (;;) {
      const c = this.peek();
      if (c === undefined) throw new Error('unterminated character class');
      if (c === ']' && !first) break;
      first = false;
      const lo = this.classAtom();
      if (this.peek() === '-' && this.src[this.#i + 1] !== ']' && this.src[this.#i + 1] !== undefined && lo.single !== undefined) {
        this.#i++;
        const hi = this.classAtom();
        if (hi.single === undefined) set = union(union(set, lo.set), union(hi.set, [[0x2d, 0x2d]]));
        else set = union(set, this.caseFold([[lo.single, hi.single]]));
      } else set = union(set, lo.set);
    }
    this.#i++;
    return negate ? complement(set) : set;
  }

  private classAtom(): { set: CharSet; single?: number } {
    const c = this.src[this.#i++] as string;
    if (c === '\\') {
      const node = this.escape(true);
      const set = node.t === 'chars' ? node.set : ANY;
      const only = set.length === 1 && set[0]?.[0] === set[0]?.[1] ? set[0]?.[0] : undefined;
      return only === undefined ? { set } : { set, single: only };
    }
    const cp = this.src.codePointAt(this.#i - 1) as number;
    if (cp > 0xffff) this.#i++;
    return { set: this.literal(cp), single: cp };
  }

  private literal(cp: number): CharSet {
    return this.caseFold([[cp, cp]]);
  }

  /** With the i flag, ASCII letters match both cases (enough for overlap decisions). */
  private caseFold(set: CharSet): CharSet {
    if (!this.ignoreCase) return set;
    let out = set;
    for (const [lo, hi] of set) {
      const upLo = Math.max(lo, 0x61);
      const upHi = Math.min(hi, 0x7a);
      if (upLo <= upHi) out = union(out, [[upLo - 32, upHi - 32]]);
      const dnLo = Math.max(lo, 0x41);
      const dnHi = Math.min(hi, 0x5a);
      if (dnLo <= dnHi) out = union(out, [[dnLo + 32, dnHi + 32]]);
    }
    return out;
  }
}
