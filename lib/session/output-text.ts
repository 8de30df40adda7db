/**
 * Pane output as text for the waits on text (lib/perceive/text-watch.ts): the bytes decoded as
 * UTF-8 across chunks (a character may be split between two %output lines) and stripped of
 * control sequences. One per drive, in DriveSignals; it decodes only while a text wait listens.
 */
import { AnsiStripper } from '../perceive/ansi-text.js';

export class OutputText {
  private decoder = new TextDecoder('utf-8');
  private stripper = new AnsiStripper();
  /** The last chunk was decoded: the next one continues from it; otherwise it starts afresh. */
  private decoding = false;

  /** A chunk of the live stream while a text wait listens. */
  push(data: Uint8Array): string {
    if (!this.decoding) this.restart();
    return this.stripper.push(this.decoder.decode(data, { stream: true }));
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
  }
}
