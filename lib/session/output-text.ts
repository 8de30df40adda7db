/**
 * Pane output as text for the waits on text (lib/perceive/text-watch.ts): the bytes decoded as
 * UTF-8 across chunks (a character may be split between two %output lines) and stripped of
 * control sequences. One per drive, in DriveSignals; it decodes only while a text wait listens.
 */
import { AnsiStripper } from '../perceive/ansi-text.js';

/**
 * Decodes a chunk whole, keeping a BOM (U+FEFF) as a character: what the streaming decoder does
 * with every chunk after the first. Node's streaming decode of UTF-8 is ~5x slower than a whole one
 * (1.1–1.3 against 0.24 ms/MB of base64 lines): a bulk stream under a text wait spent most of its
 * decode there.
 */
const whole = new TextDecoder('utf-8', { ignoreBOM: true });

export class OutputText {
  private decoder = new TextDecoder('utf-8');
  private stripper = new AnsiStripper();
  /** The last chunk was decoded: the next one continues from it; otherwise it starts afresh. */
  private decoding = false;
  /**
   * The streaming decoder holds nothing (the last chunk ended with an ASCII byte) and has seen the
   * stream's start (so it strips no BOM from now on): a chunk that ends with an ASCII byte decodes
   * whole to what the stream would give.
   */
  private between = false;

  /** A chunk of the live stream while a text wait listens. */
  push(data: Uint8Array): string {
    if (!this.decoding) this.restart();
    const ends = data.length > 0 && (data[data.length - 1] as number) < 0x80;
    const text = this.between && ends ? whole.decode(data) : this.decoder.decode(data, { stream: true });
    if (data.length > 0) this.between = ends;
    return this.stripper.push(text);
  }

  /** No text wait listens: the chunk goes by undecoded, and the next decoded one starts afresh. */
  skip(): void {
    this.decoding = false;
  }

  /**
   * The text of chunks handled before a wait began (the last send's output, InputGate.outputOfSend),
   * in order. When no wait was listening, the live stream then continues from them (a character
   * or a sequence split at their end is read whole); a stream already decoded for other waits is
   * left as it is, and these are read apart.
   */
  replay(chunks: readonly Uint8Array[]): string[] {
    if (this.decoding) {
      const apart = new OutputText();
      return chunks.map((chunk) => apart.push(chunk));
    }
    return chunks.map((chunk) => this.push(chunk));
  }

  private restart(): void {
    // Whatever the old decoder held is stale: bytes went by undecoded since.
    this.decoder = new TextDecoder('utf-8');
    this.stripper = new AnsiStripper();
    this.decoding = true;
    this.between = false;
  }
}
