/** Fake secret text for tests, assembled so that no line of a test file is itself a scannable token. */

/** `n` base-62 characters from a fixed pseudo-random sequence: the same every run. */
export const b62 = (n: number, seed = 7): string => {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  let x = seed;
  let s = '';
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    s += alphabet[x % 62];
  }
  return s;
};
