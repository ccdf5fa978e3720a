#!/usr/bin/env node
// Ingest of a log that grew: the cost of re-ingesting a Claude Code transcript of about 20 MB after one line was
// appended to it (what a live session does between two ingests), against its first ingest in the same run
// (issue 21's target: < 5%). Prints figures only; it asserts no timings.
//
//   npm run build && node bench/ingest/grow.mjs [--megabytes 20] [--runs 3] [--json]
//
// The transcript is the largest main transcript of a generated corpus (bench/ingest/generate.mjs, grown until one
// file reaches the size asked for), copied alone into a scratch projects/ tree. Each run: a fresh store, the first
// ingest, one user line appended (chained to the file's last line, as Claude Code writes a new prompt), the
// re-ingest. Every ingest is a fresh `node` child; the scratch tree and stores are deleted.

import {
  appendFileSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
} from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { cpuSeconds, median, removeDb, runNode, table } from '../children.mjs';
import { generate } from './generate.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..', '..');
const cli = join(repo, 'dist', 'cli', 'main.js');
const MB = 1e6;

const { values } = parseArgs({
  options: {
    megabytes: { type: 'string', default: '20' },
    runs: { type: 'string', default: '3' },
    json: { type: 'boolean', default: false },
  },
});
const want = Number(values.megabytes) * MB;
const runs = Number(values.runs);
const log = (text) => process.stderr.write(`${text}\n`);

function mainTranscripts(dir) {
  const found = [];
  const walk = (at) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory() && entry.name !== 'subagents') walk(path);
      else if (entry.isFile() && entry.name.endsWith('.jsonl'))
        found.push({ path, size: statSync(path).size });
    }
  };
  walk(dir);
  return found.sort((a, b) => b.size - a.size);
}

/** The largest main transcript of a corpus grown until one reaches `want` bytes. */
function transcript(scratch) {
  for (let megabytes = Math.ceil((want / MB) * 2); ; megabytes *= 2) {
    const dir = join(scratch, `corpus-${megabytes}`);
    generate({ dir, megabytes });
    const [largest] = mainTranscripts(join(dir, 'projects'));
    if (largest && largest.size >= want) return largest;
    rmSync(dir, { recursive: true, force: true });
    if (megabytes > 2000) throw new Error(`no transcript of ${want / MB} MB in a 2 GB corpus`);
  }
}

/** A new prompt chained to the file's last line with a uuid, as Claude Code appends one. */
function nextLine(file) {
  const text = readFileSync(file, 'utf8');
  const lines = text.split('\n').filter(Boolean);
  for (let i = lines.length - 1; i >= 0; i--) {
    const last = JSON.parse(lines[i]);
    if (typeof last.uuid !== 'string' || last.isSidechain) continue;
    const timestamp = new Date(Date.parse(last.timestamp) + 60_000).toISOString();
    return `${JSON.stringify({
      parentUuid: last.uuid,
      isSidechain: false,
      type: 'user',
      message: { role: 'user', content: 'one more thing: run the tests again' },
      uuid: '0b5ad7e0-0000-4000-8000-000000000001',
      timestamp,
      cwd: last.cwd,
      sessionId: last.sessionId,
      version: last.version,
    })}\n`;
  }
  throw new Error(`${file}: no line with a uuid`);
}

async function ingest(root, db, name, scratch) {
  const run = await runNode(
    [join(here, 'measure.mjs'), cli, 'ingest', root, '--db', db, '--json'],
    join(scratch, name),
  );
  if (run.code !== 0) throw new Error(`ingest failed (exit ${run.code}):\n${run.stderr}`);
  return { seconds: run.seconds, cpu: cpuSeconds(run.usage), summary: JSON.parse(run.stdout).paths[0] };
}

const scratch = mkdtempSync(join(tmpdir(), 'bench-grow-'));
try {
  log(`generating a corpus with a main transcript of at least ${want / MB} MB ...`);
  const source = transcript(scratch);
  const line = nextLine(source.path);
  const first = [];
  const grown = [];
  const loads = [loadavg()[0]];
  for (let i = 0; i < runs; i++) {
    const root = join(scratch, `run-${i}`, 'projects');
    const file = join(root, basename(dirname(source.path)), basename(source.path));
    mkdirSync(dirname(file), { recursive: true });
    copyFileSync(source.path, file);
    const db = join(scratch, `run-${i}.db`);
    log(`run ${i + 1}/${runs}: first ingest of ${(source.size / MB).toFixed(1)} MB ...`);
    first.push(await ingest(root, db, 'first.json', scratch));
    appendFileSync(file, line);
    log(`run ${i + 1}/${runs}: re-ingest after one appended line ...`);
    const again = await ingest(root, db, 'grown.json', scratch);
    if (again.summary.files.read !== 1 || again.summary.messages !== 1)
      throw new Error(
        `re-ingest read ${again.summary.files.read} file(s), added ${again.summary.messages} message(s); want 1 and 1`,
      );
    grown.push(again);
    removeDb(db);
    rmSync(join(scratch, `run-${i}`), { recursive: true, force: true });
    loads.push(loadavg()[0]);
  }
  const m = (list, key) => median(list.map((r) => r[key]));
  const figures = {
    bytes: source.size,
    runs,
    load: { min: Math.min(...loads), max: Math.max(...loads) },
    first: { seconds: m(first, 'seconds'), cpu: m(first, 'cpu') },
    grown: { seconds: m(grown, 'seconds'), cpu: m(grown, 'cpu') },
  };
  figures.ratio = {
    wall: figures.grown.seconds / figures.first.seconds,
    cpu: figures.grown.cpu / figures.first.cpu,
  };
  if (values.json) process.stdout.write(`${JSON.stringify(figures, null, 2)}\n`);
  else {
    const pct = (x) => `${(x * 100).toFixed(1)}%`;
    process.stdout.write(
      `ingest of a grown Claude Code transcript (${(source.size / MB).toFixed(1)} MB + one line), median of ${runs}, load ${figures.load.min.toFixed(1)}–${figures.load.max.toFixed(1)}\n\n${table(
        [
          ['', 'wall (s)', 'CPU (s)'],
          ['first ingest', figures.first.seconds.toFixed(2), figures.first.cpu.toFixed(2)],
          ['re-ingest after one line', figures.grown.seconds.toFixed(2), figures.grown.cpu.toFixed(2)],
          ['re-ingest ÷ first (target < 5%)', pct(figures.ratio.wall), pct(figures.ratio.cpu)],
        ],
      )}\n`,
    );
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
