/**
 * A waiting standby makes the terminals its takeover's mirrors take (spare terminals,
 * lib/emulator/headless.ts): one per live drive, one more for a drive the holder creates while it
 * waits. At the takeover every re-attached drive's mirror takes one (no terminal is made on the
 * takeover's clock), the rest are let go, and every drive is drivable. The standby is this
 * process's (`Driver.standby()`, the library's `serve --standby`, so the test can count its
 * terminals); the holder is a real `tmux-drive serve` process from the built dist/, SIGKILLed;
 * real tmux, real bash.
 */
import { describe, expect, it } from 'vitest';
import { Driver } from '../../lib/driver/driver.js';
import { spareTerminals } from '../../lib/emulator/headless.js';
import { BASH_ARGS, leaseHolder, serveSuite } from './harness.js';

const suite = serveSuite();

describe('a standby prepares its takeover while it waits', () => {
  it('makes one spare terminal per drive (a drive created while it waits too); its takeover takes them all and every drive is drivable', async () => {
    const holder = suite.serve();
    await holder.ready;
    const owner = await suite.connect();
    for (const name of ['pre1', 'pre2']) await (await owner.create({ allowId: 'bash', name, args: BASH_ARGS })).wait({ forText: '$ ' });

    const handedOutBefore = spareTerminals().handedOut;
    const standby = await Driver.standby({ dataDir: suite.dataDir, config: suite.config });
    let driver: Driver | undefined;
    try {
      await expect.poll(() => spareTerminals().ready, { timeout: 15_000 }).toBe(2);
      await (await owner.create({ allowId: 'bash', name: 'post', args: BASH_ARGS })).wait({ forText: '$ ' });
      await expect.poll(() => standby.observed, { timeout: 10_000 }).toBe(3);
      await expect.poll(() => spareTerminals().ready, { timeout: 10_000 }).toBe(3);
      // Prepared, not leased: the holder still drives every drive, undisturbed.
      const d = owner.drive('pre1');
      await d.sendText('echo held-$((6 * 7))', { submit: true });
      expect((await d.wait({ forText: /^held-42$/m, timeoutMs: 15_000 })).outcome).toBe('text');
      for (const name of ['pre1', 'pre2', 'post']) expect(leaseHolder(suite.dataDir, name)).toBe(holder.pid);
      expect(spareTerminals().handedOut).toBe(handedOutBefore);

      await owner.close();
      holder.child.kill('SIGKILL');
      await holder.exited;
      driver = await standby.takeOver();
      // Each re-attached mirror took a spare; none is left over.
      expect(spareTerminals()).toEqual({ ready: 0, handedOut: handedOutBefore + 3 });
      for (const name of ['pre1', 'pre2', 'post']) {
        expect(leaseHolder(suite.dataDir, name)).toBe(process.pid);
        const s = driver.get(name);
        await s.sendText(`echo ${name}-$((6 * 7))`, { submit: true });
        expect((await s.wait({ forText: new RegExp(`^${name}-42$`, 'm'), timeoutMs: 15_000 })).outcome).toBe('text');
      }
    } finally {
      await (driver?.close() ?? standby.close());
    }
  });
});
