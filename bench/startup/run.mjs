#!/usr/bin/env node
// Start-up benchmark: how long each command takes from `node` to exit, and its peak RSS, next to bare node
// (an empty program) measured in the same run. The target: `--version`, `--help`, `sessions`, `show` and `runs`
// within 0.25 s of bare node. Prints figures only; it asserts no timings.
//
//   npm run bench:startup                         (builds first)
//   node bench/startup/run.mjs [--runs 15] [--json]
//   node bench/startup/run.mjs --against /tmp/before/dist   (another build's dist/, run in turn with this one)
//
// Every measurement is a fresh child process started through bench/ingest/measure.mjs (which records the peak
// RSS and CPU of the process it runs), bare node included, so the wrapper costs both sides the same. The
// commands take turns run after run, so load on the machine falls on all of them alike; each figure is the
// median of the runs. The store is the sample sessions, ingested once into a temp dir.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { cpuSeconds, median, runNode, table } from '../children.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..', '..');
const main = join(repo, 'dist', 'cli', 'main.js');
const measure = join(repo, 'bench', 'ingest', 'measure.mjs');

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '15' },
    against: { type: 'string' },
    json: { type: 'boolean', default: false },
  },
});
const runs = Math.max(1, Number(values.runs));
/** Another build's CLI, measured in turn with this one (its figures in columns of their own). */
const other = values.against === undefined ? undefined : join(resolve(values.against), 'cli', 'main.js');

const work = mkdtempSync(join(tmpdir(), 'bench-startup-'));
const db = join(work, 'replay.db');
const usageFile = join(work, 'usage.json');
const empty = join(work, 'empty.mjs');
writeFileSync(empty, '');

try {
  const ingest = await runNode([main, 'ingest', join(repo, 'sample-sessions'), '--db', db], usageFile);
  if (ingest.code !== 0) throw new Error(`ingest failed: ${ingest.stderr}`);

  /** name, arguments after main.js, and whether it is held to the 0.25 s target. */
  const commands = [
    ['--version', ['--version'], true],
    ['--help', ['--help'], true],
    ['sessions', ['sessions', '--db', db], true],
    ['show 6f1c2a34', ['show', '6f1c2a34', '--db', db], true],
    ['runs', ['runs', '--db', db], true],
    ['ingest --help', ['ingest', '--help'], false],
    ['replay --help', ['replay', '--help'], false],
    ['export --help', ['export', '--help'], false],
    ['stats --help', ['stats', '--help'], false],
    ['verify --help', ['verify', '--help'], false],
    // Commands that do a little work, as a hook after every turn runs them: start-up is most of their time.
    ['ingest, nothing new', ['ingest', join(repo, 'sample-sessions'), '--db', db], false],
    [
      'replay 6f1c2a34',
      ['replay', '6f1c2a34', '--db', db, '--out', join(work, 'pairs.jsonl'), '--force'],
      false,
    ],
  ];
  const samples = new Map([['bare node', []], ...commands.map(([name]) => [name, []])]);
  const others = new Map(commands.map(([name]) => [name, []]));
  for (let i = 0; i < runs; i++) {
    samples.get('bare node').push(await runNode([measure, empty], usageFile));
    for (const [name, args] of commands) {
      // The two builds take turns as to which goes first, so a drift favours neither.
      const builds = other ? (i % 2 ? [other, main] : [main, other]) : [main];
      for (const build of builds) {
        const result = await runNode([measure, build, ...args], usageFile);
        if (result.code !== 0) throw new Error(`${name} (${build}) exited ${result.code}: ${result.stderr}`);
        (build === main ? samples : others).get(name).push(result);
      }
    }
  }

  const figure = (list) => ({
    seconds: median(list.map((r) => r.seconds)),
    cpuSeconds: median(list.map((r) => cpuSeconds(r.usage))),
    rssMiB: median(list.map((r) => (r.usage.maxRSS ?? 0) / 1024)),
  });
  const bare = figure(samples.get('bare node'));
  const results = [
    { name: 'bare node', ...bare, overBareSeconds: 0, target: null },
    ...commands.map(([name, , held]) => {
      const f = figure(samples.get(name));
      const over = f.seconds - bare.seconds;
      const against = other ? figure(others.get(name)) : undefined;
      return {
        name,
        ...f,
        overBareSeconds: over,
        target: held ? (over <= 0.25 ? 'met' : 'missed') : null,
        ...(against ? { other: { ...against, overBareSeconds: against.seconds - bare.seconds } } : {}),
      };
    }),
  ];
  const machine = { cpus: cpus().length, node: process.version, load: loadavg().map((l) => l.toFixed(2)) };
  if (values.json) {
    process.stdout.write(
      `${JSON.stringify({ runs, machine, ...(other ? { against: other } : {}), results }, null, 2)}\n`,
    );
  } else {
    process.stdout.write(
      `start-up, median of ${runs} runs · ${machine.cpus} CPUs · node ${machine.node} · load ${machine.load.join(' ')}\n${other ? `the other build: ${other}\n` : ''}\n`,
    );
    process.stdout.write(
      `${table([
        [
          'command',
          'wall s',
          'over bare node s',
          'CPU s',
          'peak RSS MiB',
          '≤ 0.25 s over bare',
          ...(other ? ['other: over bare s', 'other: CPU s', 'other: peak RSS MiB'] : []),
        ],
        ...results.map((r) => [
          r.name,
          r.seconds.toFixed(3),
          r.name === 'bare node' ? '–' : `+${r.overBareSeconds.toFixed(3)}`,
          r.cpuSeconds.toFixed(3),
          r.rssMiB.toFixed(1),
          r.target ?? '',
          ...(other
            ? r.other
              ? [
                  `+${r.other.overBareSeconds.toFixed(3)}`,
                  r.other.cpuSeconds.toFixed(3),
                  r.other.rssMiB.toFixed(1),
                ]
              : ['–', '', '']
            : []),
        ]),
      ])}\n`,
    );
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
