/**
 * The CLI's text rendering of a wait: a timeout's hint is printed once (it already says whether
 * output is still arriving; the old rendering prefixed it with the same words again).
 */
import { describe, expect, it } from 'vitest';
import { renderWait } from '../../lib/cli/render-text.js';
import type { WaitResult } from '../../lib/session/session.js';

const status = { state: 'working', confidence: 'high', reason: 'output_flowing', cursor: { x: 0, y: 0, visible: true }, interactions: 1 } as unknown as WaitResult['status'];

function count(text: string, phrase: string): number {
  return text.split(phrase).length - 1;
}

describe('renderWait', () => {
  it.each([
    [false, 'no output recently'],
    [true, 'output is still arriving'],
  ])('a timeout (producing %s) says "%s" once, with the hint', (producing, phrase) => {
    const hint = producing
      ? 'output is still arriving: the program is working; wait again with a larger timeoutMs'
      : 'no output recently: inspect status() and read() to see whether it waits for input or is stuck';
    const text = renderWait('k', { outcome: 'timeout', producing, hint, elapsedMs: 1500, status });
    expect(count(text, hint)).toBe(1);
    expect(count(text, phrase)).toBe(1);
    expect(text.split('\n')).toEqual([`timeout after 1500 ms; k is working (output_flowing)`, hint]);
  });

  it('an idle outcome is one line', () => {
    expect(renderWait('k', { outcome: 'idle', producing: false, hint: 'the screen settled', elapsedMs: 5, status })).toBe('idle after 5 ms; k is working (output_flowing)');
  });
});
