#!/usr/bin/env node
// Ingest benchmark: for each agent's log format and each corpus size, how fast `replay-history ingest` reads a
// realistic corpus compared with just reading and JSON.parse-ing the same records, how much memory it takes, how
// fast a re-run over unchanged input is, and how big the store gets. Prints figures only; it asserts no timings.
//
//   npm run bench:ingest                       (builds first; Claude Code, sizes 50, 100, 200 MB)
//   node bench/ingest/run.mjs --agent claude-code|codex|gemini|qwen|opencode|all --sizes 10,50 [--seed 1] [--runs 3]
//                             [--heap-cap 48] [--json]
//
// Every format goes through the same measuring path; what differs (generator, where the corpus root is, which
// baseline, labels, the expected counts and the checks only one format has) is a small profile below.
// Corpora are cached in bench/.data/<agent>-<MB>mb-seed<seed>/ (git-ignored) and regenerated only when missing
// or when the size, the seed or that agent's generator changed. Every child is a fresh `node` process; temp dbs
// are deleted.

import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { cpus, platform, release, tmpdir, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
// Already a dependency of the CLI: used read-only to count what the store holds after the ingest.
import Database from 'better-sqlite3';
import { cpuSeconds, dbBytes, median, removeDb, runNode, table } from '../children.mjs';
import { withReadOnly } from './baseline-sqlite.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..', '..');
const dataDir = join(repo, 'bench', '.data');
const cli = join(repo, 'dist', 'cli', 'main.js');
const MB = 1e6;
/** Peak RSS at the largest size within this factor of the smallest counts as flat. */
const flatFactor = 1.25;

// ---------------------------------------------------------------------------------------------------------
// Per-agent profiles: only what differs between the formats. `generator` writes the corpus into `target(dir)`
// and returns its counts (its source is the cache key); `root(dir)` is the path both the baseline and the ingest
// are given; `records` is what the baseline and the ingest count (the CLI's `lines`); `expected*` say which of the
// generator's counts the ingest must reproduce; `checks` are the ones that make sense for that format only.

const claudeCode = {
  title: 'Claude Code (--agent claude-code): projects/<slug>/*.jsonl; baseline: read + JSON.parse every line',
  generator: 'generate.mjs',
  baseline: 'baseline.mjs',
  target: (dir) => dir,
  root: (dir) => join(dir, 'projects'),
  bytesLabel: 'transcript bytes',
  units: 'files',
  unitsLabel: '.jsonl files',
  records: 'lines',
  expectedRecords: (c) => c.lines,
  largestLabel: 'largest file',
  sessionsLabel: 'sessions main/sub/compact',
  sessionsCell: (c) => `${c.sessions.main}/${c.sessions.subagent}/${c.sessions.compaction}`,
  // One session per transcript file, sub-agent and compaction side files included.
  expectedSessions: (c) => c.sessions.main + c.sessions.subagent + c.sessions.compaction,
  sessionsWhat: 'transcript files',
  toolUsesWhat: 'tool_use blocks written',
  checks(c, summary, stored) {
    const problems = [];
    if (summary.files.ignored !== c.sidecars)
      problems.push(`files ignored ${summary.files.ignored} ≠ ${c.sidecars} sub-agent .meta.json sidecars`);
    if (stored?.mirrors) problems.push(`${stored.mirrors} session(s) left as agent_progress mirrors`);
    return problems;
  },
};

const profiles = {
  'claude-code': claudeCode,
  // The same corpus with Claude Code 2.1.3xx's request records in every transcript (generate.mjs `requests`):
  // run with claude-code in one run (--agent claude-code,claude-code-requests) to see what reading them costs.
  'claude-code-requests': {
    ...claudeCode,
    title:
      'Claude Code with request records (--agent claude-code-requests): api-request-shape/-blob/api-request lines in every transcript',
    options: { requests: true },
  },
  codex: {
    title:
      'Codex CLI (--agent codex): sessions/YYYY/MM/DD/rollout-*.jsonl; baseline: read + JSON.parse every line',
    generator: 'generate-codex.mjs',
    baseline: 'baseline.mjs',
    target: (dir) => dir,
    root: (dir) => join(dir, 'sessions'),
    bytesLabel: 'rollout bytes',
    units: 'files',
    unitsLabel: 'rollout files',
    records: 'lines',
    expectedRecords: (c) => c.lines,
    largestLabel: 'largest file',
    sessionsLabel: 'sessions main/sub (with copied history)',
    sessionsCell: (c) => `${c.sessions.main}/${c.sessions.subagent} (${c.copiedHistories})`,
    // One session per rollout; a sub-agent's copy of its parent's history is not a session of its own.
    expectedSessions: (c) => c.sessions.main + c.sessions.subagent,
    sessionsWhat: 'rollout files',
    toolUsesWhat: 'calls written (a copied history counted once)',
    // The generator now and then writes tool-call arguments that are not JSON, as models do: the ingest keeps
    // them raw and says so in a note. Any other note is unexpected.
    expectedNote: /arguments are not valid JSON, kept as the raw string/,
    noteHint: 'the generator writes such arguments on purpose',
    checks(c, _summary, stored) {
      // Each interrupted turn leaves its last call without an output; nothing else does.
      if (stored && stored.unanswered !== c.interrupted)
        return [
          `store holds ${stored.unanswered} unanswered tool calls ≠ ${c.interrupted} interrupted turns written`,
        ];
      return [];
    },
  },
  gemini: {
    title:
      'Gemini CLI (--agent gemini): .gemini/tmp/<slug>/chats/session-*.jsonl and sub-agents; baseline: read + JSON.parse every line',
    generator: 'generate-gemini.mjs',
    baseline: 'baseline.mjs',
    target: (dir) => dir,
    root: (dir) => join(dir, '.gemini', 'tmp'),
    bytesLabel: 'log bytes',
    units: 'files',
    unitsLabel: '.jsonl files',
    records: 'lines',
    expectedRecords: (c) => c.lines,
    largestLabel: 'largest file',
    sessionsLabel: 'sessions main/sub (resume stubs)',
    sessionsCell: (c) => `${c.sessions.main}/${c.sessions.subagent} (${c.sessions.stubs})`,
    // A resume's stub file (its header and session context) holds no session of its own.
    expectedSessions: (c) => c.sessions.main + c.sessions.subagent,
    sessionsWhat: 'session and sub-agent logs',
    toolUsesWhat: 'calls written (a resume or compression copy counted once)',
    expectedNote: /no conversation in the file \(only its metadata and session context: a resume left it\)/,
    noteHint: 'one per resume stub the generator writes',
    checks(c, summary, stored) {
      const problems = [];
      // The only other files are the projects' .project_root markers.
      if (summary.files.ignored !== c.projects)
        problems.push(`files ignored ${summary.files.ignored} ≠ ${c.projects} .project_root files`);
      if (stored && stored.messages !== c.messages)
        problems.push(`store holds ${stored.messages} messages ≠ ${c.messages} the generator counted`);
      if (stored?.unanswered) problems.push(`store holds ${stored.unanswered} unanswered tool calls ≠ 0`);
      return problems;
    },
  },
  qwen: {
    title:
      'Qwen Code (--agent qwen): .qwen/projects/<slug>/chats/<session>.jsonl; baseline: read + JSON.parse every line',
    generator: 'generate-qwen.mjs',
    baseline: 'baseline.mjs',
    target: (dir) => dir,
    root: (dir) => join(dir, '.qwen', 'projects'),
    bytesLabel: 'session bytes',
    units: 'files',
    unitsLabel: '.jsonl files',
    records: 'lines',
    expectedRecords: (c) => c.lines,
    largestLabel: 'largest file',
    sessionsLabel: 'sessions (compressions)',
    sessionsCell: (c) => `${c.sessions.main} (${c.compressions})`,
    expectedSessions: (c) => c.sessions.main,
    sessionsWhat: 'session files',
    toolUsesWhat: 'functionCall parts written',
    // Compressions' summarizer and the memory extractor are side requests: one note per file that has them.
    expectedNote: /side request\(s\) are not turns/,
    noteHint: 'the generator writes memory-extractor and summarizer requests on purpose',
    checks(c, _summary, stored) {
      const problems = [];
      if (stored && stored.messages !== c.messages)
        problems.push(`store holds ${stored.messages} messages ≠ ${c.messages} the generator counted`);
      if (stored?.unanswered) problems.push(`store holds ${stored.unanswered} unanswered tool calls ≠ 0`);
      return problems;
    },
  },
  opencode: {
    title:
      'opencode (--agent opencode): one opencode.db, V1 tables; baseline: read + JSON.parse the JSON columns of session, message, part',
    generator: 'generate-opencode.mjs',
    baseline: 'baseline-sqlite.mjs',
    // The data dir, as opencode keeps it (~/.local/share/opencode): the manifest stays outside what is ingested.
    target: (dir) => join(dir, 'opencode'),
    root: (dir) => join(dir, 'opencode'),
    bytesLabel: 'opencode.db bytes',
    units: 'databases',
    unitsLabel: 'databases',
    records: 'rows',
    // The generator counts message and part rows; the adapter also reads one session row per session.
    expectedRecords: (c) => c.rows + c.sessions,
    largestLabel: 'largest session (JSON)',
    sessionsLabel: 'sessions main/sub',
    sessionsCell: (c) => `${c.mainSessions}/${c.sessions - c.mainSessions}`,
    expectedSessions: (c) => c.sessions,
    sessionsWhat: 'sessions written',
    toolUsesWhat: 'tool parts written',
    /**
     * What the generator does not report but the figures need: the whole database is one file that grows with
     * the corpus, while the adapter holds one session at a time, so the largest session is what bounds memory.
     */
    describe(root) {
      return withReadOnly(join(root, 'opencode.db'), (db) =>
        db
          .prepare(
            `SELECT (SELECT count(*) FROM session WHERE parent_id IS NULL) AS mainSessions,
               (SELECT max(bytes) FROM (
                  SELECT session_id, sum(length(CAST(data AS BLOB))) AS bytes
                  FROM (SELECT session_id, data FROM message UNION ALL SELECT session_id, data FROM part)
                  GROUP BY session_id)) AS largestFile`,
          )
          .get(),
      );
    },
  },
};
for (const [agent, p] of Object.entries(profiles)) p.agent = agent;

const { values } = parseArgs({
  options: {
    agent: { type: 'string', default: 'claude-code' },
    sizes: { type: 'string', default: '50,100,200' },
    seed: { type: 'string', default: '1' },
    runs: { type: 'string', default: '3' },
    'heap-cap': { type: 'string', default: '48' },
    json: { type: 'boolean', default: false },
  },
});
const agents = values.agent === 'all' ? Object.keys(profiles) : values.agent.split(',').map((a) => a.trim());
const sizes = values.sizes.split(',').map((s) => Number(s.trim()));
const runs = Math.max(1, Number(values.runs));
/** MiB of V8 old space for the capped-heap run (0 = skip it). */
const heapCap = Number(values['heap-cap']);
if (!agents.every((agent) => agent in profiles)) {
  process.stderr.write(
    `--agent must be one of ${Object.keys(profiles).join(', ')} or all: ${values.agent}\n`,
  );
  process.exit(2);
}
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

/**
 * A generator's own source, and the shared modules it draws from, are part of the cache key: editing any of them
 * regenerates that agent's corpora.
 */
const sourceHash = (file) =>
  createHash('sha256')
    .update(readFileSync(join(here, file)))
    .update(readFileSync(join(here, 'random.mjs')))
    .update(readFileSync(join(here, 'jsonl-writer.mjs')))
    .digest('hex')
    .slice(0, 16);

async function corpus(p, megabytes) {
  const dir = join(dataDir, `${p.agent}-${megabytes}mb-seed${values.seed}`);
  const manifestPath = join(dir, 'manifest.json');
  // The same fields as before agents were added, so the cached Claude Code corpora stay valid.
  const params = {
    megabytes,
    seed: values.seed,
    generator: sourceHash(p.generator),
    ...(p.options ? { options: p.options } : {}),
  };
  const name = `${p.agent} ${megabytes} MB`;
  if (existsSync(manifestPath)) {
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
    if (JSON.stringify(manifest.params) === JSON.stringify(params)) {
      log(`corpus ${name}: cached in ${dir}`);
      return { dir, root: p.root(dir), ...manifest.result };
    }
  }
  rmSync(dir, { recursive: true, force: true });
  log(`corpus ${name}: generating in ${dir} ...`);
  const started = performance.now();
  // Imported only when needed: a cached corpus costs no generator load.
  const { generate } = await import(`./${p.generator}`);
  const result = generate({ dir: p.target(dir), megabytes, seed: values.seed, ...p.options });
  Object.assign(result, p.describe?.(p.root(dir)));
  log(
    `corpus ${name}: ${result.files} file(s), ${fmtMB(result.bytes)} MB in ${secs(performance.now() - started)} s`,
  );
  // The manifest is written last: an interrupted generation is regenerated next time.
  mkdirSync(dir, { recursive: true });
  writeFileSync(manifestPath, `${JSON.stringify({ params, result }, null, 2)}\n`);
  return { dir, root: p.root(dir), ...result };
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

async function baseline(p, c, scratch) {
  const run = await medianRun(runs, () =>
    runNode([join(here, p.baseline), c.root], join(scratch, 'baseline.json')),
  );
  if (run.code !== 0) throw new Error(`baseline failed (exit ${run.code}):\n${run.stderr}`);
  return run;
}

function ingestArgs(c, db, nodeFlags = []) {
  return [...nodeFlags, join(here, 'measure.mjs'), cli, 'ingest', c.root, '--db', db, '--json'];
}

function summaryOf(run) {
  try {
    return JSON.parse(run.stdout).paths[0];
  } catch {
    return undefined;
  }
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

async function measure(p, c) {
  const scratch = mkdtempSync(join(tmpdir(), 'replay-bench-'));
  try {
    log(`  baseline: read + JSON.parse (${p.baseline}) ...`);
    const base = await baseline(p, c, scratch);
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

/**
 * Counts the generator knows, against what the ingest reported and what the store holds. `problems` are
 * mismatches worth a look; `remarks` are notes the CLI printed that this corpus is expected to cause.
 */
function checks(p, c, m, summary) {
  const problems = [];
  const remarks = [];
  if (m.ingest.code !== 0) problems.push(`ingest exited with ${m.ingest.code}`);
  if (!summary) return { problems: [...problems, 'ingest printed no JSON summary'], remarks };
  const { stored } = m;
  const records = p.expectedRecords(c);
  if (summary.lines !== records)
    problems.push(`${p.records} read ${summary.lines} ≠ ${records} in the corpus`);
  if (m.base.usage.lines !== records)
    problems.push(`baseline parsed ${m.base.usage.lines} ${p.records} ≠ ${records}`);
  if (summary.files.read !== c.files)
    problems.push(`files read ${summary.files.read} ≠ ${c.files} ${p.unitsLabel}`);
  if (summary.skippedLines) problems.push(`${summary.skippedLines} ${p.records} skipped`);
  if (summary.warnings.length)
    problems.push(`${summary.warnings.length} warning(s), e.g. ${summary.warnings[0].message}`);
  if (!stored) problems.push('no store to count');
  else {
    const sessions = p.expectedSessions(c);
    if (stored.sessions !== sessions)
      problems.push(`store holds ${stored.sessions} sessions ≠ ${sessions} ${p.sessionsWhat}`);
    if (stored.toolCalls !== c.toolUses)
      problems.push(`store holds ${stored.toolCalls} tool calls ≠ ${c.toolUses} ${p.toolUsesWhat}`);
    // The summary is meant to count what was stored (no copy counted twice).
    if (summary.messages !== stored.messages || summary.toolCalls !== stored.toolCalls)
      problems.push(
        `the ingest summary prints ${summary.messages} messages / ${summary.toolCalls} tool calls, the store holds ` +
          `${stored.messages} / ${stored.toolCalls}`,
      );
  }
  problems.push(...(p.checks?.(c, summary, stored) ?? []));
  // Notes are what the CLI found worth saying about input it could read: expected ones are remarks, others not.
  const short = (note) => `"${note.replace(`${c.root}/`, '')}"`;
  const expected = summary.notes.filter((note) => p.expectedNote?.test(note));
  const unexpected = summary.notes.filter((note) => !p.expectedNote?.test(note));
  if (expected.length)
    remarks.push(`the ingest printed ${expected.length} note(s) like ${short(expected[0])}: ${p.noteHint}`);
  if (unexpected.length)
    problems.push(`the ingest printed ${unexpected.length} unexpected note(s), e.g. ${short(unexpected[0])}`);
  const reread = summaryOf(m.again);
  if (!reread) problems.push('re-ingest printed no JSON summary');
  else if (reread.files.read !== 0 || reread.files.unchanged !== c.files)
    problems.push(`re-ingest read ${reread.files.read} file(s) again; ${reread.files.unchanged} unchanged`);
  return { problems, remarks };
}

function row(p, c, m) {
  const summary = summaryOf(m.ingest);
  const reread = summaryOf(m.again);
  const baseMBs = c.bytes / MB / m.base.seconds;
  const ingestMBs = c.bytes / MB / m.ingest.seconds;
  const records = p.expectedRecords(c);
  // What the generator reported, without the paths and the line mix (that is in the manifest).
  const { dir, root, mix, ...corpusCounts } = c;
  return {
    megabytes: c.megabytes,
    corpus: { ...corpusCounts, records },
    baseline: {
      seconds: m.base.seconds,
      mbPerSecond: baseMBs,
      linesPerSecond: records / m.base.seconds,
      peakRssKiB: m.base.medianRssKiB,
      peakRssRunsKiB: m.base.rssRunsKiB,
      cpuSeconds: cpuSeconds(m.base.usage),
    },
    ingest: {
      exitCode: m.ingest.code,
      seconds: m.ingest.seconds,
      mbPerSecond: ingestMBs,
      linesPerSecond: records / m.ingest.seconds,
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
      notes: summary?.notes.length,
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
    checks: checks(p, c, m, summary),
  };
}

function render(p, results, memory) {
  const n = (v, digits = 1) =>
    v.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
  const int = (v) => Math.round(v).toLocaleString('en-US');
  const col = (f) => results.map(f);
  const lines = [
    ['', ...col((r) => `${r.megabytes} MB`)],
    [`corpus: ${p.bytesLabel} (MB)`, ...col((r) => fmtMB(r.corpus.bytes))],
    [
      `corpus: ${p.unitsLabel} / ${p.records}`,
      ...col((r) => `${int(r.corpus.files)} / ${int(r.corpus.records)}`),
    ],
    [`corpus: ${p.largestLabel} (MB)`, ...col((r) => fmtMB(r.corpus.largestFile))],
    [`corpus: ${p.sessionsLabel}`, ...col((r) => p.sessionsCell(r.corpus))],
    ['node start-up, in every wall time (s)', ...col(() => n(startup.seconds, 2))],
    ['baseline: wall time (s)', ...col((r) => n(r.baseline.seconds, 2))],
    ['baseline: MB/s', ...col((r) => n(r.baseline.mbPerSecond))],
    [`baseline: ${p.records}/s`, ...col((r) => int(r.baseline.linesPerSecond))],
    ['baseline: peak RSS, median (MiB)', ...col((r) => mib(r.baseline.peakRssKiB))],
    ['ingest: wall time (s)', ...col((r) => n(r.ingest.seconds, 2))],
    ['ingest: CPU time (s)', ...col((r) => n(r.ingest.cpuSeconds, 2))],
    ['ingest: MB/s', ...col((r) => n(r.ingest.mbPerSecond))],
    [`ingest: ${p.records}/s`, ...col((r) => int(r.ingest.linesPerSecond))],
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
    ['ingest: notes', ...col((r) => String(r.ingest.notes ?? '?'))],
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
      // A run V8 aborts for lack of memory never reaches measure.mjs's exit handler: no figure, rather than 0.
      [
        `ingest, old space ≤ ${heapCap} MiB: RSS (MiB)`,
        ...col((r) => (r.capped.peakRssKiB === undefined ? '?' : mib(r.capped.peakRssKiB))),
      ],
    );
  }
  const out = [p.title, '', table(lines), ''];
  for (const r of results) {
    if (r.checks.problems.length === 0)
      out.push(
        `${r.megabytes} MB: ${p.records}, ${p.units}, stored sessions and tool calls match the generator.`,
      );
    for (const note of r.checks.problems) out.push(`${r.megabytes} MB: CHECK: ${note}`);
    for (const note of r.checks.remarks) out.push(`${r.megabytes} MB: note: ${note}.`);
  }
  out.push('', memory.sentence);
  return out.join('\n');
}

function memoryVerdict(p, results) {
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
        ` (flat = within ×${flatFactor}; ${p.largestLabel} ${fmtMB(first.corpus.largestFile)} MB → ${fmtMB(last.corpus.largestFile)} MB).`;
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

const reports = [];
for (const agent of agents) {
  const p = profiles[agent];
  const results = [];
  for (const megabytes of sizes) {
    const c = { ...(await corpus(p, megabytes)), megabytes };
    warm(c.root);
    log(`measuring ${agent} ${megabytes} MB${runs > 1 ? ` (median of ${runs} runs)` : ''}:`);
    const m = await measure(p, c);
    if (m.ingest.code !== 0)
      log(`  ingest exited with ${m.ingest.code}; stderr:\n${m.ingest.stderr.slice(0, 2000)}`);
    results.push(row(p, c, m));
  }
  reports.push({ agent, results, memory: memoryVerdict(p, results) });
}
const machine = {
  cpus: cpus().length,
  cpuModel: cpus()[0]?.model,
  memoryGiB: Number((totalmem() / 1024 ** 3).toFixed(1)),
  node: process.version,
  platform: `${platform()} ${release()}`,
};

if (values.json) {
  process.stdout.write(
    `${JSON.stringify({ machine, seed: values.seed, runs, nodeStartupSeconds: startup.seconds, agents: reports }, null, 2)}\n`,
  );
} else {
  const sections = reports.map((r) => render(profiles[r.agent], r.results, r.memory));
  process.stdout.write(
    `replay-history ingest benchmark — ${machine.cpus} CPUs (${machine.cpuModel}), node ${machine.node}, seed ${values.seed}` +
      `${runs > 1 ? `, median of ${runs} runs` : ''}\nMB = 10^6 bytes, MiB = 2^20 bytes\n\n${sections.join('\n\n\n')}\n`,
  );
}
