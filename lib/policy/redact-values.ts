/**
 * Redaction of what a surface hands out (the serving host's answers and feed items, the MCP
 * tools' results), as the config's redactSecrets asks: one text in its screen format, or every
 * string of a JSON-able value.
 */
import { redactScreen, redactSecrets, type ScreenFormat } from './redact.js';

/**
 * Redacts `text` when `enabled` (the config's redactSecrets), matched as the text the `format`
 * shows (escapes or tags set aside); idempotent on redacted text.
 */
export function redactText(text: string, enabled: boolean, format: ScreenFormat = 'text'): { text: string; count: number } {
  if (!enabled) return { text, count: 0 };
  return format === 'text' ? redactSecrets(text) : redactScreen(text, format);
}

/**
 * A JSON-able value with every string redacted (status carries untrusted screen text in dialog
 * labels and ghost-text suggestions).
 */
export function redactStrings<T>(value: T, enabled: boolean): T {
  if (!enabled) return value;
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return redactSecrets(v).text;
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return walk(value) as T;
}
