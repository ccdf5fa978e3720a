#!/usr/bin/env node
// Replay benchmark: what `replay-history replay` (forced mode, OpenAI-compatible provider) costs per turn on
// top of the HTTP requests it has to make, at several concurrencies, against a bare fetch loop that sends the
// very same requests to the same zero-latency server; and whether its memory grows with the number of
// sessions. Prints figures only; it asserts no timings.
//
//   npm run bench:replay                    (builds first; 100 and 1,000 sessions, concurrency 1, 4, 16)
//   node bench/replay/run.mjs [--sessions 100,1000] [--concurrency 1,4,16] [--memory-concurrency 4]
//                             [--runs 3] [--seed 1] [--profile] [--json]
//
// Sessions are cached in bench/.data/ (git-ignored) with the stores ingested from them, and rebuilt only when
// a parameter, a generator or the built CLI changed. Every measured program is a fresh `node` child; the
// model server is another child, started first and stopped last by this script. Temp files are deleted.

import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  closeSync,
  copyFileSync,
  existsSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { cpus, loadavg, platform, release, tmpdir, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
// Already a dependency of the CLI: used read-only to count what the stores hold.
import Database from 'better-sqlite3';
import { cpuSeconds, dbBytes, median, removeDb, runNode, table } from '../children.mjs';
import { summarize } from './profile.mjs';
import { buildSessions } from './sessions.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..', '..');
const dataDir = join(repo, 'bench', '.data');
const dist = join(repo, 'dist');
const cli = join(dist, 'cli', 'main.js');
const measure = join(repo, 'bench', 'ingest', 'measure.mjs');
const MB = 1e6;
const MODEL = 'bench';
/** Peak RSS over the most sessions within this factor of the fewest counts as flat. */
const flatFactor = 1.25;

const { values } = parseArgs({
  options: {
    sessions: { type: 'string', default: '100,1000' },
    concurrency: { type: 'string', default: '1,4,16' },
    'memory-concurrency': { type: 'string', default: '4' },
    runs: { type: 'string', default: '3' },
    profile: { type: 'boolean', default: false },
    seed: { type: 'string', default: '1' },
    json: { type: 'boolean', default: false },
  },
});
const loadAtStart = loadavg()[0];
const list = (text) => text.split(',').map((s) => Number(s.trim()));
const counts = [...new Set(list(values.sessions))].sort((a, b) => a - b);
const concurrencies = list(values.concurrency);
const memoryConcurrency = Number(values['memory-concurrency']);
const runs = Math.max(1, Number(values.runs));
const whole = (n) => Number.isInteger(n) && n > 0;
if (!counts.every(whole) || !concurrencies.every(whole) || !whole(memoryConcurrency)) {
  process.stderr.write('--sessions, --concurrency and --memory-concurrency take whole numbers from 1\n');
  process.exit(2);
}
if (!existsSync(cli)) {
  process.stderr.write(`${cli} is missing: run \`npm run build\` (or use \`npm run bench:replay\`)\n`);
  process.exit(2);
}

/** A child of this benchmark: the probe (bench/replay/probe.mjs) reports to the same file as measure.mjs. */
const runChild = (args, usageFile) => runNode(args, usageFile, { BENCH_PROBE_FILE: usageFile });
const log = (text) => process.stderr.write(`${text}\n`);
const sha = (...parts) => {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return hash.digest('hex').slice(0, 16);
};

// ---------------------------------------------------------------------------------------------------------
// Sessions and stores, cached

/** Every file of a directory tree, sorted, for hashing. */
function filesUnder(dir) {
  return readdirSync(dir, { recursive: true })
    .map((name) => join(dir, name))
    .filter((path) => statSync(path).isFile())
    .sort();
}

async function cachedCorpus() {
  const dir = join(dataDir, `replay-sessions-seed${values.seed}`);
  const manifestPath = join(dir, 'manifest.json');
  const params = {
    counts,
    seed: values.seed,
    generator: sha(readFileSync(join(repo, 'bench', 'ingest', 'generate.mjs'))),
    sessions: sha(readFileSync(join(here, 'sessions.mjs'))),
  };
  let manifest = existsSync(manifestPath) ? JSON.parse(readFileSync(manifestPath, 'utf8')) : undefined;
  if (JSON.stringify(manifest?.params) !== JSON.stringify(params)) {
    rmSync(dir, { recursive: true, force: true });
    log(`sessions: generating ${counts.join(', ')} in ${dir} (about a minute for 1,000) ...`);
    const started = performance.now();
    const result = buildSessions({ dir, counts, seed: values.seed });
    log(
      `sessions: ${result.sessions} sessions, ${result.responses} turns, ${(result.bytes / MB).toFixed(1)} MB ` +
        `in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    manifest = { params, result, stores: {} };
    // The manifest is written last: an interrupted generation is redone.
    writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
  } else log(`sessions: cached in ${dir}`);

  // A store per size, ingested from parts 0..i by the CLI as it is built now.
  const cliHash = sha(...filesUnder(dist).map((path) => readFileSync(path)));
  const stores = [];
  for (const [i, n] of counts.entries()) {
    const db = join(dir, `store-${n}.db`);
    const parts = counts.slice(0, i + 1).map((_, p) => join(dir, `part-${p}`));
    if (manifest.stores[n]?.cli !== cliHash || !existsSync(db)) {
      removeDb(db);
      log(`store of ${n} sessions: ingesting ...`);
      const ingest = await runQuiet([cli, 'ingest', ...parts, '--db', db, '--json']);
      if (ingest.code !== 0) throw new Error(`ingest failed (exit ${ingest.code}):\n${ingest.stderr}`);
      manifest.stores[n] = { cli: cliHash, ...storeCounts(db) };
      writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
    }
    stores.push({ sessions: n, db, ...manifest.stores[n], bytes: dbBytes(db) });
  }
  return { dir, result: manifest.result, stores };
}

/** Runs `node <args>` for its exit code and stderr (stdout is dropped). */
function runQuiet(args) {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, args, { cwd: repo, stdio: ['ignore', 'pipe', 'pipe'] });
    const err = [];
    child.stdout.resume();
    child.stderr.on('data', (chunk) => err.push(chunk));
    child.on('error', fail);
    child.on('close', (code) => done({ code, stderr: Buffer.concat(err).toString('utf8') }));
  });
}

function storeCounts(db) {
  const store = new Database(db, { readonly: true });
  try {
    return store
      .prepare(
        `SELECT count(*) AS stored, coalesce(sum(turn_count), 0) AS turns,
           coalesce(sum(message_count), 0) AS messages FROM sessions`,
      )
      .get();
  } finally {
    store.close();
  }
}

/** A private copy of a store for one run: runs add rows, and each run should start from the same store. */
function copyDb(from, to) {
  removeDb(to);
  for (const suffix of ['', '-wal']) if (existsSync(from + suffix)) copyFileSync(from + suffix, to + suffix);
}

// ---------------------------------------------------------------------------------------------------------
// The model server: its own process, so that its CPU is not the client's.

async function startServer() {
  const child = spawn(process.execPath, [join(here, 'server.mjs')], {
    cwd: repo,
    // stdin is a pipe the server watches: if this script dies, the server goes too.
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise((done) => child.once('exit', done));
  const first = await new Promise((done, fail) => {
    const lines = createInterface({ input: child.stdout });
    lines.once('line', (line) => done(line));
    child.once('exit', (code) => fail(new Error(`the model server exited (${code}) before listening`)));
  });
  const { baseURL } = JSON.parse(first);
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  process.once('exit', () => child.exitCode === null && child.kill('SIGTERM'));
  const stats = async () => (await fetch(`${baseURL.replace(/\/v1$/, '')}/bench/stats`)).json();
  return { baseURL, pid: child.pid, stop, stats };
}

// ---------------------------------------------------------------------------------------------------------
// Children

/** Counts lines and sums their bytes without holding the file (pairs files reach hundreds of MB). */
function fileLines(path) {
  const fd = openSync(path, 'r');
  const chunk = Buffer.alloc(1 << 20);
  let lines = 0;
  try {
    for (;;) {
      const read = readSync(fd, chunk, 0, chunk.length);
      if (read === 0) break;
      for (let i = chunk.indexOf(10); i !== -1 && i < read; i = chunk.indexOf(10, i + 1)) lines++;
    }
  } finally {
    closeSync(fd);
  }
  return { lines, bytes: statSync(path).size };
}

function parseJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The deltas of the server's counters over one child's run. */
async function serverDelta(server, run) {
  const before = await server.stats();
  const result = await run();
  const after = await server.stats();
  result.server = {
    requests: after.requests - before.requests,
    bodyBytes: after.bodyBytes - before.bodyBytes,
    toolCalls: after.toolCalls - before.toolCalls,
    errors: after.errors - before.errors,
    cpuSeconds: (after.cpuUserUs + after.cpuSystemUs - before.cpuUserUs - before.cpuSystemUs) / 1e6,
  };
  return result;
}

function replayArgs(db, out, baseURL, concurrency, nodeFlags = [], wrapper = measure) {
  return [
    ...nodeFlags,
    wrapper,
    cli,
    'replay',
    '--all',
    '--db',
    db,
    '--out',
    out,
    '--model',
    `openai:${MODEL}`,
    '--base-url',
    baseURL,
    '--concurrency',
    String(concurrency),
    '--json',
  ];
}

/** One replay of every turn of a store; keeps the pairs file when `keep` names where to put it. */
async function replayOnce({ server, store, concurrency, scratch, keep, probe = false }) {
  const db = join(scratch, 'replay.db');
  const out = join(scratch, 'pairs.jsonl');
  copyDb(store.db, db);
  rmSync(out, { force: true });
  const args = probe
    ? replayArgs(db, out, server.baseURL, concurrency, ['--expose-gc'], join(here, 'probe.mjs'))
    : replayArgs(db, out, server.baseURL, concurrency);
  const run = await serverDelta(server, () => runChild(args, join(scratch, 'usage.json')));
  run.summary = parseJson(run.stdout);
  run.pairs = existsSync(out) ? fileLines(out) : { lines: 0, bytes: 0 };
  run.warnings = [...new Set(run.stderr.match(/\w+Warning\b[^\n]*/g) ?? [])];
  if (run.code !== 0) log(`  replay exited with ${run.code}:\n${run.stderr.slice(0, 2000)}`);
  if (keep && existsSync(out)) renameSync(out, keep);
  rmSync(out, { force: true });
  removeDb(db);
  return run;
}

async function bareOnce({ server, pairs, concurrency, scratch }) {
  const args = [
    measure,
    join(here, 'client.mjs'),
    '--pairs',
    pairs,
    '--base-url',
    server.baseURL,
    '--model',
    MODEL,
    '--concurrency',
    String(concurrency),
  ];
  const run = await serverDelta(server, () => runChild(args, join(scratch, 'usage.json')));
  run.report = parseJson(run.stdout);
  if (run.code !== 0 || !run.report)
    throw new Error(`the bare client failed (exit ${run.code}):\n${run.stderr}`);
  // Its wall time without reading the pairs file and building the bodies: a client that has them at hand.
  run.wall = run.seconds - run.report.setupMs / 1000;
  run.cpu = cpuSeconds(run.usage) - run.report.setupCpuUs / 1e6;
  return run;
}

/** The run with the median wall time, and the median of each run's peak RSS. */
function pick(results, wall = (r) => r.seconds) {
  const mid = median(results.map(wall));
  const chosen = results.find((r) => wall(r) === mid);
  const rss = results.map((r) => r.usage.maxRSS).filter((v) => v !== undefined);
  return { ...chosen, medianRssKiB: median(rss), rssRunsKiB: rss };
}

// ---------------------------------------------------------------------------------------------------------
// Measurements

/** (a) and (b): the replay at one concurrency, and the bare client sending what it sent, alternately. */
async function throughput(server, store, concurrency, scratch) {
  const pairs = join(scratch, `pairs-c${concurrency}.jsonl`);
  const replays = [];
  const bares = [];
  for (let i = 0; i < runs; i++) {
    log(`  concurrency ${concurrency}: replay, run ${i + 1}/${runs} ...`);
    replays.push(
      await replayOnce({ server, store, concurrency, scratch, keep: i === 0 ? pairs : undefined }),
    );
    log(`  concurrency ${concurrency}: bare client, run ${i + 1}/${runs} ...`);
    bares.push(await bareOnce({ server, pairs, concurrency, scratch }));
  }
  rmSync(pairs, { force: true });
  return { concurrency, replay: pick(replays), bare: pick(bares, (r) => r.wall), replays, bares };
}

/** (c): the replay over each store at one concurrency, then once more under the probe. */
async function memory(server, stores, scratch, reuse) {
  const bySize = [];
  for (const store of stores) {
    let replays = reuse(store);
    if (!replays) {
      replays = [];
      for (let i = 0; i < runs; i++) {
        log(`  ${store.sessions} sessions: replay, run ${i + 1}/${runs} ...`);
        replays.push(await replayOnce({ server, store, concurrency: memoryConcurrency, scratch }));
      }
    }
    log(`  ${store.sessions} sessions: replay under the heap probe ...`);
    const probe = await replayOnce({ server, store, concurrency: memoryConcurrency, scratch, probe: true });
    bySize.push({ store, replay: pick(replays), probe });
  }
  return bySize;
}

/** --profile: one more replay per store under `node --cpu-prof`, its CPU time summed by what it was doing. */
async function profiles(server, stores, scratch) {
  const found = [];
  for (const store of stores) {
    log(`  ${store.sessions} sessions: replay under --cpu-prof ...`);
    const dir = join(scratch, `profile-${store.sessions}`);
    const db = join(scratch, 'replay.db');
    const out = join(scratch, 'pairs.jsonl');
    copyDb(store.db, db);
    rmSync(out, { force: true });
    const args = replayArgs(db, out, server.baseURL, memoryConcurrency, [
      '--cpu-prof',
      `--cpu-prof-dir=${dir}`,
    ]);
    // Straight to the CLI: no measuring wrapper in the profile.
    args.splice(args.indexOf(measure), 1);
    const run = await runChild(args, join(scratch, 'usage.json'));
    rmSync(out, { force: true });
    removeDb(db);
    const file = existsSync(dir) ? readdirSync(dir).find((name) => name.endsWith('.cpuprofile')) : undefined;
    if (run.code !== 0 || !file)
      throw new Error(`the profiled replay failed (exit ${run.code}):\n${run.stderr}`);
    found.push({
      sessions: store.sessions,
      ...summarize(join(dir, file), parseJson(run.stdout)?.turnsDone ?? 1),
    });
  }
  return found;
}

// ---------------------------------------------------------------------------------------------------------
// Figures

const int = (v) => Math.round(v).toLocaleString('en-US');
const num = (v, digits = 1) =>
  Number.isFinite(v)
    ? v.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
    : '?';
const mib = (kib) => (kib === undefined ? '?' : (kib / 1024).toFixed(0));

function throughputRow(t, store) {
  const turns = t.replay.summary?.turnsDone ?? 0;
  const replayCpu = cpuSeconds(t.replay.usage);
  const sameRequests =
    t.replay.server.requests === t.bare.server.requests &&
    t.replay.server.bodyBytes === t.bare.server.bodyBytes &&
    t.replay.server.toolCalls === t.bare.server.toolCalls;
  return {
    concurrency: t.concurrency,
    turns,
    requestBytes: t.replay.server.bodyBytes,
    replay: {
      exitCode: t.replay.code,
      turnsFailed: t.replay.summary?.turnsFailed,
      seconds: t.replay.seconds,
      loopSeconds: t.replay.summary?.wallSeconds,
      cpuSeconds: replayCpu,
      turnsPerSecond: turns / t.replay.seconds,
      peakRssKiB: t.replay.medianRssKiB,
      peakRssRunsKiB: t.replay.rssRunsKiB,
      secondsRuns: t.replays.map((r) => r.seconds),
      pairsLines: t.replay.pairs.lines,
      pairsBytes: t.replay.pairs.bytes,
      serverRequests: t.replay.server.requests,
      serverCpuSeconds: t.replay.server.cpuSeconds,
      warnings: t.replay.warnings,
    },
    bare: {
      seconds: t.bare.wall,
      loopSeconds: t.bare.report.loopMs / 1000,
      setupSeconds: t.bare.report.setupMs / 1000,
      cpuSeconds: t.bare.cpu,
      turnsPerSecond: turns / t.bare.wall,
      secondsRuns: t.bares.map((r) => r.wall),
      serverRequests: t.bare.server.requests,
      serverCpuSeconds: t.bare.server.cpuSeconds,
      failed: t.bare.report.failed,
    },
    sameRequests,
    ratio: t.replay.seconds / t.bare.wall,
    overheadMsPerTurn: ((t.replay.seconds - t.bare.wall) * 1000) / turns,
    loopOverheadMsPerTurn:
      (((t.replay.summary?.wallSeconds ?? Number.NaN) - t.bare.report.loopMs / 1000) * 1000) / turns,
    cpuOverheadMsPerTurn: ((replayCpu - t.bare.cpu) * 1000) / turns,
    store: store.sessions,
  };
}

function memoryRow(m) {
  const heap = m.probe.usage.heapMiB ?? [];
  return {
    sessions: m.store.sessions,
    turns: m.replay.summary?.turnsDone ?? 0,
    exitCode: m.replay.code,
    seconds: m.replay.seconds,
    turnsPerSecond: (m.replay.summary?.turnsDone ?? 0) / m.replay.seconds,
    pairsBytes: m.replay.pairs.bytes,
    peakRssKiB: m.replay.medianRssKiB,
    peakRssRunsKiB: m.replay.rssRunsKiB,
    probe: {
      exitCode: m.probe.code,
      liveHeapMiB: { first: heap[0], max: Math.max(...heap), last: heap.at(-2) ?? heap.at(-1) },
      samples: heap.length,
      peakRssKiB: m.probe.usage.maxRSS,
      heapTotalMaxMiB: m.probe.usage.heapTotalMaxMiB,
      externalMaxMiB: m.probe.usage.externalMaxMiB,
      abortListenersAdded: m.probe.usage.abortAdded,
      abortListenersRemoved: m.probe.usage.abortRemoved,
      abortListenersMostOnOneSignal: m.probe.usage.abortMostOnOneSignal,
    },
  };
}

function memoryVerdict(rows) {
  const first = rows[0];
  const last = rows[rows.length - 1];
  const ratio = last.peakRssKiB / first.peakRssKiB;
  const flat = ratio <= flatFactor;
  const liveGrowth = last.probe.liveHeapMiB.max - first.probe.liveHeapMiB.max;
  const perTurnKiB = (liveGrowth * 1024) / (last.turns - first.turns);
  const rssGrowth = (last.peakRssKiB - first.peakRssKiB) / 1024;
  const listenersPerTurn = last.probe.abortListenersMostOnOneSignal >= last.turns;
  const lines = [
    `Memory: replay peak RSS ${mib(last.peakRssKiB)} MiB over ${int(last.sessions)} sessions vs ${mib(first.peakRssKiB)} MiB ` +
      `over ${int(first.sessions)} (×${ratio.toFixed(2)} for ×${(last.turns / first.turns).toFixed(1)} the turns): ` +
      `${flat ? 'stayed flat' : 'GREW with the sessions'} (flat = within ×${flatFactor}).`,
    `Live heap after a full GC (probe): at most ${num(first.probe.liveHeapMiB.max)} MiB over ${int(first.sessions)} sessions, ` +
      `${num(last.probe.liveHeapMiB.max)} MiB over ${int(last.sessions)} (${liveGrowth >= 0 ? '+' : ''}${num(liveGrowth)} MiB, ` +
      `${num(perTurnKiB, 2)} KiB per extra turn), against ${rssGrowth >= 0 ? '+' : ''}${num(rssGrowth)} MiB of peak RSS` +
      (rssGrowth > 0 && liveGrowth < rssGrowth / 4
        ? ': most of the RSS growth is garbage not yet collected, not data kept alive.'
        : '.'),
    `Abort listeners: at most ${int(first.probe.abortListenersMostOnOneSignal)} on one AbortSignal over ${int(first.turns)} turns, ` +
      `${int(last.probe.abortListenersMostOnOneSignal)} over ${int(last.turns)} turns` +
      (listenersPerTurn ? ': one per turn, never removed, kept alive until the run ends.' : '.'),
  ];
  return {
    ratio,
    flat,
    liveGrowthMiB: liveGrowth,
    liveKiBPerTurn: perTurnKiB,
    rssGrowthMiB: rssGrowth,
    abortListenerPerTurn: listenersPerTurn,
    sentence: lines.join('\n'),
  };
}

function render(report) {
  const { corpus, startup, throughput: t, memory: m, verdict } = report;
  const col = (f) => t.map(f);
  const small = corpus.stores[0];
  const lines = [
    ['', ...col((r) => `C = ${r.concurrency}`)],
    ['store: sessions / turns', ...col(() => `${int(small.stored)} / ${int(small.turns)}`)],
    [
      'requests: MB sent / mean KB',
      ...col((r) => `${num(r.requestBytes / MB)} / ${num(r.requestBytes / r.turns / 1000)}`),
    ],
    ['node start-up, in every wall time (s)', ...col(() => num(startup, 2))],
    ['replay: wall time (s)', ...col((r) => num(r.replay.seconds, 2))],
    ['replay: wall time, each run (s)', ...col((r) => r.replay.secondsRuns.map((s) => num(s, 2)).join(' '))],
    ['replay: run loop, as printed (s)', ...col((r) => num(r.replay.loopSeconds, 2))],
    ['replay: outside the loop (s)', ...col((r) => num(r.replay.seconds - r.replay.loopSeconds, 2))],
    ['replay: CPU time (s)', ...col((r) => num(r.replay.cpuSeconds, 2))],
    ['replay: turns/s', ...col((r) => int(r.replay.turnsPerSecond))],
    ['replay: peak RSS, median (MiB)', ...col((r) => mib(r.replay.peakRssKiB))],
    ['replay: peak RSS, each run (MiB)', ...col((r) => r.replay.peakRssRunsKiB.map(mib).join(' '))],
    ['bare fetch: wall time (s)', ...col((r) => num(r.bare.seconds, 2))],
    [
      'bare fetch: wall time, each run (s)',
      ...col((r) => r.bare.secondsRuns.map((s) => num(s, 2)).join(' ')),
    ],
    ['bare fetch: request loop (s)', ...col((r) => num(r.bare.loopSeconds, 2))],
    ['bare fetch: CPU time (s)', ...col((r) => num(r.bare.cpuSeconds, 2))],
    ['bare fetch: turns/s', ...col((r) => int(r.bare.turnsPerSecond))],
    ['replay ÷ bare fetch, wall time', ...col((r) => `${num(r.ratio, 2)}×`)],
    ['replay overhead per turn, wall (ms)', ...col((r) => num(r.overheadMsPerTurn, 2))],
    ['replay overhead per turn, run loop only (ms)', ...col((r) => num(r.loopOverheadMsPerTurn, 2))],
    ['replay overhead per turn, CPU (ms)', ...col((r) => num(r.cpuOverheadMsPerTurn, 2))],
    [
      'server CPU per request: replay / bare (ms)',
      ...col(
        (r) =>
          `${num((r.replay.serverCpuSeconds * 1000) / r.turns, 2)} / ${num((r.bare.serverCpuSeconds * 1000) / r.turns, 2)}`,
      ),
    ],
    [
      'server saw: replay / bare requests',
      ...col((r) => `${int(r.replay.serverRequests)} / ${int(r.bare.serverRequests)}`),
    ],
    ['same bodies (count, bytes, answers)', ...col((r) => (r.sameRequests ? 'yes' : 'NO'))],
    [
      'replay: exit code / failed turns',
      ...col((r) => `${r.replay.exitCode} / ${r.replay.turnsFailed ?? '?'}`),
    ],
    ['pairs written / MB', ...col((r) => `${int(r.replay.pairsLines)} / ${num(r.replay.pairsBytes / MB)}`)],
  ];
  const mcol = (f) => m.map(f);
  const memoryLines = [
    ['', ...mcol((r) => `${int(r.sessions)} sessions`)],
    ['turns', ...mcol((r) => int(r.turns))],
    ['store (MB)', ...mcol((_, i) => num(corpus.stores[i].bytes / MB))],
    ['replay: wall time (s)', ...mcol((r) => num(r.seconds, 2))],
    ['replay: turns/s', ...mcol((r) => int(r.turnsPerSecond))],
    ['replay: exit code', ...mcol((r) => String(r.exitCode))],
    ['pairs file (MB)', ...mcol((r) => num(r.pairsBytes / MB))],
    ['replay: peak RSS, median (MiB)', ...mcol((r) => mib(r.peakRssKiB))],
    ['replay: peak RSS, each run (MiB)', ...mcol((r) => r.peakRssRunsKiB.map(mib).join(' '))],
    [
      'probe: live heap first / max / last (MiB)',
      ...mcol(
        (r) =>
          `${num(r.probe.liveHeapMiB.first)} / ${num(r.probe.liveHeapMiB.max)} / ${num(r.probe.liveHeapMiB.last)}`,
      ),
    ],
    ['probe: V8 heap reserved, most (MiB)', ...mcol((r) => num(r.probe.heapTotalMaxMiB))],
    ['probe: outside the V8 heap, most (MiB)', ...mcol((r) => num(r.probe.externalMaxMiB))],
    ['probe: peak RSS (MiB)', ...mcol((r) => mib(r.probe.peakRssKiB))],
    [
      'probe: abort listeners added / removed',
      ...mcol((r) => `${int(r.probe.abortListenersAdded)} / ${int(r.probe.abortListenersRemoved)}`),
    ],
    ['probe: most abort listeners on one signal', ...mcol((r) => int(r.probe.abortListenersMostOnOneSignal))],
  ];
  const notes = [];
  for (const r of t) {
    if (r.replay.exitCode !== 0 || r.replay.turnsFailed)
      notes.push(`C = ${r.concurrency}: CHECK: the replay failed`);
    if (r.replay.pairsLines !== r.turns)
      notes.push(`C = ${r.concurrency}: CHECK: ${r.replay.pairsLines} pairs for ${r.turns} turns`);
    if (r.turns !== small.turns)
      notes.push(`C = ${r.concurrency}: CHECK: ${r.turns} turns replayed, the store has ${small.turns}`);
    if (!r.sameRequests)
      notes.push(`C = ${r.concurrency}: CHECK: the bare client did not send what the replay sent`);
    if (r.bare.failed) notes.push(`C = ${r.concurrency}: CHECK: ${r.bare.failed} bare request(s) failed`);
    for (const w of r.replay.warnings) notes.push(`C = ${r.concurrency}: the replay printed: ${w}`);
  }
  for (const store of corpus.stores)
    if (store.stored !== store.sessions)
      notes.push(`store of ${store.sessions}: CHECK: it holds ${store.stored} sessions`);
  for (const r of m)
    if (r.exitCode !== 0 || r.probe.exitCode !== 0)
      notes.push(`${r.sessions} sessions: CHECK: a replay failed`);
  const profileLines = [];
  if (report.profiles) {
    const p = report.profiles;
    const order = [...new Set(p.flatMap((x) => x.rows.map((r) => r.category)))];
    const cell = (x, category) => {
      const row = x.rows.find((r) => r.category === category);
      return row ? `${num(row.msPerTurn, 3)}  ${num(100 * row.share)} %` : '';
    };
    profileLines.push(
      `CPU profile of one replay at concurrency ${memoryConcurrency} (node --cpu-prof; ms per turn, share of the profile)`,
      '',
      table([
        ['', ...p.map((x) => `${int(x.sessions)} sessions`)],
        ...order.map((category) => [category, ...p.map((x) => cell(x, category))]),
        ['all', ...p.map((x) => `${num(x.totalMs / x.turns, 3)}  100.0 %`)],
      ]),
      '',
    );
  }
  return [
    `(a, b) Forced replay of every turn of the ${int(small.stored)}-session store vs a bare fetch loop sending the same requests`,
    '',
    table(lines),
    '',
    `(c) Memory of a forced replay at concurrency ${memoryConcurrency}, by number of sessions`,
    '',
    table(memoryLines),
    '',
    ...(notes.length
      ? [...notes, '']
      : ['Every turn was replayed, and the bare client sent the same bodies.', '']),
    verdict.sentence,
    ...(profileLines.length ? ['', ...profileLines] : []),
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------------------

const corpus = await cachedCorpus();
for (const store of corpus.stores)
  log(`store of ${store.sessions} sessions: ${store.stored} sessions, ${store.turns} turns`);

const scratch = mkdtempSync(join(tmpdir(), 'replay-bench-'));
const server = await startServer();
log(`model server: ${server.baseURL} (pid ${server.pid})`);
let report;
try {
  // Every wall time includes starting node; measured on its own (median of 3).
  const startups = [];
  for (let i = 0; i < 3; i++)
    startups.push((await runChild(['-e', ''], join(scratch, 'startup.json'))).seconds);
  const startup = median(startups);

  const small = corpus.stores[0];
  log(`(a, b) replay vs bare fetch over the ${small.sessions}-session store:`);
  const measured = [];
  for (const concurrency of concurrencies)
    measured.push(await throughput(server, small, concurrency, scratch));

  log(`(c) memory by number of sessions, concurrency ${memoryConcurrency}:`);
  const reuse = (store) =>
    store === small ? measured.find((t) => t.concurrency === memoryConcurrency)?.replays : undefined;
  const byStore = await memory(server, corpus.stores, scratch, reuse);
  const profiled = values.profile ? await profiles(server, corpus.stores, scratch) : undefined;

  const throughputRows = measured.map((t) => throughputRow(t, small));
  const memoryRows = byStore.map(memoryRow);
  report = {
    startup,
    corpus: {
      dir: corpus.dir,
      ...corpus.result,
      stores: corpus.stores.map(({ db, cli: _, ...rest }) => rest),
    },
    throughput: throughputRows,
    memory: memoryRows,
    verdict: memoryVerdict(memoryRows),
    ...(profiled ? { profiles: profiled } : {}),
  };
} finally {
  await server.stop();
  rmSync(scratch, { recursive: true, force: true });
}

const machine = {
  // The 1-minute load average when the bench started and when it ended: other work on the machine skews the
  // wall times (the ratios less so).
  load: [loadAtStart, loadavg()[0]].map((value) => Number(value?.toFixed(2))),
  cpus: cpus().length,
  cpuModel: cpus()[0]?.model,
  memoryGiB: Number((totalmem() / 1024 ** 3).toFixed(1)),
  node: process.version,
  platform: `${platform()} ${release()}`,
};
if (values.json) {
  process.stdout.write(
    `${JSON.stringify({ machine, seed: values.seed, runs, memoryConcurrency, ...report }, null, 2)}\n`,
  );
} else {
  process.stdout.write(
    `replay-history replay benchmark — ${machine.cpus} CPUs (${machine.cpuModel}), node ${machine.node}, seed ${values.seed}` +
      `${runs > 1 ? `, median of ${runs} runs` : ''}, load ${machine.load.join(' → ')}\nMB = 10^6 bytes, MiB = 2^20 bytes; zero-latency server in its own process\n\n` +
      `${render(report)}\n`,
  );
}
