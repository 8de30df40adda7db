/** Accumulates bytes and ASCII control strings into one Uint8Array (no TextEncoder in the pure layer). */
export class ByteBuilder {
  private readonly parts: Uint8Array[] = [];
  private size = 0;

  bytes(b: Uint8Array): this {
    if (b.length > 0) {
      this.parts.push(b);
      this.size += b.length;
    }
    return this;
  }

  /** Only for escape sequences and other ASCII: each UTF-16 unit becomes one byte. */
  ascii(s: string): this {
    const b = new Uint8Array(s.length);
    for (let i = 0; i < s.length; i++) b[i] = s.charCodeAt(i);
    return this.bytes(b);
  }

  get length(): number {
    return this.size;
  }

  build(): Uint8Array {
    const out = new Uint8Array(this.size);
    let at = 0;
    for (const p of this.parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  }
}
