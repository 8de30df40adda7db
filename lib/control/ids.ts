/** tmux object ids. They are unique for the life of a server and never reused while it runs. */
export type PaneId = `%${number}`;
export type WindowId = `@${number}`;
export type SessionId = `$${number}`;

const PANE = /^%\d+$/;
const WINDOW = /^@\d+$/;
const SESSION = /^\$\d+$/;

export function isPaneId(s: string): s is PaneId {
  return PANE.test(s);
}
export function isWindowId(s: string): s is WindowId {
  return WINDOW.test(s);
}
export function isSessionId(s: string): s is SessionId {
  return SESSION.test(s);
}
