#!/usr/bin/env node
// Ingest benchmark: for each corpus size, how fast `replay-history ingest` reads a realistic Claude Code
// corpus compared with just reading and JSON.parse-ing the same lines, how much memory it takes, how fast a
// re-run over unchanged files is, and how big the store gets. Prints figures only; it asserts no timings.
//
//   npm run bench:ingest                       (builds first; sizes 50, 100, 200 MB)
//   node bench/ingest/run.mjs --sizes 10,50 [--seed 1] [--runs 3] [--heap-cap 48] [--json]
//
// Corpora are cached in bench/.data/ (git-ignored) and regenerated only when missing or when the size, the
// seed or generate.mjs itself changed. Every child is a fresh `node` process; temp dbs are deleted.

import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, platform, release, tmpdir, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
// Already a dependency of the CLI: used read-only to count what the store holds after the ingest.
import Database from 'better-sqlite3';
import { generate } from './generate.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..', '..');
const dataDir = join(repo, 'bench', '.data');
const cli = join(repo, 'dist', 'cli', 'main.js');
const MB = 1e6;
/** Peak RSS at the largest size within this factor of the smallest counts as flat. */
const flatFactor = 1.25;

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '50,100,200' },
    seed: { type: 'string', default: '1' },
    runs: { type: 'string', default: '3' },
    'heap-cap': { type: 'string', default: '48' },
    json: { type: 'boolean', default: false },
  },
});
const sizes = values.sizes.split(',').map((s) => Number(s.trim()));
const runs = Math.max(1, Number(values.runs));
/** MiB of V8 old space for the capped-heap run (0 = skip it). */
const heapCap = Number(values['heap-cap']);
if (sizes.some((s) => !(s > 0))) {
  process.stderr.write(`--sizes must be a comma-separated list of positive numbers (MB): ${values.sizes}\n`);
  process.exit(2);
}
if (!existsSync(cli)) {
  process.stderr.write(`${cli} is missing: run \`npm run build\` (or use \`npm run bench:ingest\`)\n`);
  process.exit(2);
}

const log = (text) => process.stderr.write(`${text}\n`);

// ---------------------------------------------------------------------------------------------------------
// Corpora

/** The generator's own source is part of the cache key: editing it regenerates the corpora. */
const generatorHash = createHash('sha256')
  .update(readFileSync(join(here, 'generate.mjs')))
  .digest('hex')
  .slice(0, 16);

function corpus(megabytes) {
  const dir = join(dataDir, `claude-code-${megabytes}mb-seed${values.seed}`);
  const manifestPath = join(dir, 'manifest.json');
  const params = { megabytes, seed: values.seed, generator: generatorHash };
  if (existsSync(manifestPath)) {
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
    if (JSON.stringify(manifest.params) === JSON.stringify(params)) {
      log(`corpus ${megabytes} MB: cached in ${dir}`);
      return { dir, root: join(dir, 'projects'), ...manifest.result };
    }
  }
  rmSync(dir, { recursive: true, force: true });
  log(`corpus ${megabytes} MB: generating in ${dir} ...`);
  const started = performance.now();
  const result = generate({ dir, megabytes, seed: values.seed });
  log(
    `corpus ${megabytes} MB: ${result.files} files, ${fmtMB(result.bytes)} MB in ${secs(performance.now() - started)} s`,
  );
  // The manifest is written last: an interrupted generation is regenerated next time.
  writeFileSync(manifestPath, `${JSON.stringify({ params, result }, null, 2)}\n`);
  return { dir, root: join(dir, 'projects'), ...result };
}

/** Reads every file once so that both the baseline and the ingest find the corpus in the page cache. */
function warm(dir) {
  for (const name of readdirSync(dir, { recursive: true })) {
    const path = join(dir, name);
    if (statSync(path).isFile()) readFileSync(path);
  }
}

// ---------------------------------------------------------------------------------------------------------
// Children

/** Runs `node <args>` and returns wall time, exit code, output and the usage the child wrote to a file. */
function runNode(args, usageFile) {
  return new Promise((done, fail) => {
    const started = performance.now();
    const child = spawn(process.execPath, args, {
      cwd: repo,
      env: { ...process.env, BENCH_RSS_FILE: usageFile, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const stdout = [];
    const stderr = [];
    child.stdout.on('data', (chunk) => stdout.push(chunk));
    child.stderr.on('data', (chunk) => stderr.push(chunk));
    child.on('error', fail);
    child.on('close', (code, signal) => {
      const seconds = (performance.now() - started) / 1000;
      let usage = {};
      if (existsSync(usageFile)) {
        usage = JSON.parse(readFileSync(usageFile, 'utf8'));
        rmSync(usageFile);
      }
      done({
        seconds,
        code,
        signal,
        usage,
        stdout: Buffer.concat(stdout).toString('utf8'),
        stderr: Buffer.concat(stderr).toString('utf8'),
      });
    });
  });
}

function median(list) {
  const sorted = [...list].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/**
 * The run with the median wall time among `runs` repetitions (a single run when runs = 1), with the median
 * peak RSS of all of them: RSS depends on when the GC happens to run and varies more than time does.
 */
async function medianRun(count, once) {
  const results = [];
  for (let i = 0; i < count; i++) results.push(await once(i));
  const mid = median(results.map((r) => r.seconds));
  const chosen = results.find((r) => r.seconds === mid);
  const rss = results.map((r) => r.usage.maxRSS).filter((v) => v !== undefined);
  return { ...chosen, medianRssKiB: rss.length ? median(rss) : undefined, rssRunsKiB: rss };
}

async function baseline(c, scratch) {
  const run = await medianRun(runs, () =>
    runNode([join(here, 'baseline.mjs'), c.root], join(scratch, 'baseline.json')),
  );
  if (run.code !== 0) throw new Error(`baseline failed (exit ${run.code}):\n${run.stderr}`);
  return run;
}

function ingestArgs(c, db, nodeFlags = []) {
  return [...nodeFlags, join(here, 'measure.mjs'), cli, 'ingest', c.root, '--db', db, '--json'];
}

function removeDb(db) {
  for (const suffix of ['', '-wal', '-shm']) rmSync(db + suffix, { force: true });
}

function summaryOf(run) {
  try {
    return JSON.parse(run.stdout).paths[0];
  } catch {
    return undefined;
  }
}

function dbBytes(db) {
  let total = 0;
  for (const suffix of ['', '-wal', '-shm']) if (existsSync(db + suffix)) total += statSync(db + suffix).size;
  return total;
}

/** What the store holds, independent of what the CLI printed. */
function storeCounts(db) {
  if (!existsSync(db)) return undefined;
  const store = new Database(db, { readonly: true });
  try {
    return store
      .prepare(
        `SELECT count(*) AS sessions, coalesce(sum(message_count), 0) AS messages,
           coalesce(sum(tool_call_count), 0) AS toolCalls, coalesce(sum(unanswered_count), 0) AS unanswered,
           coalesce(sum(origin = 'mirror'), 0) AS mirrors
         FROM sessions`,
      )
      .get();
  } finally {
    store.close();
  }
}

async function measure(c) {
  const scratch = mkdtempSync(join(tmpdir(), 'replay-bench-'));
  try {
    log(`  baseline: read + JSON.parse ...`);
    const base = await baseline(c, scratch);
    const db = join(scratch, 'ingest.db');
    log(`  ingest into a fresh db ...`);
    const ingest = await medianRun(runs, () => {
      removeDb(db);
      return runNode(ingestArgs(c, db), join(scratch, 'ingest.json'));
    });
    log(`  re-ingest of the unchanged corpus ...`);
    const again = await runNode(ingestArgs(c, db), join(scratch, 'reingest.json'));
    const dbSize = dbBytes(db);
    const stored = storeCounts(db);
    // Peak RSS alone cannot tell retained data from garbage V8 has not collected yet (it grows its heap with
    // the allocation rate). The same ingest with the old space capped tells them apart: if the data it keeps
    // alive grew with the corpus, the capped run would run out of memory at the larger sizes.
    let capped;
    if (heapCap > 0) {
      log(`  ingest with the V8 old space capped at ${heapCap} MiB ...`);
      const cappedDb = join(scratch, 'capped.db');
      capped = await runNode(
        ingestArgs(c, cappedDb, [`--max-old-space-size=${heapCap}`]),
        join(scratch, 'capped.json'),
      );
      removeDb(cappedDb);
    }
    return { base, ingest, again, dbSize, stored, capped };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------------------
// Figures

const fmtMB = (bytes) => (bytes / MB).toFixed(1);
const secs = (ms) => (ms / 1000).toFixed(1);
const mib = (kib) => (kib / 1024).toFixed(0);
const cpuSeconds = (usage) => ((usage.userCPUTime ?? 0) + (usage.systemCPUTime ?? 0)) / 1e6;

/**
 * Counts the generator knows, against what the ingest reported and what the store holds. `problems` are
 * mismatches worth a look; `remarks` describe how the CLI's printed summary relates to the store.
 */
function checks(c, summary, again, base, stored) {
  const problems = [];
  const remarks = [];
  if (!summary) return { problems: ['ingest printed no JSON summary'], remarks };
  const expectedSessions = c.sessions.main + c.sessions.subagent + c.sessions.compaction;
  if (summary.lines !== c.lines) problems.push(`lines read ${summary.lines} ≠ ${c.lines} in the corpus`);
  if (base.lines !== c.lines) problems.push(`baseline parsed ${base.lines} lines ≠ ${c.lines}`);
  if (summary.files.read !== c.files)
    problems.push(`files read ${summary.files.read} ≠ ${c.files} transcripts`);
  if (summary.files.ignored !== c.sidecars)
    problems.push(`files ignored ${summary.files.ignored} ≠ ${c.sidecars} sub-agent .meta.json sidecars`);
  if (summary.skippedLines) problems.push(`${summary.skippedLines} line(s) skipped`);
  if (summary.warnings.length)
    problems.push(`${summary.warnings.length} warning(s), e.g. ${summary.warnings[0].message}`);
  if (!stored) problems.push('no store to count');
  else {
    if (stored.sessions !== expectedSessions)
      problems.push(`store holds ${stored.sessions} sessions ≠ ${expectedSessions} transcript files`);
    if (stored.toolCalls !== c.toolUses)
      problems.push(`store holds ${stored.toolCalls} tool calls ≠ ${c.toolUses} tool_use blocks written`);
    if (stored.mirrors) problems.push(`${stored.mirrors} session(s) left as agent_progress mirrors`);
    if (summary.messages !== stored.messages || summary.toolCalls !== stored.toolCalls) {
      remarks.push(
        `the ingest summary prints ${summary.messages} messages / ${summary.toolCalls} tool calls, the store holds ` +
          `${stored.messages} / ${stored.toolCalls}: the ${summary.sessions.updated} sub-agent(s) first rebuilt from ` +
          `agent_progress mirrors in the parent log (${c.mirroredAgents} generated) are counted again when their own ` +
          `file replaces them (${c.mirroredToolUses} mirrored tool calls generated)`,
      );
    }
  }
  const reread = summaryOf(again);
  if (!reread) problems.push('re-ingest printed no JSON summary');
  else if (reread.files.read !== 0 || reread.files.unchanged !== c.files)
    problems.push(`re-ingest read ${reread.files.read} file(s) again; ${reread.files.unchanged} unchanged`);
  return { problems, remarks };
}

function row(c, m) {
  const summary = summaryOf(m.ingest);
  const reread = summaryOf(m.again);
  const baseMBs = c.bytes / MB / m.base.seconds;
  const ingestMBs = c.bytes / MB / m.ingest.seconds;
  return {
    megabytes: c.megabytes,
    corpus: {
      bytes: c.bytes,
      files: c.files,
      sidecars: c.sidecars,
      lines: c.lines,
      largestFile: c.largestFile,
      sessions: c.sessions,
      toolUses: c.toolUses,
      compactions: c.compactions,
      hugeLines: c.hugeLines,
    },
    baseline: {
      seconds: m.base.seconds,
      mbPerSecond: baseMBs,
      linesPerSecond: c.lines / m.base.seconds,
      peakRssKiB: m.base.medianRssKiB,
      peakRssRunsKiB: m.base.rssRunsKiB,
      cpuSeconds: cpuSeconds(m.base.usage),
    },
    ingest: {
      exitCode: m.ingest.code,
      seconds: m.ingest.seconds,
      mbPerSecond: ingestMBs,
      linesPerSecond: c.lines / m.ingest.seconds,
      peakRssKiB: m.ingest.medianRssKiB,
      peakRssRunsKiB: m.ingest.rssRunsKiB,
      cpuSeconds: cpuSeconds(m.ingest.usage),
      vsBaseline: ingestMBs / baseMBs,
      sessions: summary?.sessions,
      messages: summary?.messages,
      toolCalls: summary?.toolCalls,
      linesRead: summary?.lines,
      skippedLines: summary?.skippedLines,
      warnings: summary?.warnings.length,
      stderrLines: m.ingest.stderr.split('\n').filter(Boolean).length,
    },
    reingest: {
      exitCode: m.again.code,
      seconds: m.again.seconds,
      peakRssKiB: m.again.usage.maxRSS,
      filesUnchanged: reread?.files.unchanged,
      filesRead: reread?.files.read,
    },
    dbBytes: m.dbSize,
    capped: m.capped && {
      heapCapMiB: heapCap,
      ok: m.capped.code === 0,
      exitCode: m.capped.code,
      signal: m.capped.signal,
      outOfMemory: /heap out of memory/i.test(m.capped.stderr),
      seconds: m.capped.seconds,
      peakRssKiB: m.capped.usage.maxRSS,
    },
    stored: m.stored,
    checks: checks(c, summary, m.again, m.base.usage, m.stored),
  };
}

function table(rows) {
  const widths = [];
  for (const r of rows) {
    for (const [i, cell] of r.entries()) widths[i] = Math.max(widths[i] ?? 0, [...cell].length);
  }
  return rows
    .map((r) =>
      r
        .map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i])))
        .join('   ')
        .trimEnd(),
    )
    .join('\n');
}

function render(results, memory) {
  const n = (v, digits = 1) =>
    v.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
  const int = (v) => Math.round(v).toLocaleString('en-US');
  const col = (f) => results.map(f);
  const lines = [
    ['', ...col((r) => `${r.megabytes} MB`)],
    ['corpus: transcript bytes (MB)', ...col((r) => fmtMB(r.corpus.bytes))],
    ['corpus: .jsonl files / lines', ...col((r) => `${int(r.corpus.files)} / ${int(r.corpus.lines)}`)],
    ['corpus: largest file (MB)', ...col((r) => fmtMB(r.corpus.largestFile))],
    [
      'corpus: sessions main/sub/compact',
      ...col(
        (r) => `${r.corpus.sessions.main}/${r.corpus.sessions.subagent}/${r.corpus.sessions.compaction}`,
      ),
    ],
    ['node start-up, in every wall time (s)', ...col(() => n(startup.seconds, 2))],
    ['baseline: wall time (s)', ...col((r) => n(r.baseline.seconds, 2))],
    ['baseline: MB/s', ...col((r) => n(r.baseline.mbPerSecond))],
    ['baseline: lines/s', ...col((r) => int(r.baseline.linesPerSecond))],
    ['baseline: peak RSS, median (MiB)', ...col((r) => mib(r.baseline.peakRssKiB))],
    ['ingest: wall time (s)', ...col((r) => n(r.ingest.seconds, 2))],
    ['ingest: CPU time (s)', ...col((r) => n(r.ingest.cpuSeconds, 2))],
    ['ingest: MB/s', ...col((r) => n(r.ingest.mbPerSecond))],
    ['ingest: lines/s', ...col((r) => int(r.ingest.linesPerSecond))],
    ['ingest: peak RSS, median (MiB)', ...col((r) => mib(r.ingest.peakRssKiB))],
    ['ingest: peak RSS, each run (MiB)', ...col((r) => r.ingest.peakRssRunsKiB.map(mib).join(' '))],
    ['ingest ÷ baseline throughput', ...col((r) => `${n(r.ingest.vsBaseline, 3)}×`)],
    [
      'ingest summary: sessions new/updated',
      ...col((r) => `${r.ingest.sessions?.new ?? '?'}/${r.ingest.sessions?.updated ?? '?'}`),
    ],
    [
      'ingest summary: messages / tool calls',
      ...col((r) => `${int(r.ingest.messages ?? 0)} / ${int(r.ingest.toolCalls ?? 0)}`),
    ],
    [
      'ingest: warnings / skipped lines',
      ...col((r) => `${r.ingest.warnings ?? '?'} / ${r.ingest.skippedLines ?? '?'}`),
    ],
    ['ingest: exit code', ...col((r) => String(r.ingest.exitCode))],
    ['re-ingest: wall time (s)', ...col((r) => n(r.reingest.seconds, 2))],
    [
      're-ingest: files unchanged/read',
      ...col((r) => `${r.reingest.filesUnchanged ?? '?'}/${r.reingest.filesRead ?? '?'}`),
    ],
    ['re-ingest: peak RSS (MiB)', ...col((r) => mib(r.reingest.peakRssKiB))],
    [
      'store: sessions / messages / tool calls',
      ...col(
        (r) =>
          `${int(r.stored?.sessions ?? 0)} / ${int(r.stored?.messages ?? 0)} / ${int(r.stored?.toolCalls ?? 0)}`,
      ),
    ],
    ['db size (MB)', ...col((r) => fmtMB(r.dbBytes))],
    ['db size ÷ corpus size', ...col((r) => `${n(r.dbBytes / r.corpus.bytes, 2)}×`)],
  ];
  if (heapCap > 0) {
    lines.push(
      [
        `ingest, old space ≤ ${heapCap} MiB: result`,
        ...col((r) =>
          r.capped.ok ? 'ok' : r.capped.outOfMemory ? 'OUT OF MEMORY' : `exit ${r.capped.exitCode}`,
        ),
      ],
      [`ingest, old space ≤ ${heapCap} MiB: time (s)`, ...col((r) => n(r.capped.seconds, 2))],
      [`ingest, old space ≤ ${heapCap} MiB: RSS (MiB)`, ...col((r) => mib(r.capped.peakRssKiB ?? 0))],
    );
  }
  const out = [table(lines), ''];
  for (const r of results) {
    if (r.checks.problems.length === 0)
      out.push(`${r.megabytes} MB: lines, files, stored sessions and tool calls match the generator.`);
    for (const note of r.checks.problems) out.push(`${r.megabytes} MB: CHECK: ${note}`);
  }
  // The same remark at every size: print the largest one.
  const remarks = results[results.length - 1].checks.remarks;
  for (const note of remarks) out.push(`Note (${results[results.length - 1].megabytes} MB): ${note}.`);
  out.push('', memory.sentence);
  return out.join('\n');
}

function memoryVerdict(results) {
  const first = results[0];
  const last = results[results.length - 1];
  const ratio = last.ingest.peakRssKiB / first.ingest.peakRssKiB;
  const growth = last.corpus.bytes / first.corpus.bytes;
  const flat = ratio <= flatFactor;
  let sentence =
    results.length < 2
      ? `Memory: ingest peak RSS ${mib(first.ingest.peakRssKiB)} MiB (one size only; give several --sizes to see growth).`
      : `Memory: ingest peak RSS ${mib(last.ingest.peakRssKiB)} MiB at ${last.megabytes} MB vs ${mib(first.ingest.peakRssKiB)} MiB at ${first.megabytes} MB ` +
        `(×${ratio.toFixed(2)} for ×${growth.toFixed(1)} the input): ${flat ? 'stayed flat' : 'GREW with the corpus'}` +
        ` (flat = within ×${flatFactor}; largest single file ${fmtMB(first.corpus.largestFile)} MB → ${fmtMB(last.corpus.largestFile)} MB).`;
  let liveBounded;
  if (heapCap > 0) {
    const failed = results.filter((r) => !r.capped.ok).map((r) => `${r.megabytes} MB`);
    liveBounded = failed.length === 0;
    sentence += liveBounded
      ? `\nWith V8's old space capped at ${heapCap} MiB the ingest still completes at every size, so the data it keeps alive` +
        ` does not grow with the corpus${flat ? '' : '; the extra RSS is garbage not yet collected (V8 sizes its heap to the allocation rate)'}.`
      : `\nWith V8's old space capped at ${heapCap} MiB the ingest FAILS at ${failed.join(', ')}` +
        `${failed.length < results.length ? ' but not at the smaller sizes: the data it keeps alive grows with the corpus' : ''}.`;
  }
  return {
    smallestKiB: first.ingest.peakRssKiB,
    largestKiB: last.ingest.peakRssKiB,
    ratio,
    flat,
    heapCapMiB: heapCap || undefined,
    liveBounded,
    sentence,
  };
}

// ---------------------------------------------------------------------------------------------------------

// Every wall time includes starting node; measured on its own (median of 3) so small corpora can be read.
const startup = await medianRun(3, () =>
  runNode(['-e', ''], join(tmpdir(), `replay-bench-startup-${process.pid}.json`)),
);

const results = [];
for (const megabytes of sizes) {
  const c = { ...corpus(megabytes), megabytes };
  warm(c.root);
  log(`measuring ${megabytes} MB${runs > 1 ? ` (median of ${runs} runs)` : ''}:`);
  const m = await measure(c);
  const r = row(c, m);
  if (m.ingest.code !== 0)
    log(`  ingest exited with ${m.ingest.code}; stderr:\n${m.ingest.stderr.slice(0, 2000)}`);
  results.push(r);
}
const memory = memoryVerdict(results);
const machine = {
  cpus: cpus().length,
  cpuModel: cpus()[0]?.model,
  memoryGiB: Number((totalmem() / 1024 ** 3).toFixed(1)),
  node: process.version,
  platform: `${platform()} ${release()}`,
};

if (values.json) {
  process.stdout.write(
    `${JSON.stringify({ machine, seed: values.seed, runs, nodeStartupSeconds: startup.seconds, results, memory }, null, 2)}\n`,
  );
} else {
  process.stdout.write(
    `replay-history ingest benchmark — ${machine.cpus} CPUs (${machine.cpuModel}), node ${machine.node}, seed ${values.seed}` +
      `${runs > 1 ? `, median of ${runs} runs` : ''}\nMB = 10^6 bytes, MiB = 2^20 bytes\n\n${render(results, memory)}\n`,
  );
}
