/**
 * The mirror's listeners are called from inside its parse: a throwing listener must not break the
 * parse loop it runs in (xterm would re-parse a chunk), so its error is rethrown outside, as an
 * unhandled rejection.
 */
export function emit<T>(listeners: Set<(arg: T) => void>, arg: T): void {
  for (const listener of [...listeners]) {
    try {
      listener(arg);
    } catch (err) {
      void Promise.reject(err);
    }
  }
}
