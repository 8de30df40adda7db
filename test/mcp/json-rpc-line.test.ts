/**
 * lib/mcp/json-rpc-line.ts on its own (pure: bytes in, a verdict out). Property tests: no input
 * makes it throw; a request cut off anywhere after its id is answered with that id; a valid
 * message is delivered unchanged; no error message repeats what the line carried. The real
 * server fed raw lines is test/security/mcp-bad-input.test.ts.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { JsonRpcCode, LINE_LIMITS, judgeLine, judgeOversizeLine, readIdLeniently, type ErrorReply, type LineVerdict } from '../../lib/mcp/json-rpc-line.js';

const bytes = (text: string): Uint8Array => Buffer.from(text, 'utf8');

function repliesOf(v: LineVerdict): readonly ErrorReply[] {
  if (v.kind !== 'reply') return [];
  return Array.isArray(v.reply) ? (v.reply as readonly ErrorReply[]) : [v.reply as ErrorReply];
}

const mcpId = fc.oneof(fc.string({ maxLength: 40 }), fc.integer({ min: -(2 ** 31), max: 2 ** 31 }));

describe('judgeLine', () => {
  it('never throws, on any bytes; every reply is a JSON-RPC error whose id, if any, is a string or a number', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (line) => {
        const v = judgeLine(line);
        for (const r of repliesOf(v)) {
          expect(r.jsonrpc).toBe('2.0');
          expect([JsonRpcCode.ParseError, JsonRpcCode.InvalidRequest, JsonRpcCode.InvalidParams]).toContain(r.error.code);
          if ('id' in r) expect(['string', 'number']).toContain(typeof r.id);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('never throws on arbitrary JSON of any shape, cut anywhere or whole', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), fc.nat(), (value, cut) => {
        const text = JSON.stringify(value) ?? 'null';
        judgeLine(bytes(text));
        judgeLine(bytes(text.slice(0, cut % (text.length + 1))));
      }),
      { numRuns: 1000 },
    );
  });

  it('a request cut off anywhere after its id is a parse error carrying that id', () => {
    fc.assert(
      fc.property(mcpId, fc.jsonValue({ maxDepth: 4 }), fc.nat(), (id, params, cut) => {
        const head = `{"jsonrpc":"2.0","id":${JSON.stringify(id)},`;
        const rest = `"method":"tools/call","params":{"name":"x","arguments":{"v":${JSON.stringify(params) ?? 'null'}}}}`;
        const at = cut % rest.length; // at least one character short of whole
        const [reply] = repliesOf(judgeLine(bytes(head + rest.slice(0, at))));
        expect(reply?.error.code).toBe(JsonRpcCode.ParseError);
        expect(reply?.id).toBe(id);
      }),
      { numRuns: 1000 },
    );
  });

  it('delivers a valid request, notification or response unchanged', () => {
    const messages = [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } } },
      { jsonrpc: '2.0', id: 'x', method: 'tools/call', params: { name: 'terminal_session_read', arguments: { sessionId: 'a', mode: 'full' }, _meta: { progressToken: 3 } } },
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 9, result: {} },
      { jsonrpc: '2.0', id: 9, method: 'some/future/method', params: { anything: [1, { two: 2 }] } },
    ];
    for (const m of messages) {
      const v = judgeLine(bytes(JSON.stringify(m)));
      expect(v.kind, JSON.stringify(m)).toBe('message');
      expect(v.kind === 'message' && v.message).toEqual(m);
    }
  });

  it('never repeats the line in an error message, whatever the line carried', () => {
    const secret = 'ghp_S3cretValueThatMustNotBeEchoed012345';
    const lines = [
      `{"jsonrpc":"2.0","id":1,"method":"tools/list","${secret}":1}`,
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":{"${secret}":1}}}`,
      `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"${secret}","capabilities":{"${secret}":[]}}}`,
      `{"jsonrpc":"${secret}","id":1,"method":"x"}`,
      `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"${secret}`,
      `[{"jsonrpc":"2.0","id":1,"method":"${secret}"}]`,
    ];
    for (const line of lines) {
      const replies = repliesOf(judgeLine(bytes(line)));
      expect(replies.length, line).toBeGreaterThan(0);
      for (const r of replies) expect(r.error.message).not.toContain(secret);
    }
  });

  it('refuses nesting beyond the limit before parsing, and accepts it at the limit', () => {
    const nested = (depth: number): string => `{"jsonrpc":"2.0","id":"n","method":"m","params":{"a":${'['.repeat(depth - 2)}${']'.repeat(depth - 2)}}}`;
    expect(judgeLine(bytes(nested(LINE_LIMITS.maxDepth))).kind).toBe('message');
    expect(repliesOf(judgeLine(bytes(nested(LINE_LIMITS.maxDepth + 1))))[0]).toMatchObject({ id: 'n', error: { code: JsonRpcCode.InvalidRequest } });
    // Brackets inside strings do not count.
    expect(judgeLine(bytes(`{"jsonrpc":"2.0","id":"s","method":"m","params":{"a":"${'['.repeat(1000)}\\"{{{"}}`)).kind).toBe('message');
  });
});

describe('readIdLeniently and oversize lines', () => {
  it('finds a complete id wherever it sits among earlier members, and nothing that was cut', () => {
    expect(readIdLeniently('{"a":{"id":"inner","b":[1,"]"]},"id":"outer","x":')).toBe('outer');
    expect(readIdLeniently('  {"id" : -12 , "m')).toBe(-12);
    expect(readIdLeniently('{"id":12')).toBeUndefined(); // 12 may be the start of 1234
    expect(readIdLeniently('{"id":"cut')).toBeUndefined();
    expect(readIdLeniently('{"id":null,')).toBeUndefined();
    expect(readIdLeniently('{"i\\u0064":"escaped-key",')).toBe('escaped-key');
    expect(readIdLeniently('[{"id":1}]')).toBeUndefined();
  });

  it('answers an oversize line whose id is in its head, and skips one whose id is not', () => {
    const head = bytes(`{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"text":"${'x'.repeat(1000)}`);
    expect(judgeOversizeLine(head, 11 << 20)).toMatchObject({ kind: 'reply', reply: { id: 'big', error: { code: JsonRpcCode.InvalidRequest } } });
    expect(judgeOversizeLine(bytes(`{"params":{"text":"${'x'.repeat(1000)}`), 11 << 20)).toMatchObject({ kind: 'drop', log: expect.stringContaining('skipped') });
  });
});
