#!/usr/bin/env node
// Claude Code driver benchmark: what `replay --agent claude-code` costs against the builtin driver replaying
// the same session, both with `--model recorded` (no model, no network): the real 2.1.328 session A of
// test/fixtures/real/claude-code-2.1.328 (15 model turns, 14 tool calls, 4 prompts, so 4 `claude -p`
// processes). Also measures Claude Code's own floor on this machine: `claude --version`. Prints figures only;
// it asserts no timings. A failed replay is reported with its output and fails the bench.
//
//   npm run bench:claude-code               (builds first; median of 3 runs)
//   node bench/claude-code/run.mjs [--runs 3] [--interval 20] [--json]
//
// Every replay is a fresh `node bench/ingest/measure.mjs dist/cli/main.js replay …` child (its own peak RSS
// and CPU). While it runs, this script samples /proc every --interval ms for the replay's descendants: each
// claude process (its peak RSS). Temp files are deleted.

import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, platform, release, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { cpuSeconds, median, runNode, sampler, table, waitForChild } from '../children.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..', '..');
const cli = join(repo, 'dist', 'cli', 'main.js');
const measure = join(repo, 'bench', 'ingest', 'measure.mjs');
const projects = join(repo, 'test', 'fixtures', 'real', 'claude-code-2.1.328', 'projects');

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    interval: { type: 'string', default: '20' },
    json: { type: 'boolean', default: false },
  },
});
const runs = Number(values.runs);
const interval = Number(values.interval);
if (!Number.isInteger(runs) || runs < 1 || !(interval >= 1)) {
  process.stderr.write('--runs takes a whole number from 1, --interval a number of ms from 1\n');
  process.exit(2);
}

const work = mkdtempSync(join(tmpdir(), 'bench-claude-'));
const say = (text) => process.stderr.write(`${text}\n`);

async function replay(db, id, extra) {
  const out = join(work, `pairs-${Math.random().toString(36).slice(2)}.jsonl`);
  const usageFile = join(work, `usage-${Math.random().toString(36).slice(2)}.json`);
  const started = runNode(
    [measure, cli, 'replay', id, '--db', db, '--out', out, '--json', ...extra],
    usageFile,
    {
      TMPDIR: work,
    },
  );
  // The measuring child is this script's child; the replay runs inside it, Claude Code below it.
  const child = await waitForChild();
  const sample = child ? sampler(child, interval) : undefined;
  const result = await started;
  const seen = sample?.stop() ?? new Map();
  if (result.code !== 0) {
    say(result.stderr);
    throw new Error(`replay ${extra.join(' ')} exited ${result.code}`);
  }
  const report = JSON.parse(result.stdout);
  const claudes = [...seen.values()].filter((entry) => /claude/.test(entry.comm));
  rmSync(out, { force: true });
  return {
    seconds: result.seconds,
    cpu: cpuSeconds(result.usage),
    rssMiB: (result.usage.maxRSS ?? 0) / 1024,
    turns: report.turnsDone,
    claudeProcesses: claudes.length,
    claudePeakMiB: Math.max(0, ...claudes.map((entry) => entry.kib)) / 1024,
  };
}

try {
  const db = join(work, 'store.db');
  const ingest = spawnSync(process.execPath, [cli, 'ingest', projects, '--db', db], { encoding: 'utf8' });
  if (ingest.status !== 0) throw new Error(`ingest failed: ${ingest.stderr}`);
  const listed = JSON.parse(
    spawnSync(process.execPath, [cli, 'sessions', '--db', db, '--json'], { encoding: 'utf8' }).stdout,
  );
  const id = listed.find((session) => session.title.startsWith('[A1]')).id;
  const which = spawnSync(process.execPath, [cli, 'replay', '--help'], { encoding: 'utf8' });
  if (which.status !== 0) throw new Error('the CLI does not start');
  // The same binary the driver would pick without --claude-bin.
  const { findClaude } = await import(
    pathToFileURL(join(repo, 'dist', 'drivers', 'claude-code', 'binary.js')).href
  );
  const claudeBin = findClaude().path;

  const version = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    spawnSync(claudeBin, ['--version'], { env: { ...process.env, DISABLE_AUTOUPDATER: '1' } });
    version.push((performance.now() - started) / 1000);
  }
  const builtin = [];
  const driven = [];
  for (let i = 0; i < runs; i++) {
    say(`run ${i + 1}/${runs}: builtin …`);
    builtin.push(await replay(db, id, []));
    const ws = join(work, `ws-${i}`);
    mkdirSync(ws);
    say(`run ${i + 1}/${runs}: claude-code …`);
    driven.push(
      await replay(db, id, ['--agent', 'claude-code', '--claude-bin', claudeBin, '--workspace', ws]),
    );
  }
  const m = (list, key) => median(list.map((entry) => entry[key]));
  const figures = {
    machine: `${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), ${platform()} ${release()}, node ${process.version}`,
    runs,
    turns: m(driven, 'turns'),
    claudeProcesses: m(driven, 'claudeProcesses'),
    claudeVersionSeconds: median(version),
    builtin: { seconds: m(builtin, 'seconds'), cpu: m(builtin, 'cpu'), rssMiB: m(builtin, 'rssMiB') },
    claudeCode: {
      seconds: m(driven, 'seconds'),
      cpu: m(driven, 'cpu'),
      rssMiB: m(driven, 'rssMiB'),
      claudePeakMiB: m(driven, 'claudePeakMiB'),
    },
  };
  const extra = figures.claudeCode.seconds - figures.builtin.seconds;
  figures.overheadPerSessionSeconds = extra;
  figures.overheadPerProcessSeconds = extra / Math.max(1, figures.claudeProcesses);
  figures.overheadPerStepSeconds = extra / Math.max(1, figures.turns);
  if (values.json) process.stdout.write(`${JSON.stringify(figures, null, 2)}\n`);
  else {
    const s = (x) => x.toFixed(2);
    process.stdout.write(
      `replay-history Claude Code driver benchmark — ${figures.machine}, median of ${runs}\n` +
        `session A of the 2.1.328 fixture: ${figures.turns} turns, ${figures.claudeProcesses} claude processes, --model recorded\n\n` +
        `${table([
          ['', 'builtin', 'claude-code'],
          ['replay wall time (s)', s(figures.builtin.seconds), s(figures.claudeCode.seconds)],
          ['replay-history CPU (s)', s(figures.builtin.cpu), s(figures.claudeCode.cpu)],
          ['replay-history peak RSS (MiB)', s(figures.builtin.rssMiB), s(figures.claudeCode.rssMiB)],
          ['claude peak RSS, largest process (MiB)', '-', s(figures.claudeCode.claudePeakMiB)],
          ['claude --version, wall (s)', '', s(figures.claudeVersionSeconds)],
          ['overhead per session (s)', '', s(extra)],
          ['overhead per claude process (s)', '', s(figures.overheadPerProcessSeconds)],
          ['overhead per step, all included (s)', '', s(figures.overheadPerStepSeconds)],
        ])}\n`,
    );
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
