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
import { MAX_CP, overlaps, union, type CharSet } from './char-set.js';
import { RegexParser, type RegexNode } from './regex-parser.js';

/** Longer patterns are rejected outright: profile patterns are short markers, not grammars. */
export const MAX_PATTERN_CHARS = 512;
/**
 * The runtime guard: a pattern never sees more than this many characters at once (a screen row is
 * at most 1000 columns; regions are cut to this). Bounds the quadratic cases the checker allows.
 */
export const MAX_MATCH_CHARS = 4096;

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
  let ast: RegexNode;
  try {
    ast = new RegexParser(source, flags.includes('i')).parse();
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
function startsUnanchoredUnbounded(node: RegexNode): boolean {
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
function walk(node: RegexNode, repeated: number, issues: string[]): void {
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
            if (overlaps(first(node.branches[i] as RegexNode), first(node.branches[j] as RegexNode))) {
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

function isAssertionOnly(node: RegexNode): boolean {
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

function containsVariableQuantifier(node: RegexNode): boolean {
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
function checkAdjacent(items: readonly RegexNode[], issues: string[]): void {
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

function nullable(node: RegexNode): boolean {
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
function first(node: RegexNode): CharSet {
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
