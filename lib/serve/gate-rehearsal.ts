/**
 * A waiting standby rehearses the reading of the calls its takeover's first round brings (the
 * clients' hello, resubscribes, keys, submits and waits): each line decoded by the wire's one
 * decoder and its params checked by the verb's own schema. A new process runs that code cold (the
 * schema library's checks and the decoder are compiled by V8 on first use), on the takeover's
 * clock otherwise: a profiled first round of 20 drives spent ≈ 15 ms of the host's CPU in them.
 * Touches no drive, no socket, no token; nothing is kept.
 */
import * as v from 'valibot';
import { JsonLineDecoder } from '../wire/json-line.js';
import { WIRE_LIMITS } from '../wire/protocol.js';
import { VERBS } from './verbs.js';

/** Rounds: enough for V8 to tier the checks up, as a 20-drive round does. */
const ROUNDS = 40;

/** One call of each verb a reconnected client sends first, as its line is written on the wire. */
function sampleLines(round: number): string[] {
  const id = `s${round % 20}`;
  const calls: [string, Record<string, unknown>][] = [
    ['subscribe', { id, afterSeq: round * 7, output: false }],
    ['sendKeys', { id, keys: 'C-u' }],
    ['sendText', { id, text: `echo r${round}-$((6 * 7))`, submit: true }],
    ['wait', { id, forText: { regex: `^r${round}-42$`, flags: 'm' }, timeoutMs: 15_000 }],
    ['status', { id }],
    ['read', { id }],
  ];
  const lines = calls.map(([method, params], i) => JSON.stringify({ jsonrpc: '2.0', id: round * 10 + i, method, params }));
  return [JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'hello', params: { token: `tdk_${'x'.repeat(43)}` } }), ...lines];
}

/** Decodes and checks the sample calls, ROUNDS times; returns how many passed their schema. */
export function rehearseGateCalls(): number {
  let checked = 0;
  const decoder = new JsonLineDecoder({
    maxLineBytes: WIRE_LIMITS.maxRequestBytes,
    maxDepth: WIRE_LIMITS.maxDepth,
    headBytes: WIRE_LIMITS.headBytes,
    onValue: (msg) => {
      const { method, params } = msg as { method: string; params: unknown };
      const verb = Object.hasOwn(VERBS, method) ? VERBS[method] : undefined;
      if (verb && v.safeParse(verb.params, params).success) checked++;
    },
    onError: () => undefined,
  });
  const encoder = new TextEncoder();
  for (let round = 0; round < ROUNDS; round++) decoder.push(encoder.encode(`${sampleLines(round).join('\n')}\n`));
  return checked;
}
