/**
 * Lossy UTF-8 decoding for small header fields and reply text (never for pane output, which stays
 * bytes until the emulator). The pure tsconfig has neither DOM nor Node types, so the one WHATWG
 * global used here (present in Node >= 11 and every browser) is declared locally.
 */
declare const TextDecoder: new (label?: string, options?: { fatal?: boolean }) => { decode(input?: Uint8Array): string };

const decoder = new TextDecoder('utf-8', { fatal: false });

export function decodeUtf8(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}
