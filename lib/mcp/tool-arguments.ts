/**
 * Tool arguments as closed objects: an unknown argument is a tool error naming it. The SDK builds
 * a stripping object from a raw shape, so an unknown argument was dropped silently (and
 * terminal_session_create with the seed's `command` launched the entry's default program).
 */
import { z } from 'zod';

/** Unknown argument names echoed in an error: a hostile client may send thousands, or long ones. */
const MAX_ECHOED_KEYS = 8;
const MAX_ECHOED_KEY_CHARS = 64;

/** What to do instead, for arguments a caller may bring from elsewhere (the seed's own names). */
const ARGUMENT_HINTS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  terminal_session_create: { command: 'the program is the one the allow entry names (allowId); pass its arguments in args' },
};

/** A tool's arguments as a closed object; its JSON Schema says `additionalProperties: false`. */
export function closedArgs<Shape extends z.ZodRawShape>(tool: string, shape: Shape): z.ZodObject<Shape, z.core.$strict> {
  const known = Object.keys(shape);
  return z.strictObject(shape, {
    error: (issue) => {
      if (issue.code !== 'unrecognized_keys') return undefined;
      const keys = issue.keys.slice(0, MAX_ECHOED_KEYS).map((k) => JSON.stringify(k.slice(0, MAX_ECHOED_KEY_CHARS)));
      const more = issue.keys.length > MAX_ECHOED_KEYS ? ` and ${issue.keys.length - MAX_ECHOED_KEYS} more` : '';
      const hints = issue.keys.flatMap((k) => (ARGUMENT_HINTS[tool]?.[k] ? [`; ${k}: ${ARGUMENT_HINTS[tool][k]}`] : []));
      return `BAD_ARGUMENT: unknown argument(s) ${keys.join(', ')}${more} (${tool} takes ${known.length > 0 ? known.join(', ') : 'no arguments'})${hints.join('')}`;
    },
  });
}
