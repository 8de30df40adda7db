/** Validation of a config object against the closed schema; issues are data with paths. */
import * as v from 'valibot';
import { ConfigError, type ConfigIssue } from '../common/errors.js';
import { ADOPTED_ALLOW_ID, DriverConfigSchema, REFUSED_KEYS, type DriverConfig } from './config-schema.js';

export interface ValidateOptions {
  /** True when the object was read from an operator's file: only then may it disable the sandbox. */
  readonly fromFile: boolean;
  /** Where it came from, for messages. */
  readonly source?: string;
}

export function validateConfig(input: unknown, opts: ValidateOptions): DriverConfig {
  const result = v.safeParse(DriverConfigSchema, input ?? {});
  const issues: ConfigIssue[] = result.success
    ? []
    : result.issues.map((issue) => ({ path: v.getDotPath(issue) ?? '(root)', message: issue.message }));
  if (result.success) {
    const seen = new Set<string>();
    result.output.allow.forEach((entry, i) => {
      if (seen.has(entry.id)) issues.push({ path: `allow.${i}.id`, message: `duplicate allow id "${entry.id}"` });
      if (entry.id === ADOPTED_ALLOW_ID) issues.push({ path: `allow.${i}.id`, message: `"${ADOPTED_ALLOW_ID}" is reserved for drives adopted from a lost journal` });
      seen.add(entry.id);
      const { scope } = entry;
      if (scope.network === 'listed-hosts') issues.push({ path: `allow.${i}.scope.network`, message: `"listed-hosts" is ${REFUSED_KEYS['allow[].scope.network: listed-hosts']}` });
      // A key read only with another value would be accepted and ignored: refused instead.
      if (scope.hosts.length > 0) issues.push({ path: `allow.${i}.scope.hosts`, message: 'hosts are read only with network "listed-hosts", which is not supported: nothing would bound the drive to them' });
      if (scope.paths.length > 0 && scope.filesystem !== 'listed-paths') {
        issues.push({ path: `allow.${i}.scope.paths`, message: `paths are bound only with filesystem "listed-paths"; with "${scope.filesystem}" they would be ignored` });
      }
      if (scope.uid === 'dedicated' && scope.filesystem === 'home') {
        issues.push({ path: `allow.${i}.scope.uid`, message: 'a dedicated uid cannot use the host user\'s home (filesystem "home"): it belongs to that user; set uid "daemon" or another filesystem' });
      }
      if (scope.uid === 'dedicated' && entry.host !== undefined) {
        issues.push({ path: `allow.${i}.scope.uid`, message: 'a remote drive runs as the ssh user: uid "dedicated" is not supported on a remote host; set uid "daemon"' });
      }
      if (entry.host !== undefined && !result.output.drive.durable) {
        issues.push({ path: `allow.${i}.host`, message: 'drive.durable is false, but a drive on a remote host always runs in that host\'s tmux server (durable): remove drive.durable: false or the host' });
      }
    });
    if (result.output.unsafeDisableSandbox && !opts.fromFile) {
      issues.push({ path: 'unsafeDisableSandbox', message: 'may only be set in an operator config file, never through the API' });
    }
  }
  if (issues.length > 0 || !result.success) {
    const where = opts.source ? ` (${opts.source})` : '';
    const list = issues.map((i) => `${i.path}: ${i.message}`).join('; ');
    throw new ConfigError(`invalid config${where}: ${list}`, issues);
  }
  return result.output;
}
