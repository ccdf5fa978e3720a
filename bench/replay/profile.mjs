#!/usr/bin/env node
// Where a replay's CPU time goes: sums a V8 CPU profile (`node --cpu-prof`) by what the CLI does per turn.
//
//   node --cpu-prof --cpu-prof-dir=/tmp/prof dist/cli/main.js replay --all ... --json
//   node bench/replay/profile.mjs /tmp/prof/CPU.*.cpuprofile --turns 634
//
// Each sample goes to the first category found walking from the sampled function up its stack (so a sample
// in JSON.stringify called by the pairs writer counts as the pairs writer). The categories are matched by
// function and file names of this version of the CLI, the openai SDK and Node's undici; what matches none is
// "other" (promise plumbing, the replay command itself, start-up).

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const is = (name, file) => (frame) => frame.functionName === name && frame.url.endsWith(file);

/** [label, does this stack frame belong to it]. Order matters only between a frame's own matches. */
export const categories = [
  ['GC', (f) => f.functionName === '(garbage collector)'],
  ['idle (waiting for the server)', (f) => f.functionName === '(idle)'],
  ['record: request digest (canonicalJson + sha256)', (f) => f.url.endsWith('dist/model/canonical-json.js')],
  ['record: pairs line (JSON.stringify, Buffer, writeSync)', is('write', 'dist/replay/pairs.js')],
  ['record: saveTurn (SQLite)', (f) => f.functionName === 'saveTurn'],
  ['record: compareCalls', (f) => f.functionName === 'compareCalls'],
  ['record: the rest', is('record', 'dist/replay/engine.js')],
  ['jobs: load session, build contexts and tools', is('jobs', 'dist/replay/engine.js')],
  ['abort listeners (addEventListener)', (f) => f.functionName === 'addEventListener'],
  [
    'SDK: request body JSON.stringify',
    (f) => f.functionName === 'FallbackEncoder' || f.functionName === 'buildBody',
  ],
  ['undici fetch and web streams (as in the bare client)', (f) => /undici|webstreams/.test(f.url)],
  ['SDK: response parsing', (f) => f.url.includes('openai/internal/parse')],
  ['SDK: the rest (headers, URL, logging, retries)', (f) => f.url.includes('node_modules/openai/')],
  ['module loading', (f) => /modules\/(esm|cjs)|realm/.test(f.url) || f.functionName.startsWith('compile')],
  ['socket writes', (f) => f.functionName === 'writev' || f.functionName === 'writeBuffer'],
];

export function summarize(path, turns) {
  const profile = JSON.parse(readFileSync(path, 'utf8'));
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const cache = new Map();
  const categoryOf = (id) => {
    if (cache.has(id)) return cache.get(id);
    const match = categories.find(([, test]) => test(nodes.get(id).callFrame));
    const found = match ? match[0] : parent.has(id) ? categoryOf(parent.get(id)) : 'other';
    cache.set(id, found);
    return found;
  };
  const ms = new Map();
  let total = 0;
  for (const [i, id] of profile.samples.entries()) {
    const delta = (profile.timeDeltas[i] ?? 0) / 1000;
    total += delta;
    const category = categoryOf(id);
    ms.set(category, (ms.get(category) ?? 0) + delta);
  }
  const rows = [...ms]
    .sort((a, b) => b[1] - a[1])
    .map(([category, spent]) => ({ category, ms: spent, msPerTurn: spent / turns, share: spent / total }));
  return { totalMs: total, turns, rows };
}

export function format(summary) {
  const width = Math.max(...summary.rows.map((r) => r.category.length));
  return [
    `${'CPU profile'.padEnd(width)}   total ms   ms/turn   share`,
    ...summary.rows.map(
      (r) =>
        `${r.category.padEnd(width)}   ${r.ms.toFixed(0).padStart(8)}   ${r.msPerTurn.toFixed(3).padStart(7)}   ${(100 * r.share).toFixed(1).padStart(4)} %`,
    ),
    `${'all'.padEnd(width)}   ${summary.totalMs.toFixed(0).padStart(8)}   ${(summary.totalMs / summary.turns).toFixed(3).padStart(7)}   100.0 %`,
  ].join('\n');
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { turns: { type: 'string' }, json: { type: 'boolean', default: false } },
  });
  if (positionals.length !== 1 || !(Number(values.turns) > 0)) {
    process.stderr.write('usage: node bench/replay/profile.mjs PROFILE.cpuprofile --turns N [--json]\n');
    process.exit(2);
  }
  const summary = summarize(positionals[0], Number(values.turns));
  process.stdout.write(`${values.json ? JSON.stringify(summary, null, 2) : format(summary)}\n`);
}
