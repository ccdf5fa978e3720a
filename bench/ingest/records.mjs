#!/usr/bin/env node

// What Claude Code's request records cost the ingest: the same generator's corpus without and with them
// (generate.mjs `requests`), ingested alternately, in pairs, so that each ratio is taken over two ingests made
// a few seconds apart (this machine's speed drifts by 10–30% over minutes, more than the difference measured).
// Each child ingests its corpus several times into fresh stores in one process and reports the CPU of each
// ingest (main thread and every helper thread, start-up excluded); the first, which also pays for loading and
// compiling the code, is left out. Prints figures only; it asserts nothing.
//
// `--against DIST` measures what issue 14 asks literally: the corpus with request records ingested by this build
// and by another one (the `dist/` of a build before the records were read, which passes them over as lines of
// unknown types), in the same alternating pairs.
//
//   npm run build && node bench/ingest/records.mjs [--megabytes 50] [--rounds 5] [--iterations 4] [--seed 1] [--json]
//   node bench/ingest/records.mjs --against /tmp/before/dist

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { median } from '../children.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..', '..');
const dist = join(repo, 'dist');

if (process.argv[2] === '--child')
  await child(process.argv[3], Number(process.argv[4]), process.argv[5] ?? dist);
else await main();

/** In the child: `iterations` fresh ingests of `root` by the build in `build`, the CPU of each on stdout as JSON. */
async function child(root, iterations, build) {
  const { openDb } = await import(pathToFileURL(join(build, 'store', 'db.js')).href);
  const { ingest } = await import(pathToFileURL(join(build, 'sources', 'ingest.js')).href);
  const db = join(tmpdir(), `replay-bench-records-${process.pid}.db`);
  const remove = () => {
    for (const suffix of ['', '-wal', '-shm']) rmSync(db + suffix, { force: true });
  };
  const cpu = [];
  for (let i = 0; i < iterations; i++) {
    remove();
    const store = openDb(db);
    const before = process.cpuUsage();
    const [summary] = ingest(store, [root]);
    const used = process.cpuUsage(before);
    store.close();
    if (!summary || summary.sessions.new === 0) throw new Error(`nothing ingested from ${root}`);
    cpu.push((used.user + used.system) / 1e6);
  }
  remove();
  process.stdout.write(`${JSON.stringify({ cpu })}\n`);
}

async function main() {
  const { values } = parseArgs({
    options: {
      megabytes: { type: 'string', default: '50' },
      rounds: { type: 'string', default: '5' },
      iterations: { type: 'string', default: '4' },
      seed: { type: 'string', default: '1' },
      against: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  const megabytes = Number(values.megabytes);
  const rounds = Number(values.rounds);
  const iterations = Math.max(2, Number(values.iterations));
  const seed = Number(values.seed);
  if (!existsSync(join(dist, 'sources', 'ingest.js'))) throw new Error('no dist/: run `npm run build` first');
  const log = (text) => process.stderr.write(`${text}\n`);

  const against = values.against === undefined ? undefined : resolve(values.against);
  if (against && !existsSync(join(against, 'sources', 'ingest.js')))
    throw new Error(`--against ${against}: not a build's dist/ (no sources/ingest.js in it)`);
  const records = await corpus({ megabytes, seed, requests: true }, log);
  // Without --against: the corpus without records, by this build. With it: the same corpus, by the other build.
  const plain = against
    ? { ...records, name: 'plain', build: against }
    : await corpus({ megabytes, seed, requests: false }, log);
  const labels = against
    ? { plain: 'the other build', records: 'this build' }
    : { plain: 'plain', records: 'with records' };
  const loadStart = loadavg()[0];
  const pairs = [];
  for (let round = 1; round <= rounds; round++) {
    // Which goes first alternates, so a drift within a round favours neither.
    const order = round % 2 ? [plain, records] : [records, plain];
    const cpu = {};
    for (const c of order) cpu[c.name] = best(run(c.root, iterations, c.build ?? dist));
    pairs.push({ plain: cpu.plain, records: cpu.records, ratio: cpu.records / cpu.plain });
    log(
      `round ${round}/${rounds}: ${labels.plain} ${cpu.plain.toFixed(3)} s, ${labels.records} ${cpu.records.toFixed(3)} s`,
    );
  }
  const loadEnd = loadavg()[0];
  const result = {
    megabytes,
    seed,
    rounds,
    iterations,
    ...(against ? { against } : {}),
    load: { start: loadStart, end: loadEnd },
    corpora: {
      plain: { bytes: plain.bytes, files: plain.files },
      records: { bytes: records.bytes, files: records.files },
    },
    pairs,
    median: {
      plain: median(pairs.map((p) => p.plain)),
      records: median(pairs.map((p) => p.records)),
      ratio: median(pairs.map((p) => p.ratio)),
    },
  };
  if (values.json) {
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return;
  }
  const mbps = (bytes, seconds) => (bytes / 1e6 / seconds).toFixed(1);
  const lines = [
    against
      ? `Request records, the ${megabytes} MB corpus with them (seed ${seed}) by this build and by ${against}, ${rounds} rounds of alternating children, each the best of ${iterations - 1} in-process ingests after a first one`
      : `Request records, ${megabytes} MB corpora (seed ${seed}), ${rounds} rounds of alternating children, each the best of ${iterations - 1} in-process ingests after a first one`,
    `load average (1 min) at start / end: ${loadStart.toFixed(2)} / ${loadEnd.toFixed(2)}`,
    '',
    against
      ? 'round   other build CPU (s)   this build CPU (s)   ratio'
      : 'round   plain CPU (s)   with records CPU (s)   ratio',
    ...pairs.map(
      (p, i) =>
        `${String(i + 1).padEnd(8)}${p.plain.toFixed(3).padEnd(against ? 22 : 16)}${p.records.toFixed(3).padEnd(against ? 21 : 23)}${p.ratio.toFixed(3)}×`,
    ),
    '',
    `median: ${labels.plain} ${result.median.plain.toFixed(3)} s (${mbps(plain.bytes, result.median.plain)} MB/s of CPU), ${labels.records} ${result.median.records.toFixed(3)} s (${mbps(records.bytes, result.median.records)} MB/s), ratio ${result.median.ratio.toFixed(3)}×`,
    ...(against
      ? []
      : [
          `per MB: with records ÷ plain ${(result.median.records / records.bytes / (result.median.plain / plain.bytes)).toFixed(3)}×`,
        ]),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

/** The fastest of the ingests after the first (compiling, loading): the least disturbed by the machine. */
function best({ cpu }) {
  return Math.min(...cpu.slice(1));
}

function run(root, iterations, build) {
  const out = execFileSync(
    process.execPath,
    [fileURLToPath(import.meta.url), '--child', root, String(iterations), build],
    {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  return JSON.parse(out);
}

/** The generator's corpus, cached in bench/.data/ like run.mjs's (regenerated when its parameters change). */
async function corpus({ megabytes, seed, requests }, log) {
  const name = requests ? 'records' : 'plain';
  const dir = join(repo, 'bench', '.data', `records-${name}-${megabytes}mb-seed${seed}`);
  const manifestPath = join(dir, 'manifest.json');
  const params = {
    megabytes,
    seed,
    requests,
    generator: createHash('sha256')
      .update(readFileSync(join(here, 'generate.mjs')))
      .digest('hex'),
  };
  if (existsSync(manifestPath)) {
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
    if (JSON.stringify(manifest.params) === JSON.stringify(params))
      return { name, root: join(dir, 'projects'), ...manifest.result };
  }
  rmSync(dir, { recursive: true, force: true });
  log(`corpus ${name} ${megabytes} MB: generating in ${dir} ...`);
  const { generate } = await import('./generate.mjs');
  const result = generate({ dir, megabytes, seed, requests });
  mkdirSync(dir, { recursive: true });
  writeFileSync(manifestPath, `${JSON.stringify({ params, result }, null, 2)}\n`);
  return { name, root: join(dir, 'projects'), ...result };
}
