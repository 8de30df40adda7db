/**
 * Machine tokens: the content-free values a drive's reasons and causes travel as — lower-case
 * ASCII letters, digits and `_ . : -`, 1 to 64 characters. The journal's schema refuses anything
 * else (journal/machine-values.ts, the CHECKs of journal/migrations.ts); this is the one test and
 * the one conversion the layers above it use.
 */

/** The journal's columns and tags hold at most this many characters of a token. */
export const MACHINE_TOKEN_MAX_CHARS = 64;

const MACHINE_TOKEN = /^[a-z0-9_.:-]{1,64}$/;
const NOT_TOKEN_CHAR = /[^a-z0-9_.:-]/g;

export function isMachineToken(value: string): boolean {
  return MACHINE_TOKEN.test(value);
}

/** `text` as a token: lower-cased, any other character `_`, cut to 64; `fallback` when nothing is left. */
export function toMachineToken(text: string, fallback = 'unknown'): string {
  const token = text.toLowerCase().replace(NOT_TOKEN_CHAR, '_').slice(0, MACHINE_TOKEN_MAX_CHARS);
  return token.length > 0 ? token : fallback;
}
