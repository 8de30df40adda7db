/**
 * Machine tokens: the only free-form words the journal stores (reasons, kinds). A reason made from
 * anything else (a cap name, a backend's lost reason, an attention reason) is sanitised here, in
 * one place, into the shape the journal's CHECK constraints accept: [a-z0-9_.:-], 1 to 64 chars.
 */

const TOKEN = /^[a-z0-9_.:-]{1,64}$/;
/** The longest token the journal accepts (its CHECK constraints say 64). */
export const MAX_TOKEN_LENGTH = 64;

export function isMachineToken(text: string): boolean {
  return TOKEN.test(text);
}

/**
 * `text` as a token: lower case, every other character `_`, cut to 64; `fallback` when nothing
 * is left (an empty reason would be refused by the journal).
 */
export function toMachineToken(text: string, fallback = 'unknown'): string {
  const token = text.toLowerCase().replace(/[^a-z0-9_.:-]/g, '_').slice(0, MAX_TOKEN_LENGTH);
  return token.length > 0 ? token : fallback;
}
