#!/usr/bin/env node
// Export benchmark: how fast `replay-history export` writes training data from a store of 1,000 and 10,000
// sessions (samples/s, sessions/s, MB/s of output) and whether its memory stays flat as the store grows, for four
// exports — openai per session (redacted, the default, and --no-redact), openai per model turn, sharegpt per user
// turn — against the floor every export is held to in the same run: reading every session through the store
// (SessionStore.load) and writing its messages as JSON lines (JSON.stringify, 1 MB writes; MB/s of what it
// wrote), and below that the reading alone and a raw read of the messages table. Prints figures only; it asserts
// no timings.
//
//   npm run bench:export                  (builds first; 1,000 and 10,000 sessions, median of 3)
//   node bench/export/run.mjs [--sizes 1000,10000] [--runs 3] [--seed 1] [--no-probe] [--profile] [--json]
//   node bench/export/run.mjs --render report.json      (the tables of a report saved with --json)
//
// Sessions come from the replay benchmark's generator (bench/replay/sessions.mjs) and are cached in
// bench/.data/export-sessions-seed<seed>/ (git-ignored) with the stores ingested from them by the built CLI;
// the sessions are regenerated when the sizes, the seed or a generator changed, a store is re-ingested when the
// ingest's code in dist/ changed. Every measurement is a fresh `node` child (through bench/ingest/measure.mjs for
// its peak RSS and CPU time); the runs go round-robin over the measurements, so that a slow spell of the machine
// is spread over all of them. Outputs go to a temp dir, deleted after each run. The store is only read.

import { createHash } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { cpus, loadavg, platform, release, tmpdir, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
// Already a dependency of the CLI: used read-only to count what the stores hold.
import Database from 'better-sqlite3';
import { cpuSeconds, dbBytes, median, removeDb, runNode, table } from '../children.mjs';
import { buildSessions } from '../replay/sessions.mjs';
import { summarize } from './profile.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..', '..');
const dataDir = join(repo, 'bench', '.data');
const dist = join(repo, 'dist');
const cli = join(dist, 'cli', 'main.js');
const measure = join(repo, 'bench', 'ingest', 'measure.mjs');
const probe = join(repo, 'bench', 'replay', 'probe.mjs');
const baseline = join(here, 'baseline.mjs');
const MB = 1e6;
/** Peak RSS over the largest store within this factor of the smallest counts as flat. */
const flatFactor = 1.25;

const { values } = parseArgs({
  allowNegative: true,
  options: {
    sizes: { type: 'string', default: '1000,10000' },
    runs: { type: 'string', default: '3' },
    seed: { type: 'string', default: '1' },
    probe: { type: 'boolean', default: true },
    profile: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
    render: { type: 'string' },
  },
});
const sizes = [...new Set(values.sizes.split(',').map((s) => Number(s.trim())))].sort((a, b) => a - b);
const runs = Math.max(1, Number(values.runs));
const loadAtStart = loadavg()[0];
if (!sizes.every((n) => Number.isInteger(n) && n >= 10) || !Number.isInteger(runs)) {
  process.stderr.write(
    `--sizes takes whole numbers of sessions from 10, --runs a whole number: ${values.sizes} / ${values.runs}\n`,
  );
  process.exit(2);
}
if (!values.render && !existsSync(cli)) {
  process.stderr.write(`${cli} is missing: run \`npm run build\` (or use \`npm run bench:export\`)\n`);
  process.exit(2);
}

const log = (text) => process.stderr.write(`${text}\n`);
const sha = (...parts) => {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return hash.digest('hex').slice(0, 16);
};

/** The measured exports: what each passes to `replay-history export` besides --db, --out and --json. */
const scenarios = [
  {
    key: 'openai-session',
    label: 'openai, per session, redacted (default)',
    args: ['--format', 'openai', '--unit', 'session'],
  },
  {
    key: 'openai-session-no-redact',
    label: 'openai, per session, --no-redact',
    args: ['--format', 'openai', '--unit', 'session', '--no-redact'],
  },
  {
    key: 'openai-model-turn',
    label: 'openai, per model turn, redacted',
    args: ['--format', 'openai', '--unit', 'model-turn'],
  },
  {
    key: 'sharegpt-user-turn',
    label: 'sharegpt, per user turn, redacted',
    args: ['--format', 'sharegpt', '--unit', 'user-turn'],
  },
];

// ---------------------------------------------------------------------------------------------------------
// Sessions and stores, cached

/** Every file of a directory tree, sorted, for hashing. */
function filesUnder(dir) {
  return readdirSync(dir, { recursive: true })
    .map((name) => join(dir, name))
    .filter((path) => statSync(path).isFile() && path.endsWith('.js'))
    .sort();
}

/** What the stores depend on: the ingest command and the code under it (not export, replay or verify). */
function ingestHash() {
  const files = [
    ...['sources', 'store', 'model'].flatMap((dir) => filesUnder(join(dist, dir))),
    join(dist, 'cli', 'commands', 'ingest.js'),
  ];
  return sha(...files.map((path) => readFileSync(path)));
}

async function cachedCorpus() {
  const dir = join(dataDir, `export-sessions-seed${values.seed}`);
  const manifestPath = join(dir, 'manifest.json');
  const params = {
    counts: sizes,
    seed: values.seed,
    generator: sha(readFileSync(join(repo, 'bench', 'ingest', 'generate.mjs'))),
    sessions: sha(readFileSync(join(repo, 'bench', 'replay', 'sessions.mjs'))),
  };
  let manifest = existsSync(manifestPath) ? JSON.parse(readFileSync(manifestPath, 'utf8')) : undefined;
  if (JSON.stringify(manifest?.params) !== JSON.stringify(params)) {
    rmSync(dir, { recursive: true, force: true });
    log(`sessions: generating ${sizes.join(', ')} in ${dir} (about 2 minutes per 1,000 on 2 cores) ...`);
    const started = performance.now();
    const result = buildSessions({ dir, counts: sizes, seed: values.seed });
    result.seconds = (performance.now() - started) / 1000;
    log(
      `sessions: ${result.sessions} sessions, ${result.responses} turns, ${(result.bytes / MB).toFixed(1)} MB ` +
        `in ${result.seconds.toFixed(1)} s`,
    );
    manifest = { params, result, stores: {} };
    // The manifest is written last: an interrupted generation is redone.
    writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
  } else log(`sessions: cached in ${dir}`);

  // A store per size, ingested from parts 0..i by the CLI as it is built now.
  const ingest = ingestHash();
  const stores = [];
  for (const [i, n] of sizes.entries()) {
    const db = join(dir, `store-${n}.db`);
    const parts = sizes.slice(0, i + 1).map((_, p) => join(dir, `part-${p}`));
    if (manifest.stores[n]?.ingest !== ingest || !existsSync(db)) {
      removeDb(db);
      log(`store of ${n.toLocaleString('en-US')} sessions: ingesting ...`);
      const run = await runNode([cli, 'ingest', ...parts, '--db', db, '--json'], join(dir, 'ingest.json'));
      if (run.code !== 0) throw new Error(`ingest failed (exit ${run.code}):\n${run.stderr.slice(0, 2000)}`);
      // Folded into the main file, so that every export opens the same file with an empty WAL.
      const store = new Database(db);
      store.pragma('wal_checkpoint(TRUNCATE)');
      store.close();
      manifest.stores[n] = { ingest, ingestSeconds: run.seconds, ...storeCounts(db) };
      writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
    }
    const { ingest: _, ...counts } = manifest.stores[n];
    stores.push({ sessions: n, db, ...counts, bytes: dbBytes(db) });
  }
  return { dir, result: manifest.result, stores };
}

function storeCounts(db) {
  const store = new Database(db, { readonly: true });
  try {
    const totals = store
      .prepare(
        `SELECT count(*) AS stored, coalesce(sum(turn_count), 0) AS turns,
           coalesce(sum(message_count), 0) AS messages, coalesce(max(turn_count), 0) AS mostTurns FROM sessions`,
      )
      .get();
    const text = store
      .prepare(
        `SELECT sum(c) AS chars, max(c) AS largestChars FROM (
           SELECT sum(length(parts)) AS c FROM messages GROUP BY session_id)`,
      )
      .get();
    return { ...totals, partsChars: text.chars ?? 0, largestSessionChars: text.largestChars ?? 0 };
  } finally {
    store.close();
  }
}

/** Reads the store once, so that every child finds it in the page cache. */
function warm(db) {
  const chunk = Buffer.alloc(1 << 20);
  for (const suffix of ['', '-wal']) {
    if (!existsSync(db + suffix)) continue;
    const fd = openSync(db + suffix, 'r');
    try {
      while (readSync(fd, chunk, 0, chunk.length) > 0);
    } finally {
      closeSync(fd);
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// Children

function parseJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** One export, in a fresh child: its report, output size, wall time, peak RSS and CPU. */
async function exportOnce(store, scenario, scratch, how = 'measure') {
  const out = join(scratch, `${scenario.key}.jsonl`);
  const usageFile = join(scratch, 'usage.json');
  const args = [cli, 'export', '--db', store.db, '--out', out, '--json', ...scenario.args];
  let run;
  if (how === 'probe')
    run = await runNode(['--expose-gc', probe, ...args], usageFile, { BENCH_PROBE_FILE: usageFile });
  else if (how === 'profile') {
    const dir = join(scratch, `profile-${scenario.key}`);
    run = await runNode(['--cpu-prof', `--cpu-prof-dir=${dir}`, ...args], usageFile);
    const file = existsSync(dir) ? readdirSync(dir).find((name) => name.endsWith('.cpuprofile')) : undefined;
    run.profile = file ? summarize(join(dir, file)) : undefined;
    rmSync(dir, { recursive: true, force: true });
  } else run = await runNode([measure, ...args], usageFile);
  run.report = parseJson(run.stdout);
  run.outBytes = existsSync(out) ? statSync(out).size : 0;
  // Whatever the export left in the scratch dir: the output, a companion (dataset_info.json), a temp file.
  for (const name of readdirSync(scratch))
    if (!name.startsWith('profile-')) rmSync(join(scratch, name), { recursive: true, force: true });
  if (run.code !== 0 || !run.report)
    throw new Error(
      `export ${scenario.args.join(' ')} failed (exit ${run.code}):\n${run.stderr.slice(0, 2000)}`,
    );
  return run;
}

async function baselineOnce(store, mode, scratch, how = 'measure') {
  const usageFile = join(scratch, 'usage.json');
  const out = join(scratch, 'floor.jsonl');
  const args = [baseline, '--mode', mode, '--db', store.db, ...(mode === 'jsonl' ? ['--out', out] : [])];
  const run =
    how === 'probe'
      ? await runNode(['--expose-gc', probe, ...args], usageFile, { BENCH_PROBE_FILE: usageFile })
      : await runNode([measure, ...args], usageFile);
  run.report = parseJson(run.stdout.trim().split('\n').pop());
  run.outBytes = existsSync(out) ? statSync(out).size : 0;
  rmSync(out, { force: true });
  if (run.code !== 0 || !run.report)
    throw new Error(`baseline ${mode} failed (exit ${run.code}):\n${run.stderr.slice(0, 2000)}`);
  return run;
}

/** The run with the median wall time, with every run's wall time and peak RSS, and the median peak RSS. */
function pick(results) {
  const mid = median(results.map((r) => r.seconds));
  const chosen = results.find((r) => r.seconds === mid);
  const rss = results.map((r) => r.usage.maxRSS).filter((v) => v !== undefined);
  return {
    ...chosen,
    medianRssKiB: rss.length ? median(rss) : undefined,
    rssRunsKiB: rss,
    secondsRuns: results.map((r) => r.seconds),
    outBytesRuns: results.map((r) => r.outBytes),
    writtenRuns: results.map((r) => r.report?.samples?.written),
  };
}

// ---------------------------------------------------------------------------------------------------------
// Measurements

async function measureStore(store, scratch) {
  const name = `${store.sessions.toLocaleString('en-US')} sessions`;
  log(`${name}: reading the store into the page cache ...`);
  warm(store.db);
  const measurements = [
    { key: 'raw', once: () => baselineOnce(store, 'raw', scratch) },
    { key: 'load', once: () => baselineOnce(store, 'load', scratch) },
    { key: 'jsonl', once: () => baselineOnce(store, 'jsonl', scratch) },
    ...scenarios.map((s) => ({ key: s.key, once: () => exportOnce(store, s, scratch) })),
  ];
  const results = new Map(measurements.map((m) => [m.key, []]));
  for (let i = 0; i < runs; i++) {
    for (const m of measurements) {
      log(`  ${name}: ${m.key}, run ${i + 1}/${runs} ...`);
      results.get(m.key).push(await m.once());
    }
  }
  const probes = new Map();
  if (values.probe) {
    for (const mode of ['load', 'jsonl']) {
      log(`  ${name}: ${mode}, under the heap probe ...`);
      probes.set(mode, await baselineOnce(store, mode, scratch, 'probe'));
    }
    for (const s of scenarios) {
      log(`  ${name}: ${s.key}, under the heap probe ...`);
      probes.set(s.key, await exportOnce(store, s, scratch, 'probe'));
    }
  }
  return { store, picked: new Map([...results].map(([key, list]) => [key, pick(list)])), probes };
}

async function profiles(store, scratch) {
  const found = [];
  for (const s of scenarios) {
    log(`  ${store.sessions.toLocaleString('en-US')} sessions: ${s.key}, under --cpu-prof ...`);
    const run = await exportOnce(store, s, scratch, 'profile');
    if (run.profile)
      found.push({ key: s.key, label: s.label, samples: run.report.samples.written, ...run.profile });
  }
  return found;
}

// ---------------------------------------------------------------------------------------------------------
// Figures

const int = (v) => (Number.isFinite(v) ? Math.round(v).toLocaleString('en-US') : '?');
const num = (v, digits = 1) =>
  Number.isFinite(v)
    ? v.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
    : '?';
const mib = (kib) => (kib === undefined ? '?' : (kib / 1024).toFixed(0));
const secs = (v) => num(v, v < 10 ? 2 : 1);

function probeSummary(run) {
  if (!run) return undefined;
  const heap = run.usage.heapMiB ?? [];
  return {
    liveHeapMiB: { first: heap[0], max: heap.length ? Math.max(...heap) : undefined, last: heap.at(-1) },
    samples: heap.length,
    heapTotalMaxMiB: run.usage.heapTotalMaxMiB,
    externalMaxMiB: run.usage.externalMaxMiB,
    peakRssKiB: run.usage.maxRSS,
  };
}

function sizeResult(m) {
  const { store } = m;
  const common = (r) => ({
    wallSeconds: r.seconds,
    wallSecondsRuns: r.secondsRuns,
    cpuSeconds: cpuSeconds(r.usage),
    ...(r.usage.mainThreadCPUTime !== undefined ? { mainCpuSeconds: r.usage.mainThreadCPUTime / 1e6 } : {}),
    peakRssKiB: r.medianRssKiB,
    peakRssRunsKiB: r.rssRunsKiB,
  });
  const raw = m.picked.get('raw');
  const load = m.picked.get('load');
  const jsonl = m.picked.get('jsonl');
  const floor = load.seconds;
  const baselines = {
    raw: { ...common(raw), ...raw.report, sessionsPerSecond: raw.report.sessions / raw.seconds },
    load: {
      ...common(load),
      ...load.report,
      sessionsPerSecond: load.report.sessions / load.seconds,
      probe: probeSummary(m.probes.get('load')),
    },
    jsonl: {
      ...common(jsonl),
      ...jsonl.report,
      sessionsPerSecond: jsonl.report.sessions / jsonl.seconds,
      outBytes: jsonl.outBytes,
      outMBPerSecond: jsonl.outBytes / MB / jsonl.seconds,
      probe: probeSummary(m.probes.get('jsonl')),
    },
  };
  const exports = scenarios.map((s) => {
    const r = m.picked.get(s.key);
    const written = r.report.samples.written;
    return {
      key: s.key,
      label: s.label,
      args: s.args,
      ...common(r),
      exitCode: r.code,
      sessions: r.report.sessions,
      samples: written,
      samplesPerSecond: written / r.seconds,
      sessionsPerSecond: r.report.sessions / r.seconds,
      outBytes: r.outBytes,
      outMBPerSecond: r.outBytes / MB / r.seconds,
      ratioToLoad: r.seconds / floor,
      ratioToFloor: r.seconds / jsonl.seconds,
      mbPerSecondOfFloor: r.outBytes / MB / r.seconds / (jsonl.outBytes / MB / jsonl.seconds),
      msPerSampleAboveLoad: ((r.seconds - floor) * 1000) / written,
      tokens: r.report.tokens,
      duplicates: r.report.duplicates,
      skipped: r.report.skipped,
      redactions: Object.values(r.report.redactions ?? {}).reduce((n, v) => n + v, 0),
      redactionKinds: r.report.redactions,
      warnings: r.report.warnings,
      writtenRuns: r.writtenRuns,
      outBytesRuns: r.outBytesRuns,
      probe: probeSummary(m.probes.get(s.key)),
    };
  });
  const { db: _, ...storeFigures } = store;
  return { ...storeFigures, baselines, exports, checks: checks(store, baselines, exports) };
}

function checks(store, baselines, exports) {
  const problems = [];
  if (store.stored !== store.sessions)
    problems.push(`the store holds ${store.stored} sessions, not ${store.sessions}`);
  for (const [mode, b] of Object.entries(baselines)) {
    if (b.sessions !== store.stored)
      problems.push(`${mode} baseline read ${b.sessions} sessions of ${store.stored}`);
    if (b.messages !== store.messages)
      problems.push(`${mode} baseline read ${b.messages} messages of ${store.messages}`);
  }
  for (const e of exports) {
    if (e.exitCode !== 0) problems.push(`${e.key}: exit code ${e.exitCode}`);
    if (e.sessions !== store.stored)
      problems.push(`${e.key}: read ${e.sessions} sessions of ${store.stored}`);
    if (new Set(e.writtenRuns).size !== 1)
      problems.push(`${e.key}: runs wrote ${e.writtenRuns.join(', ')} samples`);
    if (new Set(e.outBytesRuns).size !== 1)
      problems.push(`${e.key}: runs wrote ${e.outBytesRuns.join(', ')} bytes`);
  }
  return problems;
}

function memoryVerdict(results) {
  const first = results[0];
  const last = results[results.length - 1];
  const rows = [
    { key: 'load', label: 'load floor (SessionStore.load)', at: (r) => r.baselines.load },
    {
      key: 'jsonl',
      label: 'floor: load, written as JSON lines',
      at: (r) => r.baselines.jsonl ?? r.baselines.load,
    },
    ...scenarios.map((s) => ({
      key: s.key,
      label: s.label,
      at: (r) => r.exports.find((e) => e.key === s.key),
    })),
  ].map((row) => {
    const a = row.at(first);
    const b = row.at(last);
    return {
      key: row.key,
      label: row.label,
      peakRssKiB: [a.peakRssKiB, b.peakRssKiB],
      ratio: b.peakRssKiB / a.peakRssKiB,
      flat: b.peakRssKiB / a.peakRssKiB <= flatFactor,
      liveHeapMaxMiB: [a.probe?.liveHeapMiB.max, b.probe?.liveHeapMiB.max],
      heapTotalMaxMiB: [a.probe?.heapTotalMaxMiB, b.probe?.heapTotalMaxMiB],
    };
  });
  return { from: first.sessions, to: last.sessions, flatFactor, rows, flat: rows.every((r) => r.flat) };
}

function renderSize(r, startup) {
  const { raw, load, jsonl } = r.baselines;
  const head = [
    '',
    'samples',
    'samples/s',
    'sessions/s',
    'output MB',
    'MB/s',
    'wall (s)',
    'CPU: all / main thread (s)',
    'peak RSS (MiB)',
    '÷ load',
    '÷ floor',
    'ms/sample over load',
    'each run (s)',
  ];
  const baselineRow = (label, b) => [
    label,
    '',
    '',
    int(b.sessionsPerSecond),
    b.outBytes ? num(b.outBytes / MB) : '',
    b.outBytes ? num(b.outMBPerSecond) : '',
    secs(b.wallSeconds),
    secs(b.cpuSeconds),
    mib(b.peakRssKiB),
    num(b.wallSeconds / load.wallSeconds, 2),
    jsonl ? num(b.wallSeconds / jsonl.wallSeconds, 2) : '',
    '',
    b.wallSecondsRuns.map(secs).join(' '),
  ];
  const rows = [
    head,
    [
      'node start-up + load the CLI (--version)',
      '',
      '',
      '',
      '',
      '',
      secs(startup.cliSeconds),
      secs(startup.cliCpuSeconds),
      mib(startup.cliRssKiB),
      '',
      '',
      '',
      '',
    ],
    baselineRow('raw read of the messages table', raw),
    baselineRow('SessionStore.load, every session', load),
    ...(jsonl ? [baselineRow('floor: SessionStore.load, written as JSON lines', jsonl)] : []),
    ...r.exports.map((e) => [
      e.label,
      int(e.samples),
      int(e.samplesPerSecond),
      int(e.sessionsPerSecond),
      num(e.outBytes / MB),
      num(e.outMBPerSecond),
      secs(e.wallSeconds),
      e.mainCpuSeconds === undefined
        ? secs(e.cpuSeconds)
        : `${secs(e.cpuSeconds)} / ${secs(e.mainCpuSeconds)}`,
      mib(e.peakRssKiB),
      `${num(e.ratioToLoad, e.ratioToLoad < 10 ? 2 : 1)}×`,
      e.ratioToFloor === undefined ? '' : `${num(e.ratioToFloor, e.ratioToFloor < 10 ? 2 : 1)}×`,
      num(e.msPerSampleAboveLoad, 2),
      e.wallSecondsRuns.map(secs).join(' '),
    ]),
  ];
  const lines = [
    `${int(r.stored)} sessions, ${int(r.turns)} model turns (at most ${r.mostTurns} in one), ${int(r.messages)} ` +
      `messages; store ${num(r.bytes / MB)} MB, ${num(r.partsChars / MB)} M characters of message parts ` +
      `(largest session ${num(r.largestSessionChars / MB, 2)} M); ingested in ${secs(r.ingestSeconds)} s`,
    '',
    table(rows),
    '',
  ];
  if (r.checks.length === 0)
    lines.push(
      'Checks: every child exited 0; the baselines read every session and message; every run of an export wrote ' +
        'the same samples and bytes.',
    );
  for (const problem of r.checks) lines.push(`CHECK: ${problem}`);
  const byKey = new Map(r.exports.map((e) => [e.key, e]));
  const red = byKey.get('openai-session');
  const plain = byKey.get('openai-session-no-redact');
  if (red && plain) {
    const wall = red.wallSeconds - plain.wallSeconds;
    const cpu = red.cpuSeconds - plain.cpuSeconds;
    lines.push(
      `Redaction (openai per session, redacted − --no-redact): ${secs(wall)} s of ${secs(red.wallSeconds)} s wall ` +
        `(${num((100 * wall) / red.wallSeconds, 0)} %), ${secs(cpu)} s of ${secs(red.cpuSeconds)} s CPU; ` +
        `${int(red.redactions)} replacements. Samples ${int(red.samples)} redacted vs ${int(plain.samples)} not ` +
        `(duplicates ${red.duplicates} / ${plain.duplicates}).`,
    );
  }
  lines.push(
    `Tokens (o200k_base) counted: ${r.exports.map((e) => `${e.key} ${num(e.tokens.total / 1e6)} M`).join(', ')}.`,
  );
  if (r.exports.some((e) => e.probe)) {
    lines.push(
      'Heap probe (one more run each; live heap after a full GC, most / V8 heap reserved, most / outside the heap, most; MiB): ' +
        [['load', load.probe], ['jsonl', jsonl?.probe], ...r.exports.map((e) => [e.key, e.probe])]
          .filter(([, p]) => p)
          .map(
            ([k, p]) =>
              `${k} ${num(p.liveHeapMiB.max)} / ${num(p.heapTotalMaxMiB)} / ${num(p.externalMaxMiB)}`,
          )
          .join('; '),
    );
  }
  return lines.join('\n');
}

function render(report) {
  const out = [];
  for (const r of report.sizes) out.push(renderSize(r, report.startup), '', '');
  const v = report.memory;
  if (v && report.sizes.length > 1) {
    const probed = v.rows.some((row) => row.liveHeapMaxMiB[1] !== undefined);
    out.push(
      `Memory, ${int(v.from)} → ${int(v.to)} sessions (flat = peak RSS within ×${v.flatFactor})`,
      '',
      table([
        [
          '',
          'peak RSS (MiB)',
          '×',
          'flat?',
          ...(probed ? ['live heap, most (MiB)', 'V8 heap reserved (MiB)'] : []),
        ],
        ...v.rows.map((row) => [
          row.label,
          `${mib(row.peakRssKiB[0])} → ${mib(row.peakRssKiB[1])}`,
          num(row.ratio, 2),
          row.flat ? 'yes' : 'NO',
          ...(probed
            ? [
                `${num(row.liveHeapMaxMiB[0])} → ${num(row.liveHeapMaxMiB[1])}`,
                `${num(row.heapTotalMaxMiB[0])} → ${num(row.heapTotalMaxMiB[1])}`,
              ]
            : []),
        ]),
      ]),
      '',
    );
  }
  if (report.profiles) {
    const p = report.profiles;
    const order = [...new Set(p.flatMap((x) => x.rows.map((row) => row.category)))];
    const cell = (x, category) => {
      const row = x.rows.find((r) => r.category === category);
      return row ? `${num(row.ms / x.samples, 3)}  ${num(100 * row.share)} %` : '';
    };
    out.push(
      `CPU profile of one export of each kind over ${int(report.sizes.at(-1).sessions)} sessions ` +
        '(node --cpu-prof; ms per sample written, share of the profile)',
      '',
      table([
        ['', ...p.map((x) => x.key)],
        ...order.map((category) => [category, ...p.map((x) => cell(x, category))]),
        ['all', ...p.map((x) => `${num(x.totalMs / x.samples, 3)}  100.0 %`)],
        ['profile total (s)', ...p.map((x) => secs(x.totalMs / 1000))],
      ]),
      '',
    );
  }
  return out.join('\n').trimEnd();
}

// ---------------------------------------------------------------------------------------------------------

async function measureAll() {
  const corpus = await cachedCorpus();
  const scratch = mkdtempSync(join(tmpdir(), 'replay-bench-export-'));
  try {
    // Every wall time includes starting node and loading the CLI; both measured on their own (median of 3).
    const startups = [];
    const clis = [];
    for (let i = 0; i < 3; i++) {
      startups.push(await runNode(['-e', ''], join(scratch, 'usage.json')));
      clis.push(await runNode([measure, cli, '--version'], join(scratch, 'usage.json')));
    }
    const cliPicked = pick(clis);
    const startup = {
      nodeSeconds: median(startups.map((r) => r.seconds)),
      cliSeconds: cliPicked.seconds,
      cliCpuSeconds: cpuSeconds(cliPicked.usage),
      cliRssKiB: cliPicked.medianRssKiB,
    };
    const sizesOut = [];
    for (const store of corpus.stores) sizesOut.push(sizeResult(await measureStore(store, scratch)));
    const profiled = values.profile ? await profiles(corpus.stores.at(-1), scratch) : undefined;
    const machine = {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model,
      memoryGiB: Number((totalmem() / 1024 ** 3).toFixed(1)),
      node: process.version,
      platform: `${platform()} ${release()}`,
      // the 1-minute load average at the start and at the end of the measurements
      load: [loadAtStart, loadavg()[0]].map((value) => Number(value?.toFixed(2))),
    };
    return {
      machine,
      seed: values.seed,
      runs,
      startup,
      corpus: { dir: corpus.dir, ...corpus.result },
      sizes: sizesOut,
      memory: sizesOut.length > 1 ? memoryVerdict(sizesOut) : undefined,
      ...(profiled ? { profiles: profiled } : {}),
    };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

// --render FILE: the tables of a report saved with --json, without measuring again.
const report = values.render ? JSON.parse(readFileSync(values.render, 'utf8')) : await measureAll();
if (values.json) {
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
} else {
  const { machine } = report;
  process.stdout.write(
    `replay-history export benchmark — ${machine.cpus} CPUs (${machine.cpuModel}), node ${machine.node}, ` +
      `seed ${report.seed}${report.runs > 1 ? `, median of ${report.runs} runs` : ''}` +
      `${machine.load ? `, load ${machine.load.join(' → ')}` : ''}\n` +
      `MB = 10^6 bytes, MiB = 2^20 bytes; node start-up alone (node -e ''): ${num(report.startup.nodeSeconds * 1000, 0)} ms; ` +
      "wall times from spawn to exit, ÷ load = wall time ÷ the load floor's\n\n" +
      `${render(report)}\n`,
  );
}
