// A drive page: the live screen in xterm.js (frames of the host's mirror), read-only until the
// operator takes over with a drive token; typed keys then go through the host's gate.
import { Terminal } from '/vendor/xterm.mjs';
import { connect, el } from './common.js';

const name = decodeURIComponent(location.pathname.replace(/^\/drive\//, ''));
document.getElementById('name').textContent = name;
document.title = `tmux-drive: ${name}`;
const link = document.getElementById('link');
const mode = document.getElementById('mode');
const stateLine = document.getElementById('state');
const notice = document.getElementById('notice');
const takeBtn = document.getElementById('takeover');
const releaseBtn = document.getElementById('release');
const screen = document.getElementById('screen');

const term = new Terminal({ cols: 80, rows: 24, scrollback: 0, disableStdin: true, cursorBlink: false, allowProposedApi: false, fontSize: 14 });
term.open(screen);
// For tests and the bench: the page's terminal (its buffer is what the operator sees).
window.tmuxDriveTerminal = term;

let canDrive = false;
let driving = false;

function show(text, isError) {
  notice.hidden = !text;
  notice.textContent = text ?? '';
  notice.className = isError ? 'notice error' : 'notice';
}

function setDriving(on) {
  driving = on;
  term.options.disableStdin = !on;
  mode.textContent = on ? 'driving: your keys go to the program' : 'read-only';
  mode.className = on ? 'mode driving' : 'mode';
  screen.className = on ? 'screen driving' : 'screen';
  takeBtn.hidden = !canDrive || on;
  releaseBtn.hidden = !on;
  if (on) term.focus();
}

function frame(m) {
  if (term.cols !== m.cols || term.rows !== m.rows) term.resize(m.cols, m.rows);
  // One write: a full reset, the serialized screen, then the cursor where the program left it.
  const cursor = `\x1b[${m.cursor.y + 1};${m.cursor.x + 1}H${m.cursor.visible ? '\x1b[?25h' : '\x1b[?25l'}`;
  term.write(`\x1bc${m.content}${cursor}`, () => {
    document.body.dataset.seq = String(m.seq);
  });
}

const socket = connect(`/ws/drive/${encodeURIComponent(name)}`, {
  onState: (text) => (link.textContent = text),
  onOpen: () => {
    // A new connection starts read-only: take over again after a drop.
    setDriving(false);
  },
  onMessage(m) {
    switch (m.type) {
      case 'hello':
        canDrive = m.canDrive;
        setDriving(false);
        if (m.takenBy) show(`console:${m.takenBy} is driving it`);
        if (m.redacted) link.textContent = 'live (secrets redacted)';
        break;
      case 'frame':
        frame(m);
        break;
      case 'status':
        stateLine.replaceChildren(
          el('span', m.state ?? m.lifecycle, m.state ? `state-${m.state}` : ''),
          el('span', [m.confidence, m.reason, m.dialog ? `dialog: ${m.dialog}` : undefined, m.outcome ? `outcome: ${m.outcome} (${m.outcomeReason})` : undefined, `${m.interactions} interactions`].filter(Boolean).join(' · '), 'sub'),
        );
        break;
      case 'control':
        setDriving(m.driving);
        show(undefined);
        break;
      case 'hold':
        show(m.held ? `an operator (${m.how}, ${m.by}) is driving it: other input is held off` : undefined);
        break;
      case 'error':
        show(`${m.code}: ${m.message}`, true);
        break;
      case 'ended':
        // An error that came just before (why it ended) stays in view.
        show(notice.hidden ? `ended: ${m.reason}` : `${notice.textContent} (ended: ${m.reason})`, true);
        setDriving(false);
        break;
    }
  },
});

term.onData((data) => {
  if (driving) socket.send({ type: 'input', data });
});
takeBtn.addEventListener('click', () => socket.send({ type: 'takeover' }));
releaseBtn.addEventListener('click', () => socket.send({ type: 'release' }));
