/**
 * The gate's hold book on its own (pure; the real host, drives, console and attach are in
 * operator-hold.test.ts): one holder per drive, others refused, the holder's own inputs spared
 * when it takes over while other callers' waiting inputs are aborted, release on the caller's end,
 * and the items subscribers are told.
 */
import { describe, expect, it } from 'vitest';
import { OperatorHolds } from '../../lib/serve/operator-holds.js';
import type { FeedItem } from '../../lib/wire/protocol.js';
import { TmuxDriveError } from '../../lib/common/errors.js';

const person = { id: 'c1', tokenId: 'owner' };
const agent = { id: 'c2', tokenId: 'tk_agent' };
const other = { id: 'c3', tokenId: 'tk_other' };

describe('OperatorHolds', () => {
  it('one holder per drive; the others are refused with OPERATOR_HOLD; a release or the holder going ends it; subscribers are told', () => {
    const told: [string, FeedItem][] = [];
    const holds = new OperatorHolds((drive, item) => told.push([drive, item]), () => 1000);
    holds.take('d', person, 'attach');
    expect(holds.take('d', person, 'attach').holder).toBe('c1'); // again: a no-op
    expect(() => holds.take('d', other, 'console')).toThrow(TmuxDriveError);
    expect(() => holds.check('d', agent, 'sendText')).toThrow(/held by an operator \(attach, token owner\)/);
    expect(() => holds.check('d', person, 'sendText')).not.toThrow();
    expect(() => holds.check('elsewhere', agent, 'sendText')).not.toThrow();
    expect(holds.release('d', agent)).toBe(false);
    expect(holds.release('d', person)).toBe(true);
    expect(() => holds.check('d', agent, 'sendText')).not.toThrow();
    holds.take('d', other, 'console');
    holds.take('e', other, 'console');
    holds.releaseAll(other);
    expect(holds.heldBy('d')).toBeUndefined();
    expect(holds.heldBy('e')).toBeUndefined();
    expect(told.map(([d, i]) => `${d}:${i.type === 'hold' ? `${i.held}:${i.by}:${i.how}` : i.type}`)).toEqual(['d:true:owner:attach', 'd:false:owner:attach', 'd:true:tk_other:console', 'e:true:tk_other:console', 'd:false:tk_other:console', 'e:false:tk_other:console']);
  });

  it('a take-over aborts the other callers\' inputs under way on that drive with OPERATOR_HOLD, not the new holder\'s own, nor inputs to other drives', () => {
    const holds = new OperatorHolds(() => undefined, () => 0);
    const call = new AbortController();
    const agentInput = holds.inputSignal('d', agent, call.signal);
    const ownInput = holds.inputSignal('d', person, call.signal);
    const elsewhere = holds.inputSignal('e', agent, call.signal);
    holds.take('d', person, 'console');
    expect(agentInput.signal.aborted).toBe(true);
    expect((agentInput.signal.reason as TmuxDriveError).code).toBe('OPERATOR_HOLD');
    expect(ownInput.signal.aborted).toBe(false);
    expect(elsewhere.signal.aborted).toBe(false);
    // The call's own abort (cancel, connection gone) still reaches an input.
    call.abort();
    expect(ownInput.signal.aborted).toBe(true);
    for (const i of [agentInput, ownInput, elsewhere]) i.dispose();
  });
});
