/**
 * tmux 3.3a's input parser (input.c), run on a pane's bytes before the emulator sees them: it
 * lets through exactly what tmux acts on, in a canonical form, and nothing else.
 *
 * Why: tmux and xterm.js parse differently. tmux is 7-bit only (C1 controls, as bytes or UTF-8,
 * introduce nothing), swallows `ESC k…ST` (screen's window rename), APC, PM and SOS, ends OSC on
 * any ESC but DCS only on `ESC \`, drops a CSI whose parameters exceed 63 bytes or 23 values or
 * INT_MAX, ignores every sequence it has no entry for (xterm implements DECSED, DECIC, SL/SR,
 * CHT, HPR, DECSTR, LNM…), drops invalid and unprintable UTF-8 (xterm prints U+FFFD or the
 * character), and keeps a UTF-8 character open across an escape sequence. Running tmux's own
 * state machine here, and emitting only canonical sequences, makes the emulator's parser see a
 * stream in which those differences cannot arise. What tmux does differently with a sequence it
 * does act on is handled by the emulator's handlers (screen/).
 *
 * Nothing a string sequence (OSC, DCS, APC, PM, SOS, rename) carries changes tmux's grid in 3.3a
 * (titles, colours, clipboard, passthrough to the outer terminal), so the filter emits none of
 * them and buffers none of their bytes: an unterminated 20 MB OSC costs nothing here.
 *
 * Pure and O(n): one pass, a few bytes of state, no allocation per byte in the ground state.
 */
import { charWidth } from '../char-width.js';
import { plainEnd } from './plain-run.js';
import { decodeUtf8 } from './utf8.js';
import { INTERMEDIATE_BYTES, MAX_COUNT, PARAM_BYTES, paramValue, splitParams } from './params.js';
import { CSI_TABLE, ESC_TABLE } from './sequence-tables.js';
import { plainSgr, sgr } from './sgr.js';

const enum State {
  Ground,
  EscEnter,
  EscIntermediate,
  CsiEnter,
  CsiParameter,
  CsiIntermediate,
  CsiIgnore,
  DcsEnter,
  DcsParameter,
  DcsIntermediate,
  DcsHandler,
  DcsEscape,
  DcsIgnore,
  OscString,
  ApcString,
  RenameString,
  ConsumeSt,
}

const ESC = 0x1b;

export interface TmuxInputFilterState {
  /** In a string sequence (OSC, DCS, APC, PM, SOS, rename): tmux resets these to ground after 5 s. */
  readonly inString: boolean;
  /** Not in the ground state (some sequence is open). */
  readonly inSequence: boolean;
}

export class TmuxInputFilter implements TmuxInputFilterState {
  #state = State.Ground;
  /** param_buf: the parameter bytes as they came (at most PARAM_BYTES). */
  readonly #params = new Uint8Array(PARAM_BYTES);
  #paramLength = 0;
  #intermediates = '';
  /** INPUT_DISCARD: a buffer overflowed; the sequence is parsed to its end and ignored. */
  #discard = false;
  /** UTF-8 in progress (utf8started, utf8data): survives escape sequences, as in input.c. */
  #utf8Size = 0;
  #utf8Have = 0;
  #utf8Bad = false;
  readonly #utf8 = new Uint8Array(4);
  /** ictx->last: the last ASCII character printed, repeated by REP; -1 when none. */
  #last = -1;
  #out = new Uint8Array(256);
  #at = 0;

  get inString(): boolean {
    return this.#state >= State.DcsEnter;
  }

  get inSequence(): boolean {
    return this.#state !== State.Ground;
  }

  /** Back to the ground state with nothing open (a fresh pane, or a rebuild's pending bytes follow). */
  reset(): void {
    this.#state = State.Ground;
    this.#clear();
    this.#utf8Size = 0;
    this.#last = -1;
  }

  /**
   * The bytes of `data` the emulator should parse. The result is only valid until the next call,
   * and may be `data` itself (a chunk of plain text passes unchanged): do not write to it.
   */
  push(data: Uint8Array): Uint8Array {
    if (this.#state === State.Ground) {
      // Bulk output is mostly plain text: passed as it came, with no copy and no view made.
      const end = plainEnd(data, 0);
      if (end === data.length) {
        if (end > 0) this.#afterPlain(data[end - 1] as number);
        return data;
      }
    }
    this.#at = 0;
    this.#reserve(data.length + 16);
    let i = 0;
    while (i < data.length) {
      if (this.#state === State.Ground) {
        // Printable ASCII (input_print), CR and LF (input_c0_dispatch) go through untouched.
        const start = i;
        i = plainEnd(data, i);
        if (i > start) {
          this.#bytes(data, start, i);
          this.#afterPlain(data[i - 1] as number);
          continue;
        }
      }
      this.#byte(data[i] as number);
      i++;
    }
    return this.#out.subarray(0, this.#at);
  }

  /** After a plain run ending with `b`: a character in progress is dropped, and REP repeats `b` only if printable. */
  #afterPlain(b: number): void {
    this.#last = b >= 0x20 ? b : -1;
    this.#utf8Size = 0;
  }

  #byte(ch: number): void {
    // INPUT_STATE_ANYWHERE, except inside a DCS string (dcs_handler and dcs_escape take all bytes).
    if (this.#state !== State.DcsHandler && this.#state !== State.DcsEscape) {
      if (ch === 0x18 || ch === 0x1a) {
        this.#c0(ch);
        this.#state = State.Ground;
        return;
      }
      if (ch === ESC) {
        this.#enter(State.EscEnter);
        return;
      }
    }
    switch (this.#state) {
      case State.Ground:
        if (ch < 0x20) this.#c0(ch);
        else if (ch >= 0x80) this.#topBitSet(ch);
        // 0x7f (DEL) is ignored; printable ASCII was taken by push().
        return;
      case State.EscEnter:
        if (ch < 0x20) return this.#c0(ch);
        if (ch < 0x30) return this.#intermediate(ch, State.EscIntermediate);
        if (ch >= 0x7f) return;
        switch (ch) {
          case 0x50: // P
            return this.#enter(State.DcsEnter);
          case 0x58: // X (SOS)
          case 0x5e: // ^ (PM)
            return this.#enter(State.ConsumeSt);
          case 0x5b: // [
            return this.#enter(State.CsiEnter);
          case 0x5d: // ]
            return this.#enter(State.OscString);
          case 0x5f: // _
            return this.#enter(State.ApcString);
          case 0x6b: // k
            return this.#enter(State.RenameString);
          default:
            this.#escDispatch(ch);
            this.#state = State.Ground;
            return;
        }
      case State.EscIntermediate:
        if (ch < 0x20) return this.#c0(ch);
        if (ch < 0x30) return this.#intermediate(ch, State.EscIntermediate);
        if (ch < 0x7f) {
          this.#escDispatch(ch);
          this.#state = State.Ground;
        }
        return;
      case State.CsiEnter:
        if (ch < 0x20) return this.#c0(ch);
        if (ch < 0x30) return this.#intermediate(ch, State.CsiIntermediate);
        if (ch < 0x3c) return this.#parameter(ch);
        if (ch < 0x40) return this.#intermediate(ch, State.CsiParameter);
        if (ch < 0x7f) {
          this.#csiDispatch(ch);
          this.#state = State.Ground;
        }
        return;
      case State.CsiParameter:
        if (ch < 0x20) return this.#c0(ch);
        if (ch < 0x30) return this.#intermediate(ch, State.CsiIntermediate);
        if (ch < 0x3c) return this.#parameter(ch);
        if (ch < 0x40) {
          this.#state = State.CsiIgnore;
          return;
        }
        if (ch < 0x7f) {
          this.#csiDispatch(ch);
          this.#state = State.Ground;
        }
        return;
      case State.CsiIntermediate:
        if (ch < 0x20) return this.#c0(ch);
        if (ch < 0x30) return this.#intermediate(ch, State.CsiIntermediate);
        if (ch < 0x40) {
          this.#state = State.CsiIgnore;
          return;
        }
        if (ch < 0x7f) {
          this.#csiDispatch(ch);
          this.#state = State.Ground;
        }
        return;
      case State.CsiIgnore:
        if (ch < 0x20) return this.#c0(ch);
        if (ch >= 0x40 && ch < 0x7f) this.#state = State.Ground;
        return;
      // DCS: C0 is ignored (not executed) from dcs_enter to the data; the data and its end are dropped.
      case State.DcsEnter:
      case State.DcsParameter:
        if (ch < 0x20) return;
        if (ch < 0x30) {
          this.#state = State.DcsIntermediate;
          return;
        }
        if (ch === 0x3a || (ch >= 0x3c && ch < 0x40)) {
          // dcs_enter takes 0x3c-0x3f as the private marker; in dcs_parameter they (and ':' anywhere) ignore the string.
          this.#state = ch !== 0x3a && this.#state === State.DcsEnter ? State.DcsParameter : State.DcsIgnore;
          return;
        }
        if (ch < 0x40) {
          this.#state = State.DcsParameter;
          return;
        }
        if (ch < 0x7f) this.#state = State.DcsHandler;
        return;
      case State.DcsIntermediate:
        if (ch >= 0x30 && ch < 0x40) this.#state = State.DcsIgnore;
        else if (ch >= 0x40 && ch < 0x7f) this.#state = State.DcsHandler;
        return;
      case State.DcsHandler:
        if (ch === ESC) this.#state = State.DcsEscape;
        return;
      case State.DcsEscape:
        this.#state = ch === 0x5c ? State.Ground : State.DcsHandler;
        return;
      case State.DcsIgnore:
      case State.OscString:
      case State.ApcString:
      case State.RenameString:
      case State.ConsumeSt:
        // The string's bytes (BEL ends an OSC) change no cell: dropped, never buffered.
        if (ch === 0x07 && this.#state === State.OscString) this.#state = State.Ground;
        return;
    }
  }

  /** Entering a state: input_clear for ESC and CSI; strings also forget the last character. */
  #enter(state: State): void {
    this.#state = state;
    this.#clear();
    if (state >= State.DcsEnter) this.#last = -1;
  }

  #clear(): void {
    this.#paramLength = 0;
    this.#intermediates = '';
    this.#discard = false;
  }

  #intermediate(ch: number, next: State): void {
    if (this.#intermediates.length === INTERMEDIATE_BYTES) this.#discard = true;
    else this.#intermediates += String.fromCharCode(ch);
    this.#state = next;
  }

  #parameter(ch: number): void {
    if (this.#paramLength === PARAM_BYTES) this.#discard = true;
    else this.#params[this.#paramLength++] = ch;
    this.#state = State.CsiParameter;
  }

  /** input_c0_dispatch: only these controls do anything; VT and FF are line feeds. */
  #c0(ch: number): void {
    this.#utf8Size = 0;
    this.#last = -1;
    switch (ch) {
      case 0x08: // BS
      case 0x09: // HT
      case 0x0a: // LF
      case 0x0d: // CR
      case 0x0e: // SO
      case 0x0f: // SI
        this.#push(ch);
        return;
      case 0x0b: // VT
      case 0x0c: // FF
        this.#push(0x0a);
        return;
      default:
        return; // NUL, BEL (a bell, no cell) and the rest
    }
  }

  /** input_top_bit_set and utf8_open/utf8_append: tmux's UTF-8 rules, invalid input dropped silently. */
  #topBitSet(ch: number): void {
    this.#last = -1;
    if (this.#utf8Size === 0) {
      const size = ch >= 0xc2 && ch <= 0xdf ? 2 : ch >= 0xe0 && ch <= 0xef ? 3 : ch >= 0xf0 && ch <= 0xf4 ? 4 : 0;
      if (size === 0) return;
      this.#utf8Size = size;
      this.#utf8Have = 1;
      this.#utf8Bad = false;
      this.#utf8[0] = ch;
      return;
    }
    // A byte that is not a continuation still takes its place: the character fails when complete.
    if ((ch & 0xc0) !== 0x80) this.#utf8Bad = true;
    this.#utf8[this.#utf8Have++] = ch;
    if (this.#utf8Have < this.#utf8Size) return;
    const size = this.#utf8Size;
    this.#utf8Size = 0;
    if (this.#utf8Bad) return;
    const cp = decodeUtf8(this.#utf8, size);
    // mbtowc refuses overlong forms, surrogates and values past U+10FFFF; wcwidth < 0 is unprintable.
    if (cp < 0 || charWidth(cp) < 0) return;
    // xterm.js's UTF-8 decoder drops U+FEFF; tmux joins it like any zero-width character.
    if (cp === 0xfeff) this.#ascii('\x1b[<65279z');
    else this.#bytes(this.#utf8, 0, size);
  }

  #escDispatch(ch: number): void {
    if (this.#discard) return;
    const id = this.#intermediates + String.fromCharCode(ch);
    const out = ESC_TABLE[id];
    if (out === undefined) return; // unknown: ignored, and `last` kept (input.c returns early)
    this.#last = -1;
    if (out.length > 0) this.#ascii(out);
  }

  #csiDispatch(ch: number): void {
    if (this.#discard) return;
    const params = splitParams(this.#params, this.#paramLength);
    if (params === null) return;
    const id = this.#intermediates.length === 0 ? FINALS[ch] : this.#intermediates + String.fromCharCode(ch);
    const command = id === undefined ? undefined : CSI_TABLE[id];
    if (command === undefined) return;
    if (command === sgr && plainSgr(params)) {
      // The common case, passed as it came: codes xterm.js reads exactly as tmux does.
      this.#ascii('\x1b[');
      this.#bytes(this.#params, 0, this.#paramLength);
      this.#push(0x6d);
    } else if (command === 'REP') {
      const n = paramValue(params, 0, 1, 1);
      if (n !== -1 && this.#last !== -1) this.#ascii(`\x1b[<${this.#last};${Math.min(n, MAX_COUNT)}b`);
    } else {
      const out = command(params);
      if (out.length > 0) this.#ascii(out);
    }
    this.#last = -1;
  }

  #reserve(extra: number): void {
    if (this.#at + extra <= this.#out.length) return;
    const grown = new Uint8Array(Math.max(this.#out.length * 2, this.#at + extra));
    grown.set(this.#out.subarray(0, this.#at));
    this.#out = grown;
  }

  #push(b: number): void {
    this.#reserve(1);
    this.#out[this.#at++] = b;
  }

  #bytes(src: Uint8Array, from: number, to: number): void {
    this.#reserve(to - from);
    // A line's worth is copied by hand: `set` needs a view of the source, an allocation per run.
    if (to - from < 512) {
      const out = this.#out;
      let at = this.#at;
      for (let i = from; i < to; i++) out[at++] = src[i] as number;
      this.#at = at;
      return;
    }
    this.#out.set(src.subarray(from, to), this.#at);
    this.#at += to - from;
  }

  #ascii(s: string): void {
    this.#reserve(s.length);
    for (let i = 0; i < s.length; i++) this.#out[this.#at++] = s.charCodeAt(i);
  }
}

/** The final byte as a one-character key, without building a string per sequence. */
const FINALS: readonly string[] = Array.from({ length: 0x7f }, (_, c) => String.fromCharCode(c));
