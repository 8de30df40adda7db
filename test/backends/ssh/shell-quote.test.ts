/**
 * A word that cannot cross to the remote shell is refused with a typed error (the round trips of
 * every other word through a real sh and bash are ssh.test.ts's).
 */
import { describe, expect, it } from 'vitest';
import { TmuxDriveError } from '../../../lib/common/errors.js';
import { remoteCommand, shQuote } from '../../../backends/ssh/shell-quote.js';

describe('shQuote', () => {
  it('refuses a NUL byte with BAD_ARGUMENT, also inside a remote argv', () => {
    for (const quote of [() => shQuote('a\0b'), () => remoteCommand(['printf', 'x\0'])]) {
      let caught: unknown;
      try {
        quote();
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(TmuxDriveError);
      expect(caught).toMatchObject({ code: 'BAD_ARGUMENT' });
    }
  });
});
