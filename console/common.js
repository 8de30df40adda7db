// Shared by the console's pages. Everything a program or a token controls is put in the page as
// text (textContent), never as HTML; screens go only through xterm.js.

/** An element with text content and optional class names. */
export function el(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (className) node.className = className;
  return node;
}

/** Closes that mean "log in again": the token is not (or no longer) good. */
const AUTH_CLOSES = new Set([4401, 4403]);

/**
 * A WebSocket to `path` on this console that comes back after a drop (not after a refusal):
 * `onMessage(message)` for each JSON message, `onState(text)` for the link's state.
 */
export function connect(path, { onMessage, onState, onOpen }) {
  let delay = 250;
  let socket;
  let stopped = false;
  const open = () => {
    socket = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}${path}`);
    socket.addEventListener('open', () => {
      delay = 250;
      onState('live');
      if (onOpen) onOpen();
    });
    socket.addEventListener('message', (event) => {
      let message;
      try {
        message = JSON.parse(event.data);
      } catch {
        return;
      }
      onMessage(message);
    });
    socket.addEventListener('close', (event) => {
      if (stopped) return;
      if (AUTH_CLOSES.has(event.code)) {
        onState(`closed: ${event.reason || 'not permitted'}`);
        stopped = true;
        return;
      }
      onState('reconnecting…');
      setTimeout(open, delay);
      delay = Math.min(delay * 2, 5000);
    });
  };
  open();
  return {
    send(message) {
      if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message));
    },
  };
}

/** "3m 12s", "2h 5m", "4d 1h" */
export function age(ms) {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
  return `${Math.floor(s / 86400)}d ${Math.floor((s % 86400) / 3600)}h`;
}

export async function whoami() {
  const res = await fetch('/api/whoami', { credentials: 'same-origin' });
  if (!res.ok) return undefined;
  return res.json();
}
