/**
 * Strips terminal control sequences from decoded output text, as a stream: a sequence split across
 * chunks is carried over. Used only to match waited-for text in output; the screen comes from the
 * mirror.
 */
const enum State {
  Text,
  Esc,
  Csi,
  /** OSC, DCS, APC, PM, SOS: up to BEL or ST. */
  String,
  StringEsc,
  /** ESC followed by an intermediate (charset selection such as ESC ( B). */
  EscIntermediate,
}

/** The control characters text drops (all of C0 but TAB and LF): what is left of plain output's. */
const DROPPED_CONTROLS = /[\x00-\x08\x0b-\x1f]/g;

export class AnsiStripper {
  private state = State.Text;

  push(text: string): string {
    // No sequence can start in it (no ESC, no 8-bit CSI) and none is open: only its control
    // characters go (a flood's CRs), in one native pass instead of the loop below, which cut the
    // line at every CR and joined the pieces (a pending text wait's strip: ~4–8 → ~1 ms/MB of base64 lines).
    if (this.state === State.Text && text.indexOf('\x1b') < 0 && text.indexOf('\x9b') < 0) return text.replace(DROPPED_CONTROLS, '');
    let out = '';
    /** Start of the run of plain text being copied (taken as one slice, not char by char). */
    let run = -1;
    for (let i = 0; i < text.length; i++) {
      const ch = text.charCodeAt(i);
      if (this.state === State.Text) {
        if (ch >= 0x20 && ch !== 0x9b) {
          if (run < 0) run = i;
          continue;
        }
        if (run >= 0) {
          out += text.slice(run, i);
          run = -1;
        }
        if (ch === 0x1b) this.state = State.Esc;
        else if (ch === 0x9b) this.state = State.Csi;
        else if (ch === 0x0a || ch === 0x09) out += text[i];
        continue;
      }
      switch (this.state) {
        case State.Esc:
          if (ch === 0x5b) this.state = State.Csi;
          else if (ch === 0x5d || ch === 0x50 || ch === 0x5f || ch === 0x5e || ch === 0x58) this.state = State.String;
          else if (ch >= 0x20 && ch <= 0x2f) this.state = State.EscIntermediate;
          else this.state = State.Text;
          break;
        case State.EscIntermediate:
          this.state = State.Text;
          break;
        case State.Csi:
          if (ch >= 0x40 && ch <= 0x7e) this.state = State.Text;
          break;
        case State.String:
          if (ch === 0x07) this.state = State.Text;
          else if (ch === 0x1b) this.state = State.StringEsc;
          break;
        case State.StringEsc:
          this.state = ch === 0x5c ? State.Text : State.String;
          break;
      }
    }
    if (run >= 0) out += run === 0 ? text : text.slice(run);
    return out;
  }
}
