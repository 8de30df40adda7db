import { describe, expect, it } from 'vitest';
import { ControlParser, type ControlEvent } from '../../lib/control/parser.js';
import { bytes, fixture, parse, show, showAll, withCrlf } from './transcript.js';

const FIXTURES = [
  'tmux33a-replies.txt',
  'tmux33a-flow-control.txt',
  'spoofed-guards.txt',
  'notifications-in-block.txt',
  'split-utf8.txt',
  'unknown-and-stray.txt',
  'exit-mid-block.txt',
];

describe('ControlParser on recorded tmux 3.3a transcripts', () => {
  it('skips the flags-0 attach block, matches replies by their exact guard, keeps spoofed %end lines as content', () => {
    const events = showAll(parse(fixture('tmux33a-replies.txt')));
    expect(events.slice(0, 3)).toEqual([
      { kind: 'foreign-block', ok: true, time: 1796039076, number: 264, flags: 0, lines: [] },
      { kind: 'notification', name: 'session-changed', sessionId: '$0', sessionName: 'demo' },
      { kind: 'reply', ok: true, time: 1796039077, number: 269, lines: ['demo %0'] },
    ]);
    const capture = events[3] as { kind: string; number: number; lines: string[] };
    expect(capture).toMatchObject({ kind: 'reply', ok: true, number: 270 });
    expect(capture.lines.slice(0, 3)).toEqual([
      'hello \\ world',
      '%end 1700000000 999 1',
      '\x1b[1mbold\x1b[0m\x1b[39m\x1b[49m \xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80',
    ]);
    expect(capture.lines).toHaveLength(24);
    expect(events.slice(4, 7)).toEqual([
      { kind: 'reply', ok: false, time: 1796039077, number: 271, lines: ['parse error: syntax error'] },
      { kind: 'reply', ok: false, time: 1796039077, number: 272, lines: ['parse error: syntax error'] },
      { kind: 'reply', ok: false, time: 1796039077, number: 273, lines: ['parse error: unknown command: bogus-command'] },
    ]);
    expect(events.slice(-5)).toEqual([
      { kind: 'notification', name: 'unlinked-window-add', window: '@1' },
      { kind: 'notification', name: 'unlinked-window-renamed', window: '@1', windowName: 'renamed' },
      { kind: 'notification', name: 'unlinked-window-close', window: '@1' },
      { kind: 'output', pane: '%0', data: 'A' },
      { kind: 'notification', name: 'exit' },
    ]);
  });

  it('dispatches %pause/%continue written inside a refresh-client -A block, and joins UTF-8 split across %extended-output lines', () => {
    const events = parse(fixture('tmux33a-flow-control.txt'));
    expect(showAll(events.slice(1, 7))).toEqual([
      { kind: 'notification', name: 'session-changed', sessionId: '$0', sessionName: 'demo' },
      { kind: 'notification', name: 'pause', pane: '%0' },
      { kind: 'reply', ok: true, time: 1796039081, number: 269, lines: [] },
      { kind: 'notification', name: 'continue', pane: '%0' },
      { kind: 'reply', ok: true, time: 1796039081, number: 270, lines: [] },
      { kind: 'reply', ok: true, time: 1796039081, number: 271, lines: [] },
    ]);
    const outputs = events.filter((e) => e.kind === 'output');
    const text = (pane: string): string =>
      new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(outputs.filter((e) => e.pane === pane).map((e) => e.data)));
    expect(text('%0')).toBe('\r\né中😀\\\r\r\n');
    expect(text('%1')).toBe('Aé');
    expect(outputs.filter((e) => e.pane === '%1').map((e) => e.ageMs)).toEqual([0, 1]);
    expect(events.filter((e) => e.kind === 'notification').map(show)).toContainEqual({
      kind: 'notification',
      name: 'layout-change',
      window: '@0',
      layout: 'c195,80x24,0,0[80x12,0,0,0,80x11,0,13,1]',
      visibleLayout: 'c195,80x24,0,0[80x12,0,0,0,80x11,0,13,1]',
      flags: '*',
    });
    expect(events.map(show)).toContainEqual({ kind: 'notification', name: 'session-renamed', sessionId: '$0', sessionName: 'renamed' });
    expect(events.filter((e) => e.kind === 'incident' || e.kind === 'unknown' || e.kind === 'stray')).toEqual([]);
  });
});

describe('ControlParser guards', () => {
  it('closes a block only on the exact %end/%error line of its own %begin', () => {
    expect(showAll(parse(fixture('spoofed-guards.txt')))).toEqual([
      {
        kind: 'reply',
        ok: true,
        time: 1700000000,
        number: 10,
        lines: [
          '%end 1700000000 999 1',
          '%end 1700000000 11 1',
          '%error 1700000000 10 0',
          '%end 1700000000 10 1 ',
          ' %end 1700000000 10 1',
          '\x1b[1m%end 1700000000 10 1\x1b[0m',
          // tmux never nests blocks, so a %begin inside one is content (a captured screen can show one).
          '%begin 1700000000 12 1',
        ],
      },
      { kind: 'reply', ok: false, time: 1700000000, number: 11, lines: ['second'] },
    ]);
  });

  it('routes only %pause and %continue inside a block as events (3.3a writes them there); other lines, imitated %output included, are content', () => {
    expect(showAll(parse(fixture('notifications-in-block.txt')))).toEqual([
      { kind: 'notification', name: 'pause', pane: '%3' },
      { kind: 'notification', name: 'continue', pane: '%3' },
      {
        kind: 'reply',
        ok: true,
        time: 1700000000,
        number: 20,
        lines: ['line one', '%output %3 abc\\015\\012', '%extended-output %3 120 : def', '%session-changed $1 imitated', 'line two'],
      },
    ]);
  });

  it('keeps a %exit line inside a block as content (a captured screen may show one); EOF reports the open block', () => {
    expect(showAll(parse(fixture('exit-mid-block.txt')))).toEqual([
      { kind: 'incident', code: 'unterminated-block', line: '%begin 1700000000 40 1', detail: 'the stream ended inside a reply block' },
    ]);
  });

  it('reports a block still open when the stream ends', () => {
    expect(showAll(parse(bytes('%begin 1 2 1\nhalf')))).toEqual([
      { kind: 'incident', code: 'unterminated-block', line: '%begin 1 2 1', detail: 'the stream ended inside a reply block' },
    ]);
  });
});

describe('ControlParser output', () => {
  it('keeps a UTF-8 character split across two %output lines as bytes that decode once joined', () => {
    const events = parse(fixture('split-utf8.txt'));
    const data = events.map((e) => (e.kind === 'output' ? e.data : new Uint8Array()));
    expect(Array.from(data[0] ?? [])).toEqual([0xf0, 0x9f]);
    expect(new TextDecoder().decode(Buffer.concat(data))).toBe('😀 ok\r\n');
  });

  it('decodes octal escapes and leaves high bytes and DEL raw', () => {
    expect(showAll(parse(bytes('%output %12 a\\033[1m\\134\x7f\\000\n')))).toEqual([{ kind: 'output', pane: '%12', data: 'a\x1b[1m\\\x7f\x00' }]);
  });

  it('skips reserved %extended-output fields up to the first " : "', () => {
    expect(showAll(parse(bytes('%extended-output %2 7 future fields : x : y\n')))).toEqual([{ kind: 'output', pane: '%2', data: 'x : y', ageMs: 7 }]);
  });
});

describe('ControlParser tolerance', () => {
  it('surfaces unknown notifications, stray lines, orphan %end and malformed lines as events', () => {
    expect(showAll(parse(fixture('unknown-and-stray.txt')))).toEqual([
      { kind: 'foreign-block', ok: true, time: 1700000000, number: 30, flags: 0, lines: [] },
      { kind: 'notification', name: 'session-changed', sessionId: '$0', sessionName: 'main session' },
      { kind: 'stray', line: 'HOOK %4' },
      { kind: 'unknown', line: '%future-notification @1 something new' },
      { kind: 'incident', code: 'orphan-end', line: '%end 1700000000 31 1', detail: 'no reply block is open' },
      { kind: 'incident', code: 'malformed-line', line: '%output nopane', detail: '%output without a pane id' },
      { kind: 'incident', code: 'malformed-line', line: '%output %x abc', detail: '%output without a pane id' },
      { kind: 'incident', code: 'malformed-line', line: '%begin 1700000000 oops 1', detail: '%begin needs "<time> <number> <flags>"' },
      { kind: 'incident', code: 'malformed-line', line: '%window-add 7', detail: '%window-add with unexpected fields' },
      { kind: 'unknown', line: '%' },
      { kind: 'notification', name: 'message', message: 'hello from 3.4' },
      { kind: 'notification', name: 'paste-buffer-changed', bufferName: 'buffer0' },
      { kind: 'notification', name: 'client-detached', client: 'client-123' },
    ]);
  });

  it('parses every notification of the table', () => {
    const lines = [
      '%sessions-changed',
      '%session-window-changed $1 @2',
      '%client-session-changed client-99 $1 other name',
      '%window-add @3',
      '%window-close @3',
      '%window-renamed @3 a name',
      '%window-pane-changed @3 %7',
      '%pane-mode-changed %7',
      '%layout-change @3 aa,80x24,0,0,7 aa,80x24,0,0,7 ',
      '%subscription-changed sub $1 @3 0 %7 : value : with colon',
      '%subscription-changed s2 $1 - - - : ',
      '%config-error /etc/tmux.conf:1: unknown command',
      '%paste-buffer-deleted buffer1',
      '%exit too far behind',
    ];
    expect(showAll(parse(bytes(lines.join('\n') + '\n')))).toEqual([
      { kind: 'notification', name: 'sessions-changed' },
      { kind: 'notification', name: 'session-window-changed', sessionId: '$1', window: '@2' },
      { kind: 'notification', name: 'client-session-changed', client: 'client-99', sessionId: '$1', sessionName: 'other name' },
      { kind: 'notification', name: 'window-add', window: '@3' },
      { kind: 'notification', name: 'window-close', window: '@3' },
      { kind: 'notification', name: 'window-renamed', window: '@3', windowName: 'a name' },
      { kind: 'notification', name: 'window-pane-changed', window: '@3', pane: '%7' },
      { kind: 'notification', name: 'pane-mode-changed', pane: '%7' },
      { kind: 'notification', name: 'layout-change', window: '@3', layout: 'aa,80x24,0,0,7', visibleLayout: 'aa,80x24,0,0,7', flags: '' },
      { kind: 'notification', name: 'subscription-changed', subscription: 'sub', value: 'value : with colon', sessionId: '$1', window: '@3', windowIndex: '0', pane: '%7' },
      { kind: 'notification', name: 'subscription-changed', subscription: 's2', value: '', sessionId: '$1' },
      { kind: 'notification', name: 'config-error', message: '/etc/tmux.conf:1: unknown command' },
      { kind: 'notification', name: 'paste-buffer-deleted', bufferName: 'buffer1' },
      { kind: 'notification', name: 'exit', reason: 'too far behind' },
    ]);
  });

  it('drops a line over the length cap with an incident and carries on with the next line', () => {
    const events: ControlEvent[] = [];
    const parser = new ControlParser((e) => events.push(e), { maxLineBytes: 64 });
    parser.push(bytes(`%output %1 ${'x'.repeat(40)}`));
    parser.push(bytes(`${'y'.repeat(40)}\n%output %1 ok\n`));
    parser.end();
    expect(events.map((e) => [e.kind, e.kind === 'incident' ? e.code : '', e.kind === 'incident' ? e.detail : ''])).toEqual([
      ['incident', 'line-too-long', 'a line of 91 bytes was dropped'],
      ['output', '', ''],
    ]);
  });
});

describe('ControlParser chunking', () => {
  it.each(FIXTURES)('%s gives the same events split at every byte position and with CRLF line endings', (name) => {
    const input = fixture(name);
    const whole = parse(input);
    for (let cut = 0; cut <= input.length; cut++) expect(parse(input, [cut])).toEqual(whole);
    expect(parse(withCrlf(input))).toEqual(whole);
    // One byte per push: the worst case for partial lines.
    expect(parse(input, Array.from({ length: input.length }, (_, i) => i))).toEqual(whole);
  });
});
