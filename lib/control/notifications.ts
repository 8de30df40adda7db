/**
 * Every control-mode notification the parser understands, as ONE table from name to field parser
 * (tmux's own control-notify.c is a table too). A parser gets the text after `%name ` and returns
 * the typed fields, or undefined when the line is malformed. A new notification is one new row.
 *
 * Field layouts are what tmux 3.3a writes (see docs/protocol.md); where they differ from the man
 * page (`%session-renamed` has `$id name`, `%unlinked-window-renamed` has a name) 3.3a wins.
 * `%output` and `%extended-output` are parsed by ControlParser directly: they are the hot path
 * and their payload stays bytes.
 */
import { isPaneId, isSessionId, isWindowId, type PaneId, type SessionId, type WindowId } from './ids.js';

/** Splits `text` into `count` fields on spaces; the last field keeps the rest of the line. */
function fields(text: string, count: number): string[] | undefined {
  const out: string[] = [];
  let at = 0;
  for (let i = 1; i < count; i++) {
    const space = text.indexOf(' ', at);
    if (space < 0) return undefined;
    out.push(text.slice(at, space));
    at = space + 1;
  }
  out.push(text.slice(at));
  return out;
}

/** Text after the first ` : `, the separator tmux puts before free-form values. */
function splitValue(text: string): [head: string, value: string] | undefined {
  const sep = text.indexOf(' : ');
  return sep < 0 ? undefined : [text.slice(0, sep), text.slice(sep + 3)];
}

const paneOf = (s: string | undefined): PaneId | undefined => (s !== undefined && isPaneId(s) ? s : undefined);
const windowOf = (s: string | undefined): WindowId | undefined => (s !== undefined && isWindowId(s) ? s : undefined);
const sessionOf = (s: string | undefined): SessionId | undefined => (s !== undefined && isSessionId(s) ? s : undefined);
/** Subscription targets print `-` for "not applicable". */
const optional = (s: string | undefined): string | undefined => (s === undefined || s === '-' ? undefined : s);

function onePane(text: string) {
  const p = paneOf(text);
  return p && { pane: p };
}
function oneWindow(text: string) {
  const w = windowOf(text);
  return w && { window: w };
}
function windowAndName(text: string) {
  const [id, windowName] = fields(text, 2) ?? [];
  const w = windowOf(id);
  return w && windowName !== undefined ? { window: w, windowName } : undefined;
}
function sessionAndName(text: string) {
  const [id, sessionName] = fields(text, 2) ?? [];
  const s = sessionOf(id);
  return s && sessionName !== undefined ? { sessionId: s, sessionName } : undefined;
}
function message(text: string) {
  return { message: text };
}
function bufferName(text: string) {
  return text === '' ? undefined : { bufferName: text };
}

export const NOTIFICATIONS = {
  exit: (text: string) => (text === '' ? {} : { reason: text }),
  pause: onePane,
  continue: onePane,
  'pane-mode-changed': onePane,
  'session-changed': sessionAndName,
  'session-renamed': sessionAndName,
  'sessions-changed': () => ({}),
  'session-window-changed': (text: string) => {
    const [s, w] = fields(text, 2) ?? [];
    const sessionId = sessionOf(s);
    const win = windowOf(w);
    return sessionId && win ? { sessionId, window: win } : undefined;
  },
  'client-session-changed': (text: string) => {
    const [client, s, sessionName] = fields(text, 3) ?? [];
    const sessionId = sessionOf(s);
    return client && sessionId && sessionName !== undefined ? { client, sessionId, sessionName } : undefined;
  },
  'client-detached': (text: string) => (text === '' ? undefined : { client: text }),
  'window-add': oneWindow,
  'window-close': oneWindow,
  'unlinked-window-add': oneWindow,
  'unlinked-window-close': oneWindow,
  'window-renamed': windowAndName,
  'unlinked-window-renamed': windowAndName,
  'window-pane-changed': (text: string) => {
    const [w, p] = fields(text, 2) ?? [];
    const win = windowOf(w);
    const paneId = paneOf(p);
    return win && paneId ? { window: win, pane: paneId } : undefined;
  },
  'layout-change': (text: string) => {
    // 3.3a writes the raw window flags last; they can be empty, leaving a trailing space or none.
    const [w, layout, visibleLayout, flags] = fields(text, 4) ?? fields(text, 3) ?? [];
    const win = windowOf(w);
    return win && layout && visibleLayout ? { window: win, layout, visibleLayout, flags: flags ?? '' } : undefined;
  },
  'subscription-changed': (text: string) => {
    // `name $sid @wid widx %pid … : value`; later tmux may add fields before the ` : `.
    const parts = splitValue(text);
    if (!parts) return undefined;
    const [subscription, s, w, index, p] = parts[0].split(' ');
    const sessionId = sessionOf(s);
    if (!subscription || !sessionId) return undefined;
    return { subscription, value: parts[1], sessionId, window: windowOf(optional(w)), windowIndex: optional(index), pane: paneOf(optional(p)) };
  },
  // 3.4 and later; harmless to know on 3.3a.
  'config-error': message,
  message,
  'paste-buffer-changed': bufferName,
  'paste-buffer-deleted': bufferName,
} satisfies Record<string, (text: string) => object | undefined>;

type Table = typeof NOTIFICATIONS;
export type NotificationName = keyof Table;

/** `{ kind: 'notification', name, …fields }`, discriminated by `name`. */
export type Notification = {
  [K in NotificationName]: { readonly kind: 'notification'; readonly name: K } & Readonly<NonNullable<ReturnType<Table[K]>>>;
}[NotificationName];

export function isNotificationName(name: string): name is NotificationName {
  return Object.prototype.hasOwnProperty.call(NOTIFICATIONS, name);
}

/** Builds the event for `%name text`, or undefined when its fields are malformed. */
export function parseNotification(name: NotificationName, text: string): Notification | undefined {
  const parse = NOTIFICATIONS[name] as (text: string) => object | undefined;
  const f = parse(text);
  return f && ({ kind: 'notification', name, ...f } as Notification);
}
