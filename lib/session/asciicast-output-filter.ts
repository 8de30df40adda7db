/**
 * What a recording must not hand to the terminal that plays it. `asciinema play drive.cast`
 * writes the program's output to the operator's own terminal, which acts on more than the screen:
 * an OSC 52 sets the operator's clipboard, a `DCS tmux;` passes anything through an enclosing
 * tmux, an OSC 0/2 or `ESC k` retitles the window (and a title report types it back), APC carries
 * image and file protocols, OSC 1337 writes files in iTerm2, queries leave their answers in the
 * operator's input. tmux closes that path for a live pane (`allow-passthrough off`,
 * `set-clipboard off`); a recording replays around it. So, by default, the export removes:
 *
 * - every string sequence: OSC, DCS, APC, PM, SOS (7-bit or C1 introducer) and tmux's `ESC k`;
 * - every C1 control (U+0080–U+009F), which a UTF-8 terminal may take for ESC-sequences;
 * - the CSI sequences that make a terminal answer or act on its window: device attributes and
 *   status reports (`c`, `n`), mode reports (`$p`), window operations and title reports (`t`),
 *   version and keyboard-protocol queries (`>q`, `?u`).
 *
 * Everything that draws (text, cursor movement, SGR, modes, ESC sequences) stays, so the recording
 * plays the same screen. Streaming: a sequence split across output events is recognised whole.
 */

const enum State {
  Ground,
  Escape,
  Csi,
  String,
  StringEscape,
}

/** A CSI this long is not a real sequence: it is dropped whole without being kept (bounded memory). */
const MAX_CSI = 256;

/** CSI finals (with their prefix/intermediates) whose sequence makes the terminal answer or act on its window. */
function isQueryOrWindowOp(sequence: string): boolean {
  const final = sequence[sequence.length - 1];
  const body = sequence.slice(2, -1);
  if (final === 'c' || final === 'n' || final === 't') return true;
  if (final === 'p' && body.includes('$')) return true;
  if (final === 'q' && body.startsWith('>')) return true;
  if (final === 'u' && body.startsWith('?')) return true;
  return false;
}

const ESC = '\x1b';

/** C1 controls that introduce a string (DCS, SOS, OSC, PM, APC). */
function introducesString(c: number): boolean {
  return c === 0x90 || c === 0x98 || c === 0x9d || c === 0x9e || c === 0x9f;
}

export class AsciicastOutputFilter {
  #state = State.Ground;
  #csi = '';

  /** The part of `text` a player's terminal may see; keeps state for a sequence left open. */
  push(text: string): string {
    let out = '';
    let runStart = -1;
    const flush = (end: number): void => {
      if (runStart >= 0) out += text.slice(runStart, end);
      runStart = -1;
    };
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      const ch = text[i] as string;
      if (c >= 0x80 && c <= 0x9f) {
        // C1, in any state: a string introducer swallows its string, every other C1 vanishes.
        flush(i);
        this.#csi = '';
        if (c === 0x9c && (this.#state === State.String || this.#state === State.StringEscape)) this.#state = State.Ground;
        else if (introducesString(c)) this.#state = State.String;
        else if (this.#state !== State.String && this.#state !== State.StringEscape) this.#state = State.Ground;
        continue;
      }
      switch (this.#state) {
        case State.Ground:
          if (c === 0x1b) {
            flush(i);
            this.#state = State.Escape;
          } else if (runStart < 0) runStart = i;
          break;
        case State.Escape:
          if (c === 0x5b) {
            this.#state = State.Csi;
            this.#csi = `${ESC}[`;
          } else if (c === 0x5d || c === 0x50 || c === 0x5f || c === 0x5e || c === 0x58 || c === 0x6b) {
            this.#state = State.String; // OSC, DCS, APC, PM, SOS, ESC k
          } else if (c === 0x18 || c === 0x1a || c === 0x5c) {
            this.#state = State.Ground; // cancelled, or a string terminator with no string
          } else if (c < 0x20) {
            // Terminals execute a C0 control inside an escape and stay in it: so must the filter,
            // or `ESC BEL ]` would reach the terminal as an OSC introducer.
            if (c !== 0x1b) out += ch;
          } else {
            out += ESC + ch;
            this.#state = State.Ground;
          }
          break;
        case State.Csi:
          if (c === 0x1b) {
            this.#csi = '';
            this.#state = State.Escape;
          } else if (c === 0x18 || c === 0x1a) {
            this.#csi = '';
            this.#state = State.Ground;
          } else if (c < 0x20) {
            out += ch; // executed inside the sequence by terminals; the sequence goes on
          } else if (c >= 0x40 && c <= 0x7e) {
            const sequence = this.#csi + ch;
            if (!isQueryOrWindowOp(sequence)) out += sequence;
            this.#csi = '';
            this.#state = State.Ground;
          } else if (this.#csi.length >= MAX_CSI) {
            this.#csi = '';
            this.#state = State.Ground;
          } else this.#csi += ch;
          break;
        case State.String:
          // Nothing of a string is kept. It ends at BEL, ST, CAN, SUB or another ESC (as in
          // terminals); whatever follows is filtered again, so a wrong guess at the end can only
          // let text through, never a sequence.
          if (c === 0x1b) this.#state = State.StringEscape;
          else if (c === 0x07 || c === 0x18 || c === 0x1a) this.#state = State.Ground;
          break;
        case State.StringEscape:
          if (c === 0x5c) this.#state = State.Ground;
          else {
            this.#state = State.Escape;
            i--; // the ESC ended the string and starts a sequence of its own
          }
          break;
      }
    }
    flush(text.length);
    return out;
  }
}

/** The whole text through a fresh filter. */
export function neutraliseTerminalOutput(text: string): string {
  return new AsciicastOutputFilter().push(text);
}
