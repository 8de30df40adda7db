/** Helpers to run transcripts through ControlParser and read the events back as plain data. */
import { readFileSync } from 'node:fs';
import { ControlParser, type ControlEvent } from '../../lib/control/parser.js';

export function fixture(name: string): Uint8Array {
  return new Uint8Array(readFileSync(new URL(`./fixtures/${name}`, import.meta.url)));
}

export function bytes(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

/** Runs `input` through a fresh parser, pushed as the given chunks (default: one chunk). */
export function parse(input: Uint8Array, cuts: readonly number[] = []): ControlEvent[] {
  const events: ControlEvent[] = [];
  const parser = new ControlParser((e) => events.push(e));
  let at = 0;
  for (const cut of [...cuts, input.length]) {
    parser.push(input.subarray(at, cut));
    at = cut;
  }
  parser.end();
  return events;
}

function latin1(b: Uint8Array): string {
  let s = '';
  for (const x of b) s += String.fromCharCode(x);
  return s;
}

/** The event with every byte array shown as a latin1 string, for readable assertions. */
export function show(event: ControlEvent): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(event)) {
    if (v instanceof Uint8Array) out[k] = latin1(v);
    else if (Array.isArray(v)) out[k] = v.map((x) => (x instanceof Uint8Array ? latin1(x) : x));
    else if (v !== undefined) out[k] = v;
  }
  return out;
}

export function showAll(events: readonly ControlEvent[]): Record<string, unknown>[] {
  return events.map(show);
}

export function withCrlf(input: Uint8Array): Uint8Array {
  const out: number[] = [];
  for (const b of input) {
    if (b === 0x0a) out.push(0x0d);
    out.push(b);
  }
  return Uint8Array.from(out);
}
