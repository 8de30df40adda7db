/**
 * Replays the screen fixture corpus (test/fixtures/screens) through classifyScreen and prints the
 * confusion matrix (labelled state × classified state), the frames whose reason, dialog kind or
 * suggestion differ from their label, and the count of working frames classified awaiting-input
 * (which must be zero: acting on a busy program is the costly mistake). Exits 1 on any mismatch.
 *
 *   npm run corpus
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadProfileFiles } from '../lib/profile-files.js';
import { confusionMatrix, formatMatrix, loadCorpus, replayCorpus } from './fixture-format.js';

function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error('package.json not found above tools/corpus');
    dir = up;
  }
  return dir;
}

const results = replayCorpus(loadCorpus(join(packageRoot(), 'test', 'fixtures', 'screens')), loadProfileFiles());
const synthetic = results.filter((r) => r.fixture.synthetic).length;
console.log(`${results.length} frames (${results.length - synthetic} recorded from real programs, ${synthetic} synthetic)\n`);
console.log(formatMatrix(confusionMatrix(results)));
const wrong = results.filter((r) => !r.ok);
const busyAsWaiting = results.filter((r) => r.fixture.label.state === 'working' && r.verdict.state === 'awaiting-input');
console.log(`\nworking frames classified awaiting-input: ${busyAsWaiting.length}`);
const reasons = results.filter((r) => r.ok).length;
console.log(`state, reason, dialog kind and suggestion as labelled: ${reasons}/${results.length}`);
for (const r of wrong) {
  const l = r.fixture.label;
  const v = r.verdict;
  console.log(`  ✗ ${r.name}: label ${l.state}/${l.reason}${l.dialogKind ? `/${l.dialogKind}` : ''}, got ${v.state}/${v.reason}${v.dialog ? `/${v.dialog.kind}` : ''}`);
}
if (wrong.length > 0 || busyAsWaiting.length > 0) process.exitCode = 1;
