/**
 * The byte-exact input corpus and the raw-mode receiver that records what a pane delivers, shared
 * by the input tests of every backend (tmux, spawn) and the ssh quoting test.
 */

/** Files a tmux format or a shell substitution would create if anything ever ran the text. */
export const PWNED_FILES = ['/tmp/td-pwned-format', '/tmp/td-pwned-subst', '/tmp/td-pwned-tick'] as const;

export const BYTE_CORPUS: ReadonlyArray<readonly [label: string, text: string]> = [
  ['tmux and shell syntax', `; # { } $ ~ " ' \\ % A=b`],
  ['a leading dash', '-l looks like a flag'],
  ['a tmux format', '#{pane_id} #(touch /tmp/td-pwned-format) #[fg=red]'],
  ['a command substitution', '$(touch /tmp/td-pwned-subst) `touch /tmp/td-pwned-tick`'],
  ['a quote breakout', `'; kill-server; '`],
  ['control bytes', '\x1b[31mESC\x1b[0m\tTAB\rCR\nLF\x00NUL\x7fDEL\x01\x03\x1a'],
  ['UTF-8', 'é 中 😀 👍🏽 ZWSP\u200b'],
  ['a percent directive', '%if 1\n%hidden X=1\n%endif'],
  ['tilde and dollar words', '~ ~root $HOME ${PATH}'],
  ['multi-line text', 'line one\nline two\r\nline three\n\n'],
];

/**
 * python3 -c RAW_RECEIVER <file> <sentinel> [prefix]: raw tty mode (no echo, no signals, no CR/LF
 * translation); writes `prefix` (e.g. mode switches) and READY, records every byte into <file>
 * until the sentinel, then says DONE.
 */
export const RAW_RECEIVER = `
import os, sys, tty
fd = sys.stdin.fileno()
tty.setraw(fd)
out = open(sys.argv[1], 'wb', buffering=0)
sentinel = sys.argv[2].encode()
prefix = sys.argv[3].encode() if len(sys.argv) > 3 else b''
os.write(1, prefix + b'READY\\r\\n')
tail = b''
while True:
    chunk = os.read(fd, 65536)
    if not chunk:
        break
    out.write(chunk)
    tail = (tail + chunk)[-len(sentinel):]
    if tail == sentinel:
        break
os.write(1, b'DONE\\r\\n')
`;
