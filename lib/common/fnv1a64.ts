/**
 * FNV-1a 64-bit over bytes, in four 16-bit limbs: exact 64-bit arithmetic without BigInt (which is
 * ~20x slower per step) and without node:crypto (lib/emulator compiles without Node types).
 * A screen digest feeds ~10 bytes per cell, so a 120x40 grid costs ~50k steps.
 */
export class Fnv1a64 {
  // Offset basis 0xcbf29ce484222325, least significant limb first.
  private h0 = 0x2325;
  private h1 = 0x8422;
  private h2 = 0x9ce4;
  private h3 = 0xcbf2;

  byte(b: number): void {
    const h0 = this.h0 ^ (b & 0xff);
    // Multiply by the FNV prime 0x100000001b3 = 2^40 + 0x1b3, limb by limb.
    const t0 = h0 * 0x1b3;
    const t1 = this.h1 * 0x1b3 + (t0 >>> 16);
    const t2 = this.h2 * 0x1b3 + (h0 << 8) + (t1 >>> 16);
    const t3 = this.h3 * 0x1b3 + (this.h1 << 8) + (t2 >>> 16);
    this.h0 = t0 & 0xffff;
    this.h1 = t1 & 0xffff;
    this.h2 = t2 & 0xffff;
    this.h3 = t3 & 0xffff;
  }

  /** A number as four little-endian bytes (two's complement for negatives). */
  u32(n: number): void {
    this.byte(n);
    this.byte(n >>> 8);
    this.byte(n >>> 16);
    this.byte(n >>> 24);
  }

  /** UTF-16 code units, length-prefixed so that "ab"+"c" and "a"+"bc" differ. */
  str(s: string): void {
    this.u32(s.length);
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      this.byte(c);
      this.byte(c >>> 8);
    }
  }

  hex(): string {
    return [this.h3, this.h2, this.h1, this.h0].map((l) => l.toString(16).padStart(4, '0')).join('');
  }
}
