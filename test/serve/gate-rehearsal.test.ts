/**
 * A waiting standby's rehearsal of the first round's calls (lib/serve/gate-rehearsal.ts): every
 * sample line decodes through the wire's decoder and passes its verb's own schema, so what is
 * rehearsed is the path a real call takes (a sample the schema refused would warm the refusal).
 */
import { describe, expect, it } from 'vitest';
import { rehearseGateCalls } from '../../lib/serve/gate-rehearsal.js';

describe('the gate rehearsal', () => {
  it("decodes every sample call and each passes its verb's schema (hello is not a verb)", () => {
    // 40 rounds of subscribe, sendKeys, sendText, wait, status, read.
    expect(rehearseGateCalls()).toBe(40 * 6);
  });
});
