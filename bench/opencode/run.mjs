#!/usr/bin/env node
// opencode driver benchmark: what `replay --agent opencode` costs per tool call, per opencode process and per
// model step, against the builtin driver replaying the same session (sample-sessions/opencode, "Fix todos limit
// off-by-one": 14 recorded turns, 10 tool calls, 3 user prompts), both with `--model recorded` (no model, no
// network). Also measures opencode's own floor on this machine: `opencode --version`, and a one-prompt replay
// whose only model request is refused (the "Greeting" session: one opencode process, no step, no tool call).
// Prints figures only; it asserts no timings. A failed replay is reported with its output and fails the bench.
//
//   npm run bench:opencode                  (builds first; median of 3 runs)
//   node bench/opencode/run.mjs [--runs 3] [--interval 20] [--json]
//
// Every replay is a fresh `node bench/ingest/measure.mjs dist/cli/main.js replay …` child (its own peak RSS and
// CPU), on a private copy of the ingested store, with an empty temp workspace. While it runs, this script
// samples /proc every --interval ms: the replay's descendant processes (each opencode process: when it started
// and ended, its peak RSS) and the pairs file (when each pair line appeared). Temp files are deleted.

import { spawn, spawnSync } from 'node:child_process';
import {
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
} from 'node:fs';
import { cpus, loadavg, platform, release, tmpdir, totalmem } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { median, removeDb, table } from '../children.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..', '..');
const cli = join(repo, 'dist', 'cli', 'main.js');
const measure = join(repo, 'bench', 'ingest', 'measure.mjs');
const sessionsDir = join(repo, 'sample-sessions', 'opencode');
const MAIN_TITLE = 'Fix todos limit off-by-one';
const BASELINE_TITLE = 'Greeting';
/** The main session's user prompts (the per-prompt overhead divides by them). */
const MAIN_PROMPTS = 3;

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
if (!existsSync(cli)) {
  process.stderr.write(`${cli} is missing: run \`npm run build\` (or use \`npm run bench:opencode\`)\n`);
  process.exit(2);
}
if (process.platform !== 'linux') {
  process.stderr.write('this bench reads /proc: Linux only\n');
  process.exit(2);
}

const log = (text) => process.stderr.write(`${text}\n`);
class BenchFailure extends Error {}

// ---------------------------------------------------------------------------------------------------------
// /proc sampling

const clockTicks = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;
/** performance.now() at boot, to place /proc/PID/stat start times (in clock ticks since boot) on our clock. */
const bootAt = performance.now() - Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]) * 1000;

function readText(path) {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** ppid, state and start (ms on performance.now()'s clock) of a process, or undefined when it is gone. */
function procStat(pid) {
  const text = readText(`/proc/${pid}/stat`);
  if (!text) return undefined;
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return {
    state: fields[0],
    ppid: Number(fields[1]),
    start: bootAt + (Number(fields[19]) / clockTicks) * 1000,
  };
}

function statusKiB(pid) {
  const text = readText(`/proc/${pid}/status`);
  const field = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text ?? '')?.[1] ?? 0);
  return { hwm: field('VmHWM'), rss: field('VmRSS') };
}

/**
 * Follows `root` and its descendants until stop(): for each, when it was first seen and last seen alive, its
 * start time from /proc, its command line and its peak RSS (VmHWM, read every tick: a lower bound of the true
 * peak, by at most what it gained in its last tick). Also notes when each line of `pairsFile` appeared.
 */
function sampler(root, pairsFile) {
  const known = new Map(); // pid -> record, ours
  const foreign = new Set(); // pids seen, not ours
  const pairs = [];
  let pairsOffset = 0;
  let partial = '';
  let ticks = 0;
  let tickMs = 0;
  const cpuBefore = process.cpuUsage();

  const readPairs = (now) => {
    if (!pairsFile || !existsSync(pairsFile)) return;
    const size = statSync(pairsFile).size;
    if (size <= pairsOffset) return;
    const fd = openSync(pairsFile, 'r');
    const buffer = Buffer.alloc(size - pairsOffset);
    try {
      readSync(fd, buffer, 0, buffer.length, pairsOffset);
    } finally {
      closeSync(fd);
    }
    pairsOffset = size;
    const lines = (partial + buffer.toString('utf8')).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      if (!line) continue;
      const pair = JSON.parse(line);
      pairs.push({
        at: now,
        turn: pair.turn,
        latencyMs: pair.latency_ms ?? 0,
        calls: pair.completion?.tool_calls?.length ?? 0,
      });
    }
  };

  const tick = () => {
    const t0 = performance.now();
    ticks++;
    let pids;
    try {
      pids = readdirSync('/proc').filter((name) => name.charCodeAt(0) >= 48 && name.charCodeAt(0) <= 57);
    } catch {
      pids = [];
    }
    const alive = new Set();
    for (const name of pids) {
      const pid = Number(name);
      if (foreign.has(pid)) continue;
      let record = known.get(pid);
      if (!record) {
        const stat = procStat(pid);
        if (!stat) continue;
        if (pid !== root && !known.has(stat.ppid)) {
          foreign.add(pid);
          continue;
        }
        record = {
          pid,
          ppid: stat.ppid,
          start: stat.start,
          firstSeen: t0,
          lastSeen: t0,
          hwmKiB: 0,
          argv: [],
        };
        known.set(pid, record);
      }
      const stat = procStat(pid);
      if (!stat || stat.state === 'Z' || stat.state === 'X') continue;
      alive.add(pid);
      record.lastSeen = t0;
      // Re-read until it has exec'd (a fork shows its parent's command line first).
      const argv = readText(`/proc/${pid}/cmdline`)?.split('\0').filter(Boolean);
      if (argv?.length) record.argv = argv;
      const { hwm } = statusKiB(pid);
      record.hwmKiB = Math.max(record.hwmKiB, hwm);
    }
    for (const record of known.values())
      if (record.end === undefined && !alive.has(record.pid) && record.lastSeen < t0) record.end = t0;
    readPairs(t0);
    tickMs += performance.now() - t0;
  };
  const timer = setInterval(tick, interval);
  tick();
  return {
    stop() {
      clearInterval(timer);
      const t = performance.now();
      tick();
      for (const record of known.values()) record.end ??= t;
      const cpu = process.cpuUsage(cpuBefore);
      return {
        processes: [...known.values()].sort((a, b) => a.start - b.start),
        pairs,
        ticks,
        tickMs,
        cpuMs: (cpu.user + cpu.system) / 1000,
      };
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
// Children

/** Runs a command with the sampler on it; wall time from spawn to exit. */
function runSampled(command, args, { usageFile, pairsFile, env = {} } = {}) {
  return new Promise((done, fail) => {
    const started = performance.now();
    const child = spawn(command, args, {
      cwd: repo,
      env: { ...process.env, NO_COLOR: '1', ...(usageFile ? { BENCH_RSS_FILE: usageFile } : {}), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const watch = sampler(child.pid, pairsFile);
    const stdout = [];
    const stderr = [];
    child.stdout.on('data', (chunk) => stdout.push(chunk));
    child.stderr.on('data', (chunk) => stderr.push(chunk));
    child.on('error', (error) => {
      watch.stop();
      fail(error);
    });
    child.on('close', (code, signal) => {
      const ended = performance.now();
      const sampled = watch.stop();
      let usage = {};
      if (usageFile && existsSync(usageFile)) {
        usage = JSON.parse(readFileSync(usageFile, 'utf8'));
        rmSync(usageFile);
      }
      done({
        started,
        ended,
        seconds: (ended - started) / 1000,
        code,
        signal,
        usage,
        sampled,
        stdout: Buffer.concat(stdout).toString('utf8'),
        stderr: Buffer.concat(stderr).toString('utf8'),
      });
    });
  });
}

function runCli(args) {
  const result = spawnSync(process.execPath, [cli, ...args], { cwd: repo, encoding: 'utf8' });
  if (result.status !== 0)
    throw new BenchFailure(`replay-history ${args[0]} failed (exit ${result.status}):\n${result.stderr}`);
  return result.stdout;
}

function parseJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The lines of a replay's stderr worth showing (it prints nothing else with --json when all is well). */
const stderrLines = (text) =>
  text
    .split('\n')
    .map((line) => line.trimEnd())
    .filter(Boolean);

// ---------------------------------------------------------------------------------------------------------
// One replay

function isOpencode(record, binary) {
  return record.argv[0] === binary || basename(record.argv[0] ?? '') === 'opencode';
}

/** A replay's opencode processes with the pair lines written while each ran. */
function opencodeProcesses(run, binary) {
  const { processes, pairs } = run.sampled;
  const ours = processes.filter((p) => p.pid !== processes[0]?.pid && isOpencode(p, binary));
  const probes = ours.filter((p) => p.argv.includes('--version'));
  // `opencode run` (one per prompt, as the driver once did) or `opencode serve` (one per session).
  const runsOf = ours.filter((p) => p.argv[1] === 'run' || p.argv[1] === 'serve');
  const shaped = runsOf.map((p) => {
    const spawned = Math.min(p.start, p.firstSeen);
    const mine = pairs.filter((pair) => pair.at >= spawned && pair.at <= p.end + interval);
    const first = mine[0];
    const last = mine.at(-1);
    const firstRequest = first ? first.at - first.latencyMs : undefined;
    return {
      pid: p.pid,
      ms: p.end - spawned,
      steps: mine.length,
      calls: mine.reduce((sum, pair) => sum + pair.calls, 0),
      startupMs: firstRequest === undefined ? undefined : Math.max(0, firstRequest - spawned),
      workMs: first && last ? last.at - firstRequest : undefined,
      tailMs: last ? p.end - last.at : undefined,
      peakRssKiB: p.hwmKiB,
      resumed: p.argv.includes('--session'),
      server: p.argv[1] === 'serve',
    };
  });
  return {
    runs: shaped,
    versionProbeMs: probes.map((p) => p.end - Math.min(p.start, p.firstSeen)),
    // The watchdog opencode runs under (watch.sh and the `sleep 1` of its polling) is expected: not listed.
    others: processes
      .filter((p) => p.pid !== processes[0]?.pid && !isOpencode(p, binary))
      .filter((p) => !p.argv.some((arg) => arg.endsWith('/watch.sh')) && p.argv.join(' ') !== 'sleep 1')
      .map((p) => p.argv.join(' ')),
  };
}

async function replay({ scratch, store, sessionId, driver, binary, label }) {
  const db = join(scratch, 'replay.db');
  const out = join(scratch, 'pairs.jsonl');
  const workspace = join(scratch, 'workspace');
  removeDb(db);
  for (const suffix of ['', '-wal'])
    if (existsSync(store + suffix)) copyFileSync(store + suffix, db + suffix);
  rmSync(out, { force: true });
  rmSync(workspace, { recursive: true, force: true });
  mkdirSync(workspace);
  const args = [measure, cli, 'replay', sessionId, '--db', db, '--out', out, '--json'];
  if (driver === 'opencode') args.push('--agent', 'opencode', '--workspace', workspace);
  else args.push('--mode', 'free');
  const run = await runSampled(process.execPath, args, {
    usageFile: join(scratch, 'usage.json'),
    pairsFile: out,
  });
  run.label = label;
  run.report = parseJson(run.stdout);
  run.stderrLines = stderrLines(run.stderr);
  run.pairLines = run.sampled.pairs.length;
  run.callsMade = run.sampled.pairs.reduce((sum, pair) => sum + pair.calls, 0);
  run.workspaceAfter = readdirSync(workspace);
  if (driver === 'opencode') run.opencode = opencodeProcesses(run, binary);
  removeDb(db);
  rmSync(out, { force: true });
  rmSync(workspace, { recursive: true, force: true });
  const r = run.report;
  const why =
    run.code !== 0
      ? `exited with ${run.code ?? run.signal}`
      : !r
        ? 'printed no JSON report'
        : r.status !== 'done'
          ? `run status ${r.status}${r.error ? `: ${r.error}` : ''}`
          : r.turnsFailed > 0
            ? `${r.turnsFailed} turn(s) failed`
            : undefined;
  if (why) {
    throw new BenchFailure(
      `${label}: the replay ${why}\n--- stdout (first 2000 chars)\n${run.stdout.slice(0, 2000)}\n--- stderr (last 4000 chars)\n${run.stderr.slice(-4000)}`,
    );
  }
  return run;
}

/** `opencode --version`, spawned directly; peak RSS as sampled. */
async function versionOnce(binary) {
  const run = await runSampled(binary, ['--version'], {});
  if (run.code !== 0) throw new BenchFailure(`opencode --version exited with ${run.code}:\n${run.stderr}`);
  run.peakRssKiB = run.sampled.processes[0]?.hwmKiB;
  return run;
}

async function nodeStartup() {
  const run = await runSampled(process.execPath, ['-e', ''], {});
  return run.seconds;
}

// ---------------------------------------------------------------------------------------------------------
// Figures

const spread = (values) => ({
  median: median(values),
  min: Math.min(...values),
  max: Math.max(...values),
  each: values,
});
const fixed = (v, digits) =>
  Number.isFinite(v)
    ? v.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
    : '–';
const s2 = (ms) => fixed(ms / 1000, 2);
const mib = (kib) => (Number.isFinite(kib) && kib > 0 ? (kib / 1024).toFixed(0) : '–');
const range = (sp, f) => `${f(sp.median)} (${f(sp.min)}–${f(sp.max)})`;

/** Least squares ms = a + b·steps over (steps, ms) points. */
function lineFit(points) {
  const n = points.length;
  const mx = points.reduce((s, p) => s + p.x, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  const sxx = points.reduce((s, p) => s + (p.x - mx) ** 2, 0);
  const sxy = points.reduce((s, p) => s + (p.x - mx) * (p.y - my), 0);
  if (n < 2 || sxx === 0) return undefined;
  const b = sxy / sxx;
  return { fixedMs: my - b * mx, perStepMs: b };
}

function summarize({ builtin, opencode, baseline, versions, startups }) {
  const ms = (run) => run.seconds * 1000;
  const loopMs = (run) => run.report.wallSeconds * 1000;
  const pickMedian = (list, f) => {
    const mid = median(list.map(f));
    return list.find((r) => f(r) === mid);
  };
  const oMid = pickMedian(opencode, ms);
  const bMid = pickMedian(builtin, ms);
  const steps = oMid.report.turnsDone;
  const calls = oMid.callsMade;
  const processes = oMid.opencode.runs.length;
  const prompts = MAIN_PROMPTS;
  const per = (f, n) => spread(opencode.map((o, i) => (f(o) - f(builtin[i])) / n));
  const allProcesses = opencode.flatMap((o) => o.opencode.runs);
  const byPosition = oMid.opencode.runs.map((_, i) =>
    opencode.map((o) => o.opencode.runs[i]).filter(Boolean),
  );
  const position = (i, f) => spread(byPosition[i].map(f).filter((v) => v !== undefined));
  const fits = opencode.map((o) => lineFit(o.opencode.runs.map((p) => ({ x: p.steps, y: p.ms }))));
  const sampler = [...builtin, ...opencode, ...baseline].map((r) => ({
    ticks: r.sampled.ticks,
    cpuMs: r.sampled.cpuMs,
    seconds: r.seconds,
  }));
  return {
    session: { steps, calls, processes, prompts, recordedTurns: bMid.report.turnsDone },
    nodeStartupMs: spread(startups.map((s) => s * 1000)),
    version: {
      ms: spread(versions.map(ms)),
      peakRssKiB: median(versions.map((v) => v.peakRssKiB)),
    },
    baseline: {
      ms: spread(baseline.map(ms)),
      loopMs: spread(baseline.map(loopMs)),
      opencodeMs: spread(baseline.flatMap((r) => r.opencode.runs.map((p) => p.ms))),
      versionProbeMs: spread(baseline.flatMap((r) => r.opencode.versionProbeMs)),
      peakRssKiB: median(baseline.map((r) => r.usage.maxRSS)),
      opencodePeakRssKiB: median(baseline.flatMap((r) => r.opencode.runs.map((p) => p.peakRssKiB))),
    },
    builtin: {
      ms: spread(builtin.map(ms)),
      loopMs: spread(builtin.map(loopMs)),
      cpuMs: spread(builtin.map((r) => (r.usage.userCPUTime + r.usage.systemCPUTime) / 1000)),
      peakRssKiB: spread(builtin.map((r) => r.usage.maxRSS)),
      turns: bMid.report.turnsDone,
      callsMade: bMid.callsMade,
      callsMatched: bMid.report.callsMatched,
      callsOriginal: bMid.report.callsOriginal,
      misses: bMid.report.misses,
    },
    opencode: {
      ms: spread(opencode.map(ms)),
      loopMs: spread(opencode.map(loopMs)),
      cpuMs: spread(opencode.map((r) => (r.usage.userCPUTime + r.usage.systemCPUTime) / 1000)),
      peakRssKiB: spread(opencode.map((r) => r.usage.maxRSS)),
      turns: oMid.report.turnsDone,
      callsMade: oMid.callsMade,
      callsMatched: oMid.report.callsMatched,
      callsOriginal: oMid.report.callsOriginal,
      misses: oMid.report.misses,
      versionProbeMs: spread(opencode.flatMap((r) => r.opencode.versionProbeMs)),
      processesMs: spread(opencode.map((r) => r.opencode.runs.reduce((s, p) => s + p.ms, 0))),
      outsideProcessesMs: spread(
        opencode.map((r) => r.seconds * 1000 - r.opencode.runs.reduce((s, p) => s + p.ms, 0)),
      ),
      perProcess: oMid.opencode.runs.map((p, i) => ({
        steps: p.steps,
        calls: p.calls,
        resumed: p.resumed,
        server: p.server,
        ms: position(i, (q) => q.ms),
        startupMs: position(i, (q) => q.startupMs),
        workMs: position(i, (q) => q.workMs),
        tailMs: position(i, (q) => q.tailMs),
        peakRssKiB: median(byPosition[i].map((q) => q.peakRssKiB)),
      })),
      opencodePeakRssKiB: Math.max(...allProcesses.map((p) => p.peakRssKiB)),
      fit: {
        fixedMs: spread(fits.filter(Boolean).map((f) => f.fixedMs)),
        perStepMs: spread(fits.filter(Boolean).map((f) => f.perStepMs)),
      },
    },
    overhead: {
      perCallMs: per(ms, calls),
      perProcessMs: per(ms, processes),
      perStepMs: per(ms, steps),
      loopPerCallMs: per(loopMs, calls),
      loopPerStepMs: per(loopMs, steps),
      ratio: spread(opencode.map((o, i) => ms(o) / ms(builtin[i]))),
      // The whole session's overhead against opencode's own start-up in the same run: the baseline replay's one
      // opencode process, spawn to exit (it starts, sends one request, which is refused, and is stopped).
      perSessionMs: per(ms, 1),
      perPromptMs: per(ms, prompts),
      startupMs: spread(baseline.map((r) => r.opencode.runs[0]?.ms).filter((v) => v !== undefined)),
      perSessionOverStartup: spread(
        opencode
          .map((o, i) => (ms(o) - ms(builtin[i])) / baseline[i]?.opencode.runs[0]?.ms)
          .filter(Number.isFinite),
      ),
    },
    sampler: {
      ticks: sampler.reduce((s, r) => s + r.ticks, 0),
      cpuShare: sampler.reduce((s, r) => s + r.cpuMs, 0) / sampler.reduce((s, r) => s + r.seconds * 1000, 0),
    },
  };
}

function render(report) {
  const { summary: f, notes } = report;
  const b = f.builtin;
  const o = f.opencode;
  const each = (sp, g) => sp.each.map(g).join(' ');
  const main = table([
    ['', 'builtin', 'opencode'],
    ['replay process, spawn to exit (s)', range(b.ms, s2), range(o.ms, s2)],
    ['  each run (s)', each(b.ms, s2), each(o.ms, s2)],
    ['run loop, wallSeconds as printed (s)', range(b.loopMs, s2), range(o.loopMs, s2)],
    ['replay process CPU, not its children (s)', range(b.cpuMs, s2), range(o.cpuMs, s2)],
    ['turns done (model steps)', String(b.turns), String(o.turns)],
    ['tool calls made by the model and answered', String(b.callsMade), String(o.callsMade)],
    [
      'calls matched / recorded, misses',
      `${b.callsMatched} / ${b.callsOriginal}, ${b.misses}`,
      `${o.callsMatched} / ${o.callsOriginal}, ${o.misses}`,
    ],
    ['opencode processes', '0', String(f.session.processes)],
    ['replay process peak RSS (MiB)', range(b.peakRssKiB, mib), range(o.peakRssKiB, mib)],
    ['largest opencode process peak RSS (MiB)', '', mib(o.opencodePeakRssKiB)],
  ]);
  const overhead = table([
    ['opencode − builtin, replay process wall', 'median (min–max) of runs'],
    [`per tool call (÷ ${f.session.calls}) (ms)`, range(f.overhead.perCallMs, (v) => fixed(v, 0))],
    [
      `per opencode process (÷ ${f.session.processes}) (ms)`,
      range(f.overhead.perProcessMs, (v) => fixed(v, 0)),
    ],
    [`per model step (÷ ${f.session.steps}) (ms)`, range(f.overhead.perStepMs, (v) => fixed(v, 0))],
    ['per tool call, run loop only (ms)', range(f.overhead.loopPerCallMs, (v) => fixed(v, 0))],
    ['per model step, run loop only (ms)', range(f.overhead.loopPerStepMs, (v) => fixed(v, 0))],
    ['opencode ÷ builtin, wall', range(f.overhead.ratio, (v) => `${fixed(v, 1)}×`)],
    ['per session (s)', range(f.overhead.perSessionMs, s2)],
    [`per prompt (÷ ${f.session.prompts}) (s)`, range(f.overhead.perPromptMs, s2)],
    [
      "opencode's own start-up: the baseline's opencode process, spawn to exit (s)",
      range(f.overhead.startupMs, s2),
    ],
    ['per session ÷ that start-up', range(f.overhead.perSessionOverStartup, (v) => `${fixed(v, 2)}×`)],
  ]);
  const procRows = [
    [
      'opencode process',
      'steps',
      'calls',
      'spawn to exit (s)',
      'spawn to 1st request (s)',
      '1st request to last answer (s)',
      'last answer to exit (s)',
      'peak RSS (MiB)',
    ],
    ...o.perProcess.map((p, i) => [
      `${i + 1}${p.resumed ? ' (--session)' : ''}${p.server ? ' (serve)' : ''}`,
      String(p.steps),
      String(p.calls),
      range(p.ms, s2),
      range(p.startupMs, s2),
      range(p.workMs, s2),
      range(p.tailMs, s2),
      mib(p.peakRssKiB),
    ]),
  ];
  const floor = table([
    ['floor on this machine', 'median (min–max)', 'peak RSS (MiB)'],
    ["node start-up (node -e '') (s)", range(f.nodeStartupMs, s2), ''],
    ['opencode --version, spawned directly (s)', range(f.version.ms, s2), mib(f.version.peakRssKiB)],
    // The replay no longer runs `opencode --version` itself (it reads the pinned package's version): a row only
    // when some binary still needed the probe.
    ...(o.versionProbeMs.each.length > 0
      ? [['  the same probe inside each opencode replay (s)', range(o.versionProbeMs, s2), '']]
      : []),
    [
      'one-prompt replay, request refused: replay process (s)',
      range(f.baseline.ms, s2),
      mib(f.baseline.peakRssKiB),
    ],
    ['  its run loop (s)', range(f.baseline.loopMs, s2), ''],
    [
      '  its one opencode process, spawn to exit (s)',
      range(f.baseline.opencodeMs, s2),
      mib(f.baseline.opencodePeakRssKiB),
    ],
    ['all opencode processes of the main replay (s)', range(o.processesMs, s2), ''],
    ['main replay process outside them (s)', range(o.outsideProcessesMs, s2), ''],
    [
      `fit over the ${f.session.processes} processes: ms = fixed + per step × steps`,
      `${range(o.fit.fixedMs, (v) => fixed(v, 0))} + ${range(o.fit.perStepMs, (v) => fixed(v, 0))} × steps`,
      '',
    ],
  ]);
  return [
    main,
    '',
    overhead,
    '',
    `Per opencode process of the main replay (median, min–max over the ${report.runs} runs; times from /proc, ±${interval} ms)`,
    '',
    table(procRows),
    '',
    floor,
    '',
    `Sampler: ${f.sampler.ticks.toLocaleString('en-US')} ticks every ${interval} ms, ${fixed(100 * f.sampler.cpuShare, 1)} % of one CPU while the replays ran.`,
    ...(notes.length ? ['', ...notes] : []),
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------------------

const scratch = mkdtempSync(join(tmpdir(), 'opencode-bench-'));
let report;
let failed;
try {
  const { findOpencode } = await import(
    pathToFileURL(join(repo, 'dist', 'drivers', 'opencode', 'binary.js')).href
  );
  const binary = findOpencode();
  log(`opencode: ${binary.path} (${binary.version ?? 'version unknown'}, from ${binary.from})`);

  const store = join(scratch, 'store.db');
  runCli(['ingest', sessionsDir, '--db', store]);
  const sessions = JSON.parse(runCli(['sessions', '--db', store, '--json']));
  const main = sessions.find((s) => s.title === MAIN_TITLE);
  const greeting = sessions.find((s) => s.title === BASELINE_TITLE);
  if (!main || !greeting)
    throw new BenchFailure(`the store lacks the "${MAIN_TITLE}" or "${BASELINE_TITLE}" session`);
  log(`session ${main.id}: ${main.turns} recorded turns, ${main.toolCalls} tool calls`);

  const builtin = [];
  const opencode = [];
  const baseline = [];
  const versions = [];
  const startups = [];
  const loadBefore = loadavg();
  for (let i = 0; i < runs; i++) {
    const at = `run ${i + 1}/${runs}`;
    startups.push(await nodeStartup());
    log(`${at}: opencode --version ...`);
    versions.push(await versionOnce(binary.path));
    log(`${at}: builtin replay ...`);
    builtin.push(
      await replay({
        scratch,
        store,
        sessionId: main.id,
        driver: 'builtin',
        binary: binary.path,
        label: `builtin, ${at}`,
      }),
    );
    log(`${at}: opencode replay ...`);
    opencode.push(
      await replay({
        scratch,
        store,
        sessionId: main.id,
        driver: 'opencode',
        binary: binary.path,
        label: `opencode, ${at}`,
      }),
    );
    log(`${at}: one-prompt opencode replay (baseline) ...`);
    baseline.push(
      await replay({
        scratch,
        store,
        sessionId: greeting.id,
        driver: 'opencode',
        binary: binary.path,
        label: `baseline, ${at}`,
      }),
    );
  }
  const loadAfter = loadavg();

  const notes = [];
  for (const run of [...builtin, ...opencode, ...baseline]) {
    for (const line of run.stderrLines) notes.push(`${run.label}: stderr: ${line}`);
    if (run.workspaceAfter.length)
      notes.push(`${run.label}: the workspace holds ${run.workspaceAfter.join(', ')}`);
    if (run.pairLines !== run.report.turnsDone)
      notes.push(`${run.label}: CHECK: ${run.pairLines} pair lines for ${run.report.turnsDone} turns`);
    if (run.report.misses)
      notes.push(`${run.label}: CHECK: ${run.report.misses} tool call(s) not in the recording`);
    for (const other of run.opencode?.others ?? []) notes.push(`${run.label}: other child process: ${other}`);
  }
  for (const run of opencode) {
    const counted = run.opencode.runs.reduce((s, p) => s + p.steps, 0);
    if (counted !== run.report.turnsDone)
      notes.push(
        `${run.label}: CHECK: pairs placed in opencode processes ${counted}, turns ${run.report.turnsDone}`,
      );
    if (run.opencode.runs.length !== opencode[0].opencode.runs.length)
      notes.push(
        `${run.label}: CHECK: ${run.opencode.runs.length} opencode processes, run 1 had ${opencode[0].opencode.runs.length}`,
      );
  }
  for (const run of baseline)
    if (run.opencode.runs.length !== 1 || run.report.turnsDone !== 0)
      notes.push(
        `${run.label}: CHECK: ${run.opencode.runs.length} opencode processes, ${run.report.turnsDone} turns`,
      );
  const summary = summarize({ builtin, opencode, baseline, versions, startups });
  if (summary.builtin.turns !== summary.opencode.turns)
    notes.push(
      `The drivers replay different numbers of turns (${summary.builtin.turns} vs ${summary.opencode.turns}): see the README.`,
    );
  report = {
    machine: {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model,
      memoryGiB: Number((totalmem() / 1024 ** 3).toFixed(1)),
      node: process.version,
      platform: `${platform()} ${release()}`,
      opencode: binary.version,
      loadBefore: loadBefore.map((v) => Number(v.toFixed(2))),
      loadAfter: loadAfter.map((v) => Number(v.toFixed(2))),
    },
    runs,
    intervalMs: interval,
    session: { id: main.id, title: main.title, recordedTurns: main.turns, recordedToolCalls: main.toolCalls },
    baselineSession: { id: greeting.id, title: greeting.title },
    summary,
    notes,
  };
} catch (error) {
  failed = error;
} finally {
  rmSync(scratch, { recursive: true, force: true });
}

if (failed) {
  log(
    `bench:opencode FAILED: ${failed instanceof BenchFailure ? failed.message : (failed?.stack ?? failed)}`,
  );
  process.exit(1);
}
if (values.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
else {
  const m = report.machine;
  process.stdout.write(
    `replay-history opencode driver benchmark — ${m.cpus} CPUs (${m.cpuModel}), node ${m.node}, opencode ${m.opencode}, ` +
      `median of ${runs} run${runs > 1 ? 's' : ''}, load ${m.loadBefore[0]} → ${m.loadAfter[0]}\n` +
      `Session "${report.session.title}" (${report.session.recordedTurns} recorded turns, ${report.session.recordedToolCalls} tool calls), --model recorded; MiB = 2^20 bytes\n\n` +
      `${render(report)}\n`,
  );
}
