/** A reply line as tmux 3.3a writes it for PANE_STATE_FORMAT (values in field order): a shell at its prompt, 20x5. */
export const FRESH_SHELL = ['20', '5', '2', '0', '1', '0', '0', '0', '0', '4', '0', '0', '0', '1', '0', '0', '0', '0', '0', '0', '1000', '0', '', '4242', '0', '8,16'].join('\t');
