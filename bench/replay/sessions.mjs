#!/usr/bin/env node
// Builds the replay benchmark's sessions from the ingest benchmark's generator: many short Claude Code
// sessions, each the beginning of a generated transcript, cut after a seeded number of model turns.
//
// `generate()` writes heavy-tailed sessions (median 250 KB, up to 16 MB, plus a 20 MB marathon). Replaying a
// session asks every turn with its whole context, so the pairs it writes grow with the square of its length;
// a thousand such sessions would take hours. Here each generated main transcript is cut right before the
// model response that would make it longer than K turns (K log-normal, median 6, from 1 to 40), and
// also before any line over 512 KB (the generator's 1–5 MB tool results, one per corpus at least), so every
// session is a real transcript that simply ended early. Sub-agents are left out, and so are the
// `agent_progress` lines that mirror them (the ingest would rebuild them as sessions): one file is one
// session in the store.
//
// Module: `buildSessions({ dir, counts: [100, 1000], seed })` writes `<dir>/part-0/` with the first counts[0]
// sessions, `<dir>/part-1/` with the next counts[1] − counts[0], and so on, so ingesting parts 0..i gives a
// store with counts[i] sessions, each a prefix of the next.
// CLI:    node bench/replay/sessions.mjs --dir /tmp/sessions --counts 100,1000 [--seed 1]

import {
  closeSync,
  fsyncSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { generate } from '../ingest/generate.mjs';

/** Generated per round; the sessions of a round are used in (slug, file name) order. */
const chunkMegabytes = 40;
/** Lines longer than this end a session before the response that led to them. */
const hugeLine = 512 * 1024;
const turnsMedian = 6;
const turnsSigma = 0.9;
const turnsMax = 40;

/** mulberry32 seeded through a string hash (the same construction as generate.mjs). */
function rngFor(text) {
  let h = 1779033703 ^ text.length;
  for (let i = 0; i < text.length; i++) {
    h = Math.imul(h ^ text.charCodeAt(i), 3432918353);
    h = (h << 13) | (h >>> 19);
  }
  let state = (h ^ (h >>> 16)) >>> 0 || 1;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function turnsWanted(random) {
  const normal = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  return Math.max(1, Math.min(turnsMax, Math.round(turnsMedian * Math.exp(turnsSigma * normal))));
}

/**
 * The first `wanted` model responses of a transcript and what follows them up to the next response; returns
 * the kept lines and how many responses they hold (fewer if the transcript is shorter or a huge line came
 * first).
 */
export function cut(text, wanted) {
  const kept = [];
  let responses = 0;
  let current;
  let responseStart = 0;
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (line.length > hugeLine) {
      kept.length = responseStart;
      responses = Math.max(0, responses - 1);
      break;
    }
    const value = JSON.parse(line);
    if (value.type === 'progress' && value.data?.type === 'agent_progress') continue;
    if (value.type === 'assistant' && value.message?.id !== current) {
      if (responses === wanted) break;
      responses++;
      current = value.message?.id;
      responseStart = kept.length;
    }
    kept.push(line);
  }
  return { lines: kept, responses };
}

/** Main transcripts of a generated corpus, in a fixed order (sub-agents live one directory further down). */
function mainTranscripts(root) {
  const projects = join(root, 'projects');
  const found = [];
  for (const slug of readdirSync(projects).sort()) {
    for (const name of readdirSync(join(projects, slug)).sort()) {
      if (name.endsWith('.jsonl')) found.push({ slug, name, path: join(projects, slug, name) });
    }
  }
  return found;
}

export function buildSessions({ dir, counts, seed = 1 }) {
  const root = resolve(dir);
  const sorted = [...counts].sort((a, b) => a - b);
  const total = sorted[sorted.length - 1];
  const stats = { sessions: 0, responses: 0, bytes: 0, lines: 0, generatedBytes: 0, rounds: 0, skipped: 0 };
  const parts = sorted.map(() => ({ sessions: 0, responses: 0, bytes: 0 }));
  for (let round = 0; stats.sessions < total; round++) {
    const scratch = mkdtempSync(join(tmpdir(), 'replay-bench-gen-'));
    try {
      const generated = generate({
        dir: scratch,
        megabytes: chunkMegabytes,
        seed: `replay/${seed}/${round}`,
      });
      stats.generatedBytes += generated.bytes;
      stats.rounds++;
      for (const transcript of mainTranscripts(scratch)) {
        if (stats.sessions >= total) break;
        const random = rngFor(`replay/${seed}/${round}/${transcript.name}`);
        const { lines, responses } = cut(readFileSync(transcript.path, 'utf8'), turnsWanted(random));
        if (responses === 0) {
          stats.skipped++;
          continue;
        }
        const part = sorted.findIndex((n) => stats.sessions < n);
        const target = join(root, `part-${part}`, 'projects', transcript.slug);
        mkdirSync(target, { recursive: true });
        const body = `${lines.join('\n')}\n`;
        // On disk before anything is timed (write-back would otherwise overlap the first measurement).
        const fd = openSync(join(target, transcript.name), 'w');
        writeSync(fd, body);
        fsyncSync(fd);
        closeSync(fd);
        const bytes = Buffer.byteLength(body);
        stats.sessions++;
        stats.responses += responses;
        stats.bytes += bytes;
        stats.lines += lines.length;
        parts[part].sessions++;
        parts[part].responses += responses;
        parts[part].bytes += bytes;
      }
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  }
  return { ...stats, parts: parts.map((p, i) => ({ ...p, upTo: sorted[i] })) };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      dir: { type: 'string' },
      counts: { type: 'string', default: '100,1000' },
      seed: { type: 'string', default: '1' },
    },
  });
  if (!values.dir) {
    process.stderr.write('usage: node bench/replay/sessions.mjs --dir DIR [--counts 100,1000] [--seed 1]\n');
    process.exit(2);
  }
  const started = performance.now();
  const result = buildSessions({
    dir: values.dir,
    counts: values.counts.split(',').map(Number),
    seed: values.seed,
  });
  result.seconds = Number(((performance.now() - started) / 1000).toFixed(2));
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}
