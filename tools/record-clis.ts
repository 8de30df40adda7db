/**
 * Records the real AI CLIs (and ordinary programs) through tmux-drive: per scripted drive, a
 * recording (test/fixtures/cli-recordings: the pane's bytes with their times, the labels a person
 * gave over time, process samples, what the library reported) and labelled frames
 * (test/fixtures/cli-frames/<program>/*.json). One command re-records everything after a CLI
 * update (the versions go into each fixture's metadata):
 *
 *   npm install --prefix /var/tmp/aicli @google/gemini-cli@0.61.0 @openai/codex@0.171.0 \
 *     @anthropic-ai/claude-code@2.1.197 opencode-ai@1.18.33
 *   npm run record-clis -- [--only name,name] [--ai-dir /var/tmp/aicli] [--skip-ai] [--list]
 *
 * The CLIs must be installed outside /tmp (the sandbox mounts its own /tmp). Each runs with a
 * scratch HOME (seeded as the script says), no network, under the default sandbox.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadProfileFiles } from '../lib/driver/profile-files.js';
import { judgeRecordedFrames } from './fixture-format.js';
import { packageRoot } from './record/capture.js';
import { recordSession, writeSession, type RecordingScript } from './record/cli-session.js';
import { aiScripts, programScripts } from './record/cli-scripts.js';
import type { RecordingTimeline } from './record/recording-format.js';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      only: { type: 'string' },
      'ai-dir': { type: 'string' },
      'skip-ai': { type: 'boolean', default: false },
      list: { type: 'boolean', default: false },
    },
  });
  const root = packageRoot();
  const recordingsDir = join(root, 'test', 'fixtures', 'cli-recordings');
  const framesDir = join(root, 'test', 'fixtures', 'cli-frames');
  const aiDir = values['ai-dir'] ?? process.env.TMUX_DRIVE_AI_DIR ?? '/var/tmp/aicli';
  const scripts: RecordingScript[] = [...(values['skip-ai'] ? [] : aiScripts(aiDir)), ...programScripts()];
  if (values.list) {
    for (const sc of scripts) console.log(`${sc.name}\t${sc.program}\t${sc.version.name} ${sc.version.version}`);
    return;
  }
  const only = values.only ? new Set(values.only.split(',')) : undefined;
  const wanted = scripts.filter((sc) => only === undefined || only.has(sc.name));
  if (only) for (const n of only) if (!scripts.some((sc) => sc.name === n)) throw new Error(`no script named ${n} (see --list)`);
  const profiles = loadProfileFiles();
  // Outside /tmp, as a user's HOME is: codex warns about helper binaries under /tmp.
  const dataRoot = mkdtempSync(join('/var/tmp', 'td-cli-'));
  const indexFile = join(recordingsDir, 'index.json');
  const index = new Set<string>(existsSync(indexFile) ? (JSON.parse(readFileSync(indexFile, 'utf8')) as { recordings: string[] }).recordings : []);
  try {
    for (const sc of wanted) {
      try {
        realpathSync(sc.allow.match.path);
      } catch {
        console.warn(`- ${sc.name}: skipped, ${sc.allow.match.path} is not installed`);
        continue;
      }
      console.log(`● ${sc.name} (${sc.version.name} ${sc.version.version})`);
      try {
        const rec = await recordSession(sc, dataRoot);
        // Frames a previous recording of this script made and this one did not are removed.
        const old = join(recordingsDir, `${sc.name}.timeline.json`);
        if (existsSync(old)) {
          for (const f of (JSON.parse(readFileSync(old, 'utf8')) as RecordingTimeline).frames) rmSync(join(framesDir, sc.program, `${f}.json`), { force: true });
        }
        writeSession(rec, sc.program, recordingsDir, framesDir);
        index.add(sc.name);
        const judged = judgeRecordedFrames(rec.frames.map((f) => ({ name: `${sc.program}/${f.name}`, frame: f.frame })), profiles);
        for (const j of judged) {
          console.log(`  ${j.ok ? '✓' : '✗'} ${j.name}: label ${j.label.state}${j.label.dialog ? ` (${j.label.dialog} dialog)` : ''}, got ${j.verdict.state}/${j.verdict.reason}${j.verdict.dialog ? ` (${j.verdict.dialog.kind})` : ''}${j.ok ? '' : ` — ${j.wrong.join(', ')}`}`);
        }
        console.log(`  ${rec.frames.length} frames, ${rec.timeline.durationS.toFixed(1)} s, ${Math.round(rec.cast.byteLength / 1024)} KB`);
      } catch (err) {
        console.error(`✗ ${sc.name}: not recorded: ${(err as Error).message}`);
        process.exitCode = 1;
      }
    }
  } finally {
    rmSync(dataRoot, { recursive: true, force: true });
  }
  mkdirSync(recordingsDir, { recursive: true });
  writeFileSync(indexFile, `${JSON.stringify({ recordings: [...index].sort() }, null, 1)}\n`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
