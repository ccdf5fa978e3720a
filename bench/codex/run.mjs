#!/usr/bin/env node
// Codex driver benchmark: what `replay --agent codex` costs against the builtin driver replaying the same
// session, both with `--model recorded` (no model, no network): the real 0.169 main thread of
// test/fixtures/real/codex-0.169.0 (14 model turns, 14 tool calls, 3 prompts, so 3 `codex exec` processes,
// and its compaction with --context-limit 100000, as recorded). Also measures Codex's own floor on this
// machine: `codex --version`, and the hook probe (once: it is cached after). Prints figures only; it asserts
// no timings. A failed replay is reported with its output and fails the bench.
//
//   npm run bench:codex               (builds first; median of 3 runs)
//   node bench/codex/run.mjs [--runs 3] [--interval 20] [--json]
//
// Every replay is a fresh `node bench/ingest/measure.mjs dist/cli/main.js replay …` child (its own peak RSS
// and CPU). While it runs, this script samples /proc every --interval ms for the replay's descendants: each
// codex process (its peak RSS). Temp files are deleted.

import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, platform, release, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { cpuSeconds, median, runNode, sampler, table, waitForChild } from '../children.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..', '..');
const cli = join(repo, 'dist', 'cli', 'main.js');
const measure = join(repo, 'bench', 'ingest', 'measure.mjs');
const sessions = join(repo, 'test', 'fixtures', 'real', 'codex-0.169.0', 'sessions');

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

const work = mkdtempSync(join(tmpdir(), 'bench-codex-'));
const say = (text) => process.stderr.write(`${text}\n`);

async function replay(db, id, extra) {
  const out = join(work, `pairs-${Math.random().toString(36).slice(2)}.jsonl`);
  const usageFile = join(work, `usage-${Math.random().toString(36).slice(2)}.json`);
  const started = runNode(
    [measure, cli, 'replay', id, '--db', db, '--out', out, '--json', ...extra],
    usageFile,
    // A cache of its own: the first replay pays the hook probe, as a user's first one does.
    { TMPDIR: work, XDG_CACHE_HOME: join(work, 'cache') },
  );
  // The measuring child is this script's child; the replay runs inside it, Codex below it.
  const child = await waitForChild();
  const sample = child ? sampler(child, interval) : undefined;
  const result = await started;
  const seen = sample?.stop() ?? new Map();
  if (result.code !== 0) {
    say(result.stderr);
    throw new Error(`replay ${extra.join(' ')} exited ${result.code}`);
  }
  const report = JSON.parse(result.stdout);
  const codexes = [...seen.values()].filter((entry) => /codex/.test(entry.comm));
  rmSync(out, { force: true });
  return {
    seconds: result.seconds,
    cpu: cpuSeconds(result.usage),
    rssMiB: (result.usage.maxRSS ?? 0) / 1024,
    turns: report.turnsDone,
    codexProcesses: codexes.length,
    codexPeakMiB: Math.max(0, ...codexes.map((entry) => entry.kib)) / 1024,
  };
}

try {
  const db = join(work, 'store.db');
  const ingest = spawnSync(process.execPath, [cli, 'ingest', sessions, '--db', db], { encoding: 'utf8' });
  if (ingest.status !== 0) throw new Error(`ingest failed: ${ingest.stderr}`);
  const listed = JSON.parse(
    spawnSync(process.execPath, [cli, 'sessions', '--db', db, '--json'], { encoding: 'utf8' }).stdout,
  );
  const id = listed.find((session) => session.sourceId === '01a23320-421e-78b0-966b-1e7637ec5e5c').id;
  const which = spawnSync(process.execPath, [cli, 'replay', '--help'], { encoding: 'utf8' });
  if (which.status !== 0) throw new Error('the CLI does not start');
  // The same binary the driver would pick without --codex-bin.
  const { findCodex } = await import(pathToFileURL(join(repo, 'dist', 'drivers', 'codex', 'binary.js')).href);
  const codexBin = findCodex().path;

  const version = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    spawnSync(codexBin, ['--version']);
    version.push((performance.now() - started) / 1000);
  }
  const builtin = [];
  const driven = [];
  for (let i = 0; i < runs; i++) {
    say(`run ${i + 1}/${runs}: builtin …`);
    builtin.push(await replay(db, id, []));
    const ws = join(work, `ws-${i}`);
    mkdirSync(ws);
    writeFileSync(join(ws, 'hello.py'), 'print("Helo, wrld")\n');
    writeFileSync(join(ws, 'notes.txt'), 'notes\n');
    say(`run ${i + 1}/${runs}: codex …`);
    driven.push(
      await replay(db, id, [
        '--agent',
        'codex',
        '--codex-bin',
        codexBin,
        '--workspace',
        ws,
        '--context-limit',
        '100000',
      ]),
    );
  }
  const m = (list, key) => median(list.map((entry) => entry[key]));
  const figures = {
    machine: `${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), ${platform()} ${release()}, node ${process.version}`,
    runs,
    turns: m(driven, 'turns'),
    codexProcesses: m(driven, 'codexProcesses'),
    codexVersionSeconds: median(version),
    builtin: { seconds: m(builtin, 'seconds'), cpu: m(builtin, 'cpu'), rssMiB: m(builtin, 'rssMiB') },
    codex: {
      seconds: m(driven, 'seconds'),
      cpu: m(driven, 'cpu'),
      rssMiB: m(driven, 'rssMiB'),
      codexPeakMiB: m(driven, 'codexPeakMiB'),
    },
  };
  const extra = figures.codex.seconds - figures.builtin.seconds;
  figures.overheadPerSessionSeconds = extra;
  figures.overheadPerProcessSeconds = extra / Math.max(1, figures.codexProcesses);
  figures.overheadPerStepSeconds = extra / Math.max(1, figures.turns);
  if (values.json) process.stdout.write(`${JSON.stringify(figures, null, 2)}\n`);
  else {
    const s = (x) => x.toFixed(2);
    process.stdout.write(
      `replay-history Codex driver benchmark — ${figures.machine}, median of ${runs}\n` +
        `the 0.169 fixture's main thread: ${figures.turns} turns, ${figures.codexProcesses} codex processes, --model recorded\n\n` +
        `${table([
          ['', 'builtin', 'codex'],
          ['replay wall time (s)', s(figures.builtin.seconds), s(figures.codex.seconds)],
          ['replay-history CPU (s)', s(figures.builtin.cpu), s(figures.codex.cpu)],
          ['replay-history peak RSS (MiB)', s(figures.builtin.rssMiB), s(figures.codex.rssMiB)],
          ['codex peak RSS, largest process (MiB)', '-', s(figures.codex.codexPeakMiB)],
          ['codex --version, wall (s)', '', s(figures.codexVersionSeconds)],
          ['overhead per session (s)', '', s(extra)],
          ['overhead per codex process (s)', '', s(figures.overheadPerProcessSeconds)],
          ['overhead per step, all included (s)', '', s(figures.overheadPerStepSeconds)],
        ])}\n`,
    );
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
