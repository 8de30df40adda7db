/** Finds a short ASCII marker in a byte stream that may split it across chunks. */
export class SentinelScanner {
  readonly #needle: Buffer;
  #tail: Buffer = Buffer.alloc(0);
  /** Bytes pushed so far. */
  bytes = 0;

  constructor(needle: string) {
    this.#needle = Buffer.from(needle, 'latin1');
  }

  /** True once the marker has been seen (in this chunk or straddling the previous one). */
  push(chunk: Uint8Array): boolean {
    this.bytes += chunk.length;
    const buf = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const k = this.#needle.length - 1;
    const seam = Buffer.concat([this.#tail, buf.subarray(0, k)]);
    const found = seam.includes(this.#needle) || buf.includes(this.#needle);
    this.#tail = Buffer.from(buf.length >= k ? buf.subarray(buf.length - k) : Buffer.concat([this.#tail, buf]).subarray(-k));
    return found;
  }
}
