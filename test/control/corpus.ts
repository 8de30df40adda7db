/** Text that breaks naive quoting: tmux lexer specials, flags, formats, shell syntax, control bytes, UTF-8. */
export const CORPUS = [
  '; # { } $ ~ " \' \\ %',
  '-l looks like a flag',
  '--',
  '#{pane_id} #(id) #[fg=red]',
  '$(touch pwned) `touch pwned2` ${HOME} $HOME ~root',
  "'; kill-server; '",
  'ESC\x1b[1mTAB\tCR\rLF\nNUL\0DEL\x7f',
  'é 中 😀 👍🏽 ZWSP\u200b NEL\u0085 U+FFFD\ufffd U+10FFFF\u{10ffff} e\u0301',
  '%abc %12 %if',
  'A=b ; ;; \\; "unterminated',
];
