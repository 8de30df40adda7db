/**
 * `npm run demo`: a real drive of a python3 REPL, narrated. Launch it in its own tmux server (in
 * the bwrap sandbox), wait for the prompt, type, read the answer from the mirrored screen, show the
 * screen, prove the mirror equals tmux's grid, kill it and verify nothing is left.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Driver } from '../lib/index.js';

const say = (msg: string): void => console.log(`\x1b[36m▸\x1b[0m ${msg}`);

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'td-demo-'));
  const python = '/usr/bin/python3';
  const driver = await Driver.open({
    dataDir,
    config: {
      allow: [
        {
          id: 'python3',
          match: { path: python },
          consent: { acknowledgedRisk: true, acknowledgedAt: '2026-11-30T00:00:00Z' },
        },
      ],
    },
  });
  try {
    say(`data dir ${dataDir}; allowlist: python3 (workspace filesystem, no network, bwrap sandbox)`);
    let t = performance.now();
    const s = await driver.create({ allowId: 'python3', args: ['-q'], cols: 80, rows: 12, name: 'demo' });
    say(`launched python3 -q in its own tmux server in ${(performance.now() - t).toFixed(1)} ms (session ${s.id})`);

    t = performance.now();
    const prompt = await s.wait({ forText: '>>> ', timeoutMs: 10_000 });
    say(`waited for the ">>> " prompt: ${prompt.outcome} after ${prompt.elapsedMs} ms; status ${prompt.status.state} (${prompt.status.reason})`);

    const question = 'sum(i * i for i in range(1, 101))';
    say(`typing: ${question}  (then Enter, as its own key, once the text shows)`);
    await s.sendText(question, { submit: true });
    const answer = await s.wait({ forText: /^338350$/m, timeoutMs: 10_000 });
    say(`answer appeared on the mirrored screen: ${answer.outcome} in ${answer.elapsedMs} ms`);
    await s.wait({ forIdleMs: 100 });

    await s.sendText('import os; print("cwd:", os.getcwd()); print("network:", [l.split(":")[0].strip() for l in open("/proc/net/dev").readlines()[2:]])', { submit: true });
    await s.wait({ forText: 'network:', timeoutMs: 10_000 });
    await s.wait({ forIdleMs: 200 });

    const screen = s.read();
    say(`the screen (${screen.cols}x${screen.rows}, cursor at ${screen.cursor.x},${screen.cursor.y}):`);
    console.log(`┌${'─'.repeat(screen.cols)}┐`);
    for (const line of screen.content.split('\n')) console.log(`│${line.padEnd(screen.cols)}│`);
    console.log(`└${'─'.repeat(screen.cols)}┘`);

    const fidelity = await s.fidelity();
    say(`mirror vs tmux's own grid: ${fidelity.equal ? 'identical, cell for cell (characters, attributes, cursor)' : `DIFFERENT: ${JSON.stringify(fidelity.mismatches.slice(0, 3))}`}`);
    const status = s.status();
    say(`status: ${status.state} (${status.confidence}, ${status.reason}); ${status.interactions} interactions`);

    say(`an operator can take over at any time with: ${s.attachCommand().join(' ')}`);
    t = performance.now();
    await s.kill();
    say(`killed and verified in ${(performance.now() - t).toFixed(1)} ms: server gone, process tree gone, socket removed`);
    if (!fidelity.equal) process.exitCode = 1;
  } finally {
    await driver.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(`demo failed: ${err instanceof Error ? `${(err as { code?: string }).code ?? ''} ${err.message}` : String(err)}`);
  process.exit(1);
});
