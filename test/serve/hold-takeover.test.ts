/**
 * A person's hold survives a standby takeover (real `tmux-drive serve` processes from the built
 * dist/, real tmux, real bash, real sockets): the holder's client remembers its holds and takes
 * them again on the host that took over before it says `reconnected`, so another caller's input
 * to the held drive is refused with OPERATOR_HOLD naming the holder while a drive nobody holds
 * takes input; release() lets the other caller in. A hold that cannot be taken again (another
 * person holds the drive now, or the drive is gone) is told with `holdLost`, never dropped silently.
 * `tmux-drive attach` (the built CLI, in a real terminal through node-pty) keeps its hold too, and an
 * agent input asked after the hold, while the drive is still being re-attached (its tmux server
 * stopped), is refused. Uses dist/ (built when missing: rebuild after changing lib/serve or lib/cli).
 */
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, unlinkSync, watch } from 'node:fs';
import pty from 'node-pty';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '../../lib/client/client.js';
import { TmuxDriveError } from '../../lib/common/errors.js';
import { CLI } from '../cli/dist.js';
import { BASH_ARGS, killServe, type ServeProcess, serveSuite, standbyWaiting } from './harness.js';

const suite = serveSuite();

async function outcome(p: Promise<unknown>): Promise<string | TmuxDriveError> {
  return p.then(
    () => 'sent',
    (e: unknown) => {
      if (!(e instanceof TmuxDriveError)) throw e;
      return e;
    },
  );
}

/** A serving host and a hot standby on the data dir, with bash drives `names` created through `owner`. */
async function hostAndStandby(names: readonly string[]): Promise<{ first: ServeProcess; standby: ServeProcess; owner: Client }> {
  const first = suite.serve();
  await first.ready;
  const owner = await suite.connect();
  for (const name of names) await (await owner.create({ allowId: 'bash', name, args: BASH_ARGS })).wait({ forText: '$ ' });
  const standby = suite.serve(['--standby']);
  await standbyWaiting(standby);
  return { first, standby, owner };
}

describe('an operator hold across a standby takeover', () => {
  it('the holder takes its hold again before `reconnected`: the agent is refused on the held drive (naming the holder), drives the other, and gets in after release()', async () => {
    const { first, standby, owner } = await hostAndStandby(['held', 'free']);
    const person = await owner.mint({ classes: ['observe', 'drive', 'admin'], label: 'person' });
    const holder = await suite.connect({ token: person.token, reconnectTimeoutMs: 30_000 });
    const agentToken = await owner.mint({ classes: ['observe', 'drive'], drives: ['held', 'free'], label: 'agent' });
    const agent = await suite.connect({ token: agentToken.token, reconnectTimeoutMs: 30_000 });

    await holder.drive('held').hold();
    expect(holder.heldDrives).toEqual(['held']);
    expect(await outcome(agent.drive('held').sendText('echo before-$((1+1))', { submit: true }))).toMatchObject({ code: 'OPERATOR_HOLD' });

    // When the new host's socket appears (the test's own inotify), and when the holder says it is back.
    let killed = false;
    let socketAt = 0; // the last change to the socket's name after the kill (the stale one removed, the new one bound)
    const socketWatch = watch(join(suite.dataDir, 'serve'), (_event, name) => {
      if (name === 'host.sock' && killed) socketAt = performance.now();
    });
    const lost: string[] = [];
    holder.on('holdLost', (drive) => lost.push(drive));
    const back = new Promise<number>((resolve) => holder.on('reconnected', () => resolve(performance.now())));
    const killedAt = performance.now();
    killed = true;
    first.child.kill('SIGKILL');
    await first.exited;
    const reconnectedAt = await back;
    const newSocketAt = socketAt;
    socketWatch.close();
    await standby.ready;

    const refused = await outcome(agent.drive('held').sendText('echo slipped-$((2+2))', { submit: true }));
    expect(refused).toBeInstanceOf(TmuxDriveError);
    expect((refused as TmuxDriveError).code).toBe('OPERATOR_HOLD');
    expect((refused as TmuxDriveError).context).toMatchObject({ drive: 'held', heldBy: person.id, how: 'attach' });
    expect((refused as TmuxDriveError).message).toContain(`token ${person.id}`);
    expect(lost).toEqual([]);
    expect(holder.heldDrives).toEqual(['held']);

    // The drive nobody holds takes the agent's input.
    await agent.drive('free').sendText('echo free-$((3*3))', { submit: true });
    await agent.drive('free').wait({ forText: /^free-9$/m, timeoutMs: 15_000 });
    // The holder itself types.
    await holder.drive('held').sendText('echo holder-$((4*4))', { submit: true });
    await holder.drive('held').wait({ forText: /^holder-16$/m, timeoutMs: 15_000 });

    expect(await holder.drive('held').release()).toBe(true);
    expect(holder.heldDrives).toEqual([]);
    await agent.drive('held').sendText('echo agent-$((5*5))', { submit: true });
    await agent.drive('held').wait({ forText: /^agent-25$/m, timeoutMs: 15_000 });
    expect((await holder.drive('held').read()).content).not.toContain('slipped-4');

    // The window in which another caller's input could reach the held drive: from the new host's
    // socket to the hold taken again (an upper bound: `reconnected` comes after the hold's answer).
    console.log(`hold-takeover: kill -> holder reconnected with its hold ${(reconnectedAt - killedAt).toFixed(0)} ms; new socket -> hold re-taken ≤ ${newSocketAt > 0 ? (reconnectedAt - newSocketAt).toFixed(0) : '?'} ms`);

    for (const d of ['held', 'free']) await owner.drive(d).kill();
    await killServe(standby, 'SIGTERM');
  });

  it('a hold another person took meanwhile, or on a drive that is gone, is told with holdLost (OPERATOR_HOLD naming them; the drive gone) and forgotten', async () => {
    const { first, standby, owner } = await hostAndStandby(['contested', 'doomed']);
    // The holder reaches the host through a link this test controls (as an ssh-forwarded socket
    // would be reached): with the link gone it cannot reconnect, so another person holds first.
    const linkDir = mkdtempSync(join(tmpdir(), 'tds-link-'));
    const link = join(linkDir, 'host.sock');
    symlinkSync(join(suite.dataDir, 'serve', 'host.sock'), link);
    const holder = await Client.connect({ socket: link, token: (await owner.mint({ classes: ['observe', 'drive', 'admin'], label: 'first-person' })).token, reconnectTimeoutMs: 30_000 });
    suite.clients.push(holder);
    await holder.drive('contested').hold();
    await holder.drive('doomed').hold();
    expect([...holder.heldDrives].sort()).toEqual(['contested', 'doomed']);
    // The drive goes while held (kill is not held off).
    await owner.drive('doomed').kill();

    const lost: { drive: string; error: TmuxDriveError }[] = [];
    holder.on('holdLost', (drive, error) => lost.push({ drive, error }));
    const disconnected = new Promise((resolve) => holder.on('disconnected', resolve));
    unlinkSync(link);
    first.child.kill('SIGKILL');
    await first.exited;
    await standby.ready;
    await disconnected;

    const other = await owner.mint({ classes: ['observe', 'drive', 'admin'], label: 'second-person' });
    const second = await suite.connect({ token: other.token });
    await second.drive('contested').hold();

    const back = new Promise((resolve) => holder.on('reconnected', resolve));
    symlinkSync(join(suite.dataDir, 'serve', 'host.sock'), link);
    await back;
    expect(lost.map((l) => l.drive).sort()).toEqual(['contested', 'doomed']);
    const contested = lost.find((l) => l.drive === 'contested')?.error;
    expect(contested?.code).toBe('OPERATOR_HOLD');
    expect(contested?.context).toMatchObject({ drive: 'contested', heldBy: other.id });
    expect(lost.find((l) => l.drive === 'doomed')?.error).toBeInstanceOf(TmuxDriveError);
    expect(holder.heldDrives).toEqual([]);
    // The second person holds it: the first one's input is refused, and theirs goes in.
    expect(await outcome(holder.drive('contested').sendText('echo first', { submit: true }))).toMatchObject({ code: 'OPERATOR_HOLD' });
    await second.drive('contested').sendText('echo second-$((7*6))', { submit: true });
    await second.drive('contested').wait({ forText: /^second-42$/m, timeoutMs: 15_000 });

    await owner.drive('contested').kill();
    await killServe(standby, 'SIGTERM');
    rmSync(linkDir, { recursive: true, force: true });
  });

  it('tmux-drive attach keeps holding agents off after a standby takes over, until the person detaches', async () => {
    const { first, standby, owner } = await hostAndStandby(['attached']);
    const agent = await suite.connect({ token: (await owner.mint({ classes: ['observe', 'drive'], drives: ['attached'], label: 'agent' })).token, reconnectTimeoutMs: 30_000 });
    const agentSends = async (text: string): Promise<string> => {
      const r = await outcome(agent.drive('attached').sendText(text, { submit: true }));
      return typeof r === 'string' ? r : r.code;
    };
    const term = pty.spawn(process.execPath, [CLI, '--data-dir', suite.dataDir, '--config', suite.config, 'attach', 'attached'], { cols: 100, rows: 30, env: { ...process.env, TERM: 'xterm-256color' } as Record<string, string> });
    let seen = '';
    term.onData((d) => (seen += d));
    const exited = new Promise<number>((ok) => term.onExit(({ exitCode }) => ok(exitCode)));
    try {
      await expect.poll(() => agentSends('echo too-early'), { timeout: 15_000 }).toBe('OPERATOR_HOLD');

      first.child.kill('SIGKILL');
      await first.exited;
      await standby.ready;
      // The CLI's client reconnects and takes the hold again: the agent is refused from then on
      // (an input of its that came between the takeover and the re-take may be sent: the window).
      await expect.poll(() => agentSends('echo in-window'), { timeout: 15_000 }).toBe('OPERATOR_HOLD');
      expect(await agentSends('echo still-held')).toBe('OPERATOR_HOLD');
      term.write('echo person-$((8*8))\r');
      await owner.drive('attached').wait({ forText: /^person-64$/m, timeoutMs: 15_000 });

      term.write('\x02d');
      const again = setInterval(() => term.write('\x02d'), 3000);
      try {
        expect(await exited).toBe(0);
      } finally {
        clearInterval(again);
      }
      expect(seen).not.toContain('your hold on');
      await agent.drive('attached').sendText('echo after-detach-$((2*5))', { submit: true });
      await owner.drive('attached').wait({ forText: /^after-detach-10$/m, timeoutMs: 15_000 });
    } finally {
      term.kill('SIGKILL');
    }
    await owner.drive('attached').kill();
    await killServe(standby, 'SIGTERM');
  });

  it('an agent input asked after the holder\'s hold, while the drive is still being re-attached, is refused (the hold is checked after that wait)', async () => {
    const { first, standby, owner } = await hostAndStandby(['racy']);
    // Both reach the host through links this test controls, so it decides who reaches the new host first.
    const linkDir = mkdtempSync(join(tmpdir(), 'tds-link-'));
    const hostSocket = join(suite.dataDir, 'serve', 'host.sock');
    const holderLink = join(linkDir, 'holder.sock');
    const agentLink = join(linkDir, 'agent.sock');
    symlinkSync(hostSocket, holderLink);
    symlinkSync(hostSocket, agentLink);
    const holder = await Client.connect({ socket: holderLink, token: (await owner.mint({ classes: ['observe', 'drive', 'admin'], label: 'person' })).token, reconnectTimeoutMs: 30_000 });
    const agent = await Client.connect({ socket: agentLink, token: (await owner.mint({ classes: ['observe', 'drive'], drives: ['racy'], label: 'agent' })).token, reconnectTimeoutMs: 30_000 });
    suite.clients.push(holder, agent);
    await holder.drive('racy').hold();
    // The drive's tmux server is stopped: the new host's re-attach of it waits until it runs again.
    const serverPid = Number(spawnSync('tmux', ['-S', join(suite.dataDir, 'tmux', 'racy.sock'), 'display-message', '-p', '#{pid}'], { encoding: 'utf8', timeout: 5000 }).stdout.trim());
    expect(serverPid).toBeGreaterThan(0);
    unlinkSync(holderLink);
    unlinkSync(agentLink);
    const ownerBack = new Promise((resolve) => owner.on('reconnected', resolve));
    process.kill(serverPid, 'SIGSTOP');
    try {
      first.child.kill('SIGKILL');
      await first.exited;
      await ownerBack; // the new host serves (the drive is not re-attached yet)
      symlinkSync(hostSocket, holderLink);
      await expect.poll(() => holder.connected, { timeout: 10_000 }).toBe(true); // its hold request is out
      await new Promise((r) => setTimeout(r, 200));
      symlinkSync(hostSocket, agentLink);
      await expect.poll(() => agent.connected, { timeout: 10_000 }).toBe(true);
      const input = outcome(agent.drive('racy').sendText('echo slipped-$((2+2))', { submit: true }));
      await new Promise((r) => setTimeout(r, 300));
      process.kill(serverPid, 'SIGCONT');
      const r = await input;
      expect(r).toBeInstanceOf(TmuxDriveError);
      expect((r as TmuxDriveError).code).toBe('OPERATOR_HOLD');
    } finally {
      process.kill(serverPid, 'SIGCONT');
    }
    expect(holder.heldDrives).toEqual(['racy']);
    expect((await owner.drive('racy').read()).content).not.toContain('slipped-4');
    await owner.drive('racy').kill();
    await killServe(standby, 'SIGTERM');
    rmSync(linkDir, { recursive: true, force: true });
  });
});
