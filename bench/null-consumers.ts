/**
 * The many-streams baseline's phase: N tmux servers (BaselineServer, the drives' generated config),
 * each with a bare control client whose parser decodes %output and drops it, all `cat`-ing the
 * same file at once; timed until every one has seen its sentinel.
 *
 * A null consumer must not stall where the library would not: tmux 3.3a can strand a `%pause`
 * behind a reply it stored while pane output was queued (docs/backends.md, "A drive tmux paused
 * without telling it"), and the continue a consumer sends for an announced pause is such a reply.
 * The library probes for it (backends/tmux/pause-probe.ts); so does this consumer, more simply: a
 * continue once its output has been quiet for PROBE_QUIET_MS, again each further PROBE_QUIET_MS
 * while it stays quiet and unfinished. A baseline left stranded would end its phase only at the
 * timeout or by luck, which flatters the library.
 */
import type { ControlClient } from '../backends/tmux/control-client.js';
import { encodeSendKeys, encodeSendText, refreshClientContinue, refreshClientPauseAfter } from '../lib/control/tmux-commands.js';
import type { BaselineServer } from './baseline-server.js';
import { SentinelScanner } from './sentinel-scanner.js';
import { sleep } from './sleep.js';
import { checkScreen, nextSentinel, notFinished, phaseDeadline, type PhaseFigures } from './stream-phase.js';

/** Output quiet this long while unfinished ⇒ a continue (as the library's probe's quiet time). */
const PROBE_QUIET_MS = 1000;
/** How often each consumer's stop is looked at (the screen check, the probe). */
const CHECK_EVERY_MS = 250;

export async function nullPhase(servers: readonly BaselineServer[], file: string, lastLine: string): Promise<PhaseFigures> {
  const sentinels = servers.map(() => nextSentinel());
  const scanners = sentinels.map((x) => new SentinelScanner(x.text));
  const found: (() => void)[] = [];
  const done = servers.map(() => false);
  const seen = servers.map(
    (_, i) =>
      new Promise<void>(
        (resolve) =>
          (found[i] = () => {
            done[i] = true;
            resolve();
          }),
      ),
  );
  const clients: ControlClient[] = [];
  let started = false;
  const lastOutput = servers.map(() => 0);
  const lastProbe = servers.map(() => 0);
  const paused = servers.map(() => false);
  /** Continues sent for an announced %pause whose %continue has not come yet. */
  const continuing = servers.map(() => 0);
  let pauses = 0;
  let unannounced = 0;
  let onScreenOnly = 0;
  const attached = await Promise.all(
    servers.map((server, i) =>
      server.attachControl((event) => {
        const scanner = scanners[i] as SentinelScanner;
        if (event.kind === 'output' && event.pane === server.pane) {
          lastOutput[i] = performance.now();
          if (!done[i] && scanner.push(event.data)) found[i]?.();
        } else if (event.kind === 'notification' && event.name === 'pause' && event.pane === server.pane) {
          // As the library does (without its capture): resume the pane, whose queued output tmux
          // dropped. A consumer that never continues a paused pane waits forever (the 300 s
          // timeouts of the full run before 2026-12-02).
          pauses += 1;
          paused[i] = true;
          continuing[i] = (continuing[i] ?? 0) + 1;
          void clients[i]?.command(refreshClientContinue(server.pane)).catch(() => undefined);
        } else if (event.kind === 'notification' && event.name === 'continue' && event.pane === server.pane) {
          // tmux writes %continue only for a pane it held paused: one no %pause announced was
          // stranded, and the probe's continue resumed it.
          if ((continuing[i] ?? 0) > 0) continuing[i] = (continuing[i] ?? 0) - 1;
          else {
            unannounced += 1;
            pauses += 1;
            paused[i] = true;
          }
        }
      }),
    ),
  );
  clients.push(...attached);
  const checks: NodeJS.Timeout[] = [];
  try {
    await Promise.all(clients.map((c) => c.command(refreshClientPauseAfter(5))));
    await Promise.all(clients.map((c, i) => c.batch(encodeSendText(servers[i]?.pane ?? '%0', `cat ${file}; ${sentinels[i]?.command ?? ''}`))));
    await sleep(150);
    for (const s of scanners) s.bytes = 0;
    servers.forEach((server, i) => {
      const check = setInterval(() => {
        const now = performance.now();
        if (!started || done[i] || now - (lastOutput[i] ?? 0) < 200) return;
        if (now - (lastOutput[i] ?? 0) >= PROBE_QUIET_MS && now - (lastProbe[i] ?? 0) >= PROBE_QUIET_MS) {
          lastProbe[i] = now;
          void clients[i]?.command(refreshClientContinue(server.pane)).catch(() => undefined);
        }
        // A paused pane's sentinel may have been dropped with its output: once its output stopped
        // it is looked for on tmux's screen (a capture subprocess), as the library's check reads its mirror.
        if (!paused[i]) return;
        void server.capture().then((text) => {
          if (done[i] || !text.split('\n').map((l) => l.trimEnd()).includes(sentinels[i]?.text ?? '')) return;
          onScreenOnly += 1;
          found[i]?.();
        }, () => undefined);
      }, CHECK_EVERY_MS);
      checks.push(check);
    });
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    lastOutput.fill(t0);
    started = true;
    await Promise.all(clients.map((c, i) => c.command(encodeSendKeys(servers[i]?.pane ?? '%0', ['Enter']))));
    await phaseDeadline(Promise.all(seen), 'null consumers', () => notFinished(done, scanners));
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    await sleep(50);
    for (const [i, server] of servers.entries()) checkScreen((await server.capture()).split('\n').map((l) => l.trimEnd()), lastLine, sentinels[i]?.text ?? '', `null consumer ${i} (tmux grid)`);
    return { ms, bytes: scanners.map((x) => x.bytes), hostCpuMs: (cpu.user + cpu.system) / 1000, onScreenOnly, pauses, unannounced };
  } finally {
    for (const check of checks) clearInterval(check);
    await Promise.all(clients.map((c, i) => servers[i]?.detachControl(c)));
  }
}
