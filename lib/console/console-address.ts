/**
 * Where the console listens: `HOST:PORT` (`[::1]:PORT` for IPv6). A loopback address always; any
 * other only when the operator's config names it (`console.addresses`), because the console is
 * plain HTTP: a token sent to a non-loopback address crosses the network in the clear.
 */
import { isIP } from 'node:net';
import { UsageError } from '../common/errors.js';

export interface ConsoleAddress {
  readonly host: string;
  /** 0: any free port. */
  readonly port: number;
}

export function isLoopback(host: string): boolean {
  return host === '::1' || (isIP(host) === 4 && host.startsWith('127.'));
}

/** Parses `--http` (BAD_ARGUMENT when it is not an IP address and port, or not allowed). */
export function parseConsoleAddress(text: string, allowed: readonly string[] = []): ConsoleAddress {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([0-9.]+)):(\d{1,5})$/.exec(text.trim());
  const host = m ? (m[1] ?? m[2] ?? '') : '';
  const port = m ? Number(m[3]) : NaN;
  if (!m || isIP(host) === 0 || !Number.isInteger(port) || port > 65535) {
    throw new UsageError('BAD_ARGUMENT', `--http takes an IP address and a port, like 127.0.0.1:8080 or [::1]:8080 (got "${text.slice(0, 80)}")`);
  }
  if (host === '0.0.0.0' || host === '::' || /^[0:]+$/.test(host)) {
    // Every interface: no one Host name to check a request against (docs/console.md, DNS rebinding).
    throw new UsageError('BAD_ARGUMENT', `--http names one address to listen on, not every interface (${host}): use the address of the interface`);
  }
  if (!isLoopback(host) && !allowed.includes(host)) {
    throw new UsageError('BAD_ARGUMENT', `the console listens on a loopback address unless the config names ${host} in console.addresses (it is plain HTTP: tokens would cross the network in the clear)`);
  }
  return { host, port };
}
