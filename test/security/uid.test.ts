/**
 * Issue 13: `scope.uid: dedicated` ran the program as uid 0 on a root host (the field was inert).
 * Now, on a host running as root, the program runs as a host uid of its own (one per allow entry,
 * switched by setpriv inside a privileged bwrap): checked from inside a real bash (id, capabilities,
 * a root-only file) and from the host (/proc/<pid>/status of the drive's process). `daemon` keeps
 * the host user. Elsewhere `dedicated` is refused at launch (SANDBOX_UNAVAILABLE), never run as
 * the host user: that path needs a non-root host and is covered by reading the code only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, Driver } from '../../lib/index.js';
import { DEDICATED_UID_BASE, DEDICATED_UID_SPAN, dedicatedUid } from '../../lib/policy/sandbox.js';
import type { Session } from '../../lib/session/session.js';
import { allow, openDriver, type TestDriver } from '../helpers.js';
import { BASH_ARGS, BASH_ENTRY, ready, workspaceOf } from './probe.js';

const asRoot = process.geteuid?.() === 0;
let t: TestDriver;

beforeAll(async () => {
  if (!asRoot) return;
  t = await openDriver([
    allow('ded', '/bin/bash', { ...BASH_ENTRY, scope: { uid: 'dedicated' } }),
    allow('ded-net', '/bin/bash', { ...BASH_ENTRY, scope: { uid: 'dedicated', network: 'full' } }),
    allow('daemon', '/bin/bash', { ...BASH_ENTRY, scope: { uid: 'daemon' } }),
  ]);
});

afterAll(async () => {
  await t?.cleanup();
});

/** Runs `commands` in the drive, each line's output into a workspace file the host reads. */
async function inside(s: Session, name: string, commands: string): Promise<string> {
  const out = join(workspaceOf(t.dataDir), `${name}.out`);
  await s.sendText(`{ ${commands}; } > ${out} 2>&1; echo "@@done-${name}@@"`, { submit: true });
  expect((await s.wait({ forText: `@@done-${name}@@`, timeoutMs: 10_000 })).outcome).toBe('text');
  return readFileSync(out, 'utf8');
}

/** Host uids of the processes whose command line is exactly `argv`. */
function hostUidsOf(argv: readonly string[]): number[] {
  const want = `${argv.join('\0')}\0`;
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .flatMap((pid) => {
      try {
        if (readFileSync(`/proc/${pid}/cmdline`, 'utf8') !== want) return [];
        return [Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1])];
      } catch {
        return [];
      }
    });
}

describe.skipIf(!asRoot)('scope.uid dedicated on a root host', () => {
  it('runs the program as a uid of its own, not 0: seen inside the jail and from the host', async () => {
    const s = await t.driver.create({ allowId: 'ded', args: BASH_ARGS });
    await ready(s);
    const expected = dedicatedUid('ded');
    expect(expected).toBeGreaterThanOrEqual(DEDICATED_UID_BASE);
    const out = await inside(s, 'ids', 'id -u; id -g; id -G; grep -E "^Cap(Prm|Eff|Bnd|Amb)" /proc/self/status; grep NoNewPrivs /proc/self/status');
    expect(out.split('\n').slice(0, 3)).toEqual([String(expected), String(expected), String(expected)]);
    expect(out).toMatch(/CapPrm:\s+0{16}/);
    expect(out).toMatch(/CapEff:\s+0{16}/);
    expect(out).toMatch(/CapBnd:\s+0{16}/);
    expect(out).toMatch(/CapAmb:\s+0{16}/);
    expect(out).toMatch(/NoNewPrivs:\s+1/);
    await s.sendText('sleep 31.25 &', { submit: true });
    await expect.poll(() => hostUidsOf(['sleep', '31.25']), { timeout: 5000 }).toEqual([expected]);
    await s.kill();
  });

  it('cannot read what only root may (/etc/shadow) and cannot gain root back; writes its workspace and /tmp', async () => {
    const s = await t.driver.create({ allowId: 'ded', args: BASH_ARGS });
    await ready(s);
    const out = await inside(s, 'reach', 'cat /etc/shadow >/dev/null; echo "shadow=$?"; su -c true root </dev/null; echo "su=$?"; echo w > mine; echo "ws=$?"; echo t > /tmp/t; echo "tmp=$?"');
    expect(out).toMatch(/shadow=1/);
    expect(out).not.toMatch(/su=0/);
    expect(out).toMatch(/ws=0/);
    expect(out).toMatch(/tmp=0/);
    expect(statSync(join(workspaceOf(t.dataDir), 'mine')).uid).toBe(dedicatedUid('ded'));
    await s.kill();
  });

  it('network full with a dedicated uid reaches the host network namespace; none stays loopback-only', async () => {
    const net = await t.driver.create({ allowId: 'ded-net', args: BASH_ARGS });
    await ready(net);
    const none = await t.driver.create({ allowId: 'ded', args: BASH_ARGS });
    await ready(none);
    // /proc/net/dev is the network namespace's own (/sys is the host's, bound read-only).
    const interfaces = (text: string): string[] => [...text.matchAll(/^\s*([^\s:]+):/gm)].map((m) => m[1] as string).sort();
    expect(interfaces(await inside(net, 'net-full', 'cat /proc/net/dev'))).toEqual(interfaces(readFileSync('/proc/net/dev', 'utf8')));
    expect(interfaces(await inside(none, 'net-none', 'cat /proc/net/dev'))).toEqual(['lo']);
    await net.kill();
    await none.kill();
  });

  it('uid daemon runs as the host user (here root, capabilities dropped)', async () => {
    const s = await t.driver.create({ allowId: 'daemon', args: BASH_ARGS });
    await ready(s);
    const out = await inside(s, 'daemon', 'id -u; grep -E "^CapEff" /proc/self/status');
    expect(out.split('\n')[0]).toBe('0');
    expect(out).toMatch(/CapEff:\s+0{16}/);
    await s.kill();
  });
});

describe('scope.uid dedicated: what cannot be materialized is refused', () => {
  it('with filesystem home (the home belongs to the host user) or on a remote host: CONFIG_INVALID naming scope.uid', async () => {
    const home = Driver.open({ config: { allow: [allow('x', '/bin/bash', { scope: { uid: 'dedicated', filesystem: 'home' } })] }, dataDir: '/nonexistent/td' });
    await expect(home).rejects.toBeInstanceOf(ConfigError);
    await expect(home).rejects.toMatchObject({ issues: [{ path: 'allow.0.scope.uid', message: expect.stringContaining('home') }] });
    const remote = Driver.open({ config: { allow: [allow('x', '/bin/bash', { host: 'h', scope: { uid: 'dedicated' } })], hosts: [{ id: 'h', ssh: { host: 'example.org', user: 'me' } }] }, dataDir: '/nonexistent/td' });
    await expect(remote).rejects.toMatchObject({ issues: [{ path: 'allow.0.scope.uid', message: expect.stringContaining('remote') }] });
  });

  it('the uid of an entry is stable and inside its range', () => {
    expect(dedicatedUid('claude')).toBe(dedicatedUid('claude'));
    for (const id of ['a', 'bash', 'claude', 'codex', 'x'.repeat(64)]) {
      expect(dedicatedUid(id)).toBeGreaterThanOrEqual(DEDICATED_UID_BASE);
      expect(dedicatedUid(id)).toBeLessThan(DEDICATED_UID_BASE + DEDICATED_UID_SPAN);
    }
    expect(new Set(['a', 'b', 'c', 'bash', 'claude', 'codex'].map(dedicatedUid)).size).toBe(6);
  });
});
