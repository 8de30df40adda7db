/**
 * A conservative static check for regular expressions that could backtrack catastrophically, for
 * patterns that come from data (profiles). Screens are untrusted: a program can print exactly the
 * input that makes a bad pattern run for minutes, so a profile pattern must be provably tame.
 *
 * Rejected (each a real blow-up shape in backtracking engines such as V8's irregexp):
 * - a variable quantifier inside a repeated group: `(a+)+`, `(\w+\s?)*`, `(a?){20}` (exponential);
 * - an alternation under a repeated quantifier whose branches can start with the same character,
 *   or one of which can match empty: `(a|a)*`, `(a|ab)+`, `(\w|\d)*`, `(a|)*` (exponential);
 * - three or more unbounded quantifiers in a row that can match the same characters with only
 *   optional parts between them: `\d+\d+\d+`, `.*\s*.*` (cubic and worse; two in a row, quadratic,
 *   is allowed because every match runs on input bounded by `MAX_MATCH_CHARS`);
 * - a pattern that starts with an unbounded quantifier and no `^` (`\s+$`, `.*x`): every start
 *   position scans ahead again, quadratic on a long run (1.4 ms for one 1000-column row here);
 * - backreferences (they make matching NP-hard) and patterns longer than `MAX_PATTERN_CHARS`.
 * The checker errs on the side of rejecting: a rejected pattern can always be rewritten.
 */

/** Longer patterns are rejected outright: profile patterns are short markers, not grammars. */
export const MAX_PATTERN_CHARS = 512;
/**
 * The runtime guard: a pattern never sees more than this many characters at once (a screen row is
 * at most 1000 columns; regions are cut to this). Bounds the quadratic cases the checker allows.
 */
export const MAX_MATCH_CHARS = 4096;

const MAX_CP = 0x10ffff;

/** A set of code points as sorted, disjoint, inclusive ranges. */
type CharSet = readonly (readonly [number, number])[];

type Node =
  | { readonly t: 'chars'; readonly set: CharSet }
  | { readonly t: 'seq'; readonly items: readonly Node[] }
  | { readonly t: 'alt'; readonly branches: readonly Node[] }
  | { readonly t: 'group'; readonly body: Node; readonly look: boolean }
  | { readonly t: 'quant'; readonly body: Node; readonly min: number; readonly max: number }
  | { readonly t: 'assert' }
  | { readonly t: 'backref' };

export interface RegexSafetyIssue {
  readonly message: string;
}

/** Issues that make `source` unsafe (empty when it passes). Syntax errors are issues too. */
export function checkRegexSafety(source: string, flags = ''): RegexSafetyIssue[] {
  if (source.length > MAX_PATTERN_CHARS) return [{ message: `pattern longer than ${MAX_PATTERN_CHARS} characters` }];
  try {
    new RegExp(source, flags);
  } catch (err) {
    return [{ message: `not a valid regular expression: ${(err as Error).message}` }];
  }
  let ast: Node;
  try {
    ast = new Parser(source, flags.includes('i')).parse();
  } catch (err) {
    return [{ message: (err as Error).message }];
  }
  const issues: string[] = [];
  walk(ast, 0, issues);
  if (startsUnanchoredUnbounded(ast)) issues.push('starts with an unbounded quantifier and no ^ (each start position rescans the input: quadratic); anchor it or drop the leading quantifier');
  return [...new Set(issues)].map((message) => ({ message }));
}

/** Tests `re` on at most `MAX_MATCH_CHARS` of `text` (the tail is what screens end with). */
export function boundedTest(re: RegExp, text: string): boolean {
  return re.test(text.length > MAX_MATCH_CHARS ? text.slice(-MAX_MATCH_CHARS) : text);
}

/** `re.exec` with the same bound. */
export function boundedExec(re: RegExp, text: string): RegExpExecArray | null {
  return re.exec(text.length > MAX_MATCH_CHARS ? text.slice(-MAX_MATCH_CHARS) : text);
}

// ---- analysis ---------------------------------------------------------------------------------

/** `\s+$`, `.*x`, `(?:a|\s+)b`: a match attempt at every position that each scans ahead. */
function startsUnanchoredUnbounded(node: Node): boolean {
  switch (node.t) {
    case 'alt':
      return node.branches.some(startsUnanchoredUnbounded);
    case 'group':
      return !node.look && startsUnanchoredUnbounded(node.body);
    case 'seq': {
      const head = node.items[0];
      return head !== undefined && startsUnanchoredUnbounded(head);
    }
    case 'quant':
      return node.max === Infinity;
    default:
      return false;
  }
}

/** `repeated`: how many repeating quantifiers (max > 1) enclose this node. */
function walk(node: Node, repeated: number, issues: string[]): void {
  switch (node.t) {
    case 'backref':
      issues.push('backreferences are not allowed (they can make matching exponential)');
      return;
    case 'chars':
    case 'assert':
      return;
    case 'group':
      walk(node.body, repeated, issues);
      return;
    case 'alt':
      if (repeated > 0) {
        if (node.branches.some(nullable)) issues.push('an alternation under a repeated quantifier has a branch that can match empty');
        for (let i = 0; i < node.branches.length; i++) {
          for (let j = i + 1; j < node.branches.length; j++) {
            if (overlaps(first(node.branches[i] as Node), first(node.branches[j] as Node))) {
              issues.push('overlapping alternation under a repeated quantifier (its branches can start with the same character)');
            }
          }
        }
      }
      for (const b of node.branches) walk(b, repeated, issues);
      return;
    case 'seq':
      checkAdjacent(node.items, issues);
      for (const item of node.items) walk(item, repeated, issues);
      return;
    case 'quant': {
      const repeats = node.max > 1;
      if (repeats && containsVariableQuantifier(node.body)) issues.push('nested quantifier: a repeated group contains a quantifier of variable length (like (a+)+)');
      if (repeats && nullable(node.body) && !isAssertionOnly(node.body)) issues.push('a repeated group can match empty');
      walk(node.body, repeated + (repeats ? 1 : 0), issues);
      return;
    }
  }
}

function isAssertionOnly(node: Node): boolean {
  switch (node.t) {
    case 'assert':
      return true;
    case 'group':
      return node.look || isAssertionOnly(node.body);
    case 'seq':
      return node.items.every(isAssertionOnly);
    default:
      return false;
  }
}

function containsVariableQuantifier(node: Node): boolean {
  switch (node.t) {
    case 'quant':
      return node.max !== node.min || containsVariableQuantifier(node.body);
    case 'group':
      return containsVariableQuantifier(node.body);
    case 'seq':
      return node.items.some(containsVariableQuantifier);
    case 'alt':
      return node.branches.some(containsVariableQuantifier);
    default:
      return false;
  }
}

/** Flags chains of ≥ 3 unbounded quantifiers over overlapping sets with only nullable parts between. */
function checkAdjacent(items: readonly Node[], issues: string[]): void {
  let chain: CharSet[] = [];
  for (const item of items) {
    const unbounded = item.t === 'quant' && item.max === Infinity ? first(item.body) : null;
    if (unbounded) {
      if (chain.length > 0 && !chain.some((set) => overlaps(set, unbounded))) chain = [];
      chain.push(unbounded);
      if (chain.length >= 3) {
        issues.push('three or more adjacent unbounded quantifiers can match the same characters (polynomial backtracking)');
        return;
      }
    } else if (!nullable(item)) {
      chain = [];
    }
  }
}

function nullable(node: Node): boolean {
  switch (node.t) {
    case 'chars':
    case 'backref':
      return node.t === 'backref';
    case 'assert':
      return true;
    case 'group':
      return node.look || nullable(node.body);
    case 'seq':
      return node.items.every(nullable);
    case 'alt':
      return node.branches.some(nullable);
    case 'quant':
      return node.min === 0 || nullable(node.body);
  }
}

/** The characters a match of `node` can start with. */
function first(node: Node): CharSet {
  switch (node.t) {
    case 'chars':
      return node.set;
    case 'assert':
    case 'backref':
      return node.t === 'backref' ? [[0, MAX_CP]] : [];
    case 'group':
      return node.look ? [] : first(node.body);
    case 'quant':
      return first(node.body);
    case 'alt':
      return node.branches.reduce<CharSet>((acc, b) => union(acc, first(b)), []);
    case 'seq': {
      let acc: CharSet = [];
      for (const item of node.items) {
        acc = union(acc, first(item));
        if (!nullable(item)) break;
      }
      return acc;
    }
  }
}

function union(a: CharSet, b: CharSet): CharSet {
  const all = [...a, ...b].sort((p, q) => p[0] - q[0]);
  const out: [number, number][] = [];
  for (const [lo, hi] of all) {
    const last = out[out.length - 1];
    if (last && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else out.push([lo, hi]);
  }
  return out;
}

function complement(a: CharSet): CharSet {
  const out: [number, number][] = [];
  let next = 0;
  for (const [lo, hi] of union(a, [])) {
    if (lo > next) out.push([next, lo - 1]);
    next = hi + 1;
  }
  if (next <= MAX_CP) out.push([next, MAX_CP]);
  return out;
}

function overlaps(a: CharSet, b: CharSet): boolean {
  for (const [alo, ahi] of a) for (const [blo, bhi] of b) if (alo <= bhi && blo <= ahi) return true;
  return false;
}

// ---- a parser for the JavaScript regex syntax profiles use --------------------------------------

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

class Parser {
  #i = 0;
  constructor(
    private readonly src: string,
    private readonly ignoreCase: boolean,
  ) {}

  parse(): Node {
    const node = this.alternation();
    if (this.#i < this.src.length) throw new Error(`unexpected "${this.src[this.#i] ?? ''}" at ${this.#i}`);
    return node;
  }

  private peek(): string | undefined {
    return this.src[this.#i];
  }

  private alternation(): Node {
    const branches: Node[] = [this.sequence()];
    while (this.peek() === '|') {
      this.#i++;
      branches.push(this.sequence());
    }
    return branches.length === 1 ? (branches[0] as Node) : { t: 'alt', branches };
  }

  private sequence(): Node {
    const items: Node[] = [];
    for (let c = this.peek(); c !== undefined && c !== '|' && c !== ')'; c = this.peek()) {
      items.push(this.quantified(this.atom()));
    }
    return { t: 'seq', items };
  }

  private quantified(atom: Node): Node {
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

  private atom(): Node {
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

  private group(): Node {
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
  private escape(inClass: boolean): Node {
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
