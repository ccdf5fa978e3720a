#!/usr/bin/env node
// Where an export's CPU time goes: sums a V8 CPU profile (`node --cpu-prof`) by what the pipeline does per sample.
//
//   node --cpu-prof --cpu-prof-dir=/tmp/prof dist/cli/main.js export --db STORE --out /tmp/x.jsonl --json
//   node bench/export/profile.mjs /tmp/prof/CPU.*.cpuprofile --samples 10000
//
// Each profile sample goes to the first category found walking from the sampled function up its stack (so time in
// JSON.parse called by the store's toMessage counts as the store, and a regex run by one of our detectors as that
// detector). Categories are matched by the file and function names of this version of dist/ and its
// dependencies; what matches none is "other" (the export command, promise plumbing, start-up).

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const inDist = (path) => (frame) => frame.url.includes(`/dist/${path}`);
const is = (name, path) => (frame) => frame.functionName === name && frame.url.endsWith(`/dist/${path}`);

/** [label, does this stack frame belong to it]. A frame's first match wins. */
export const categories = [
  ['GC', (f) => f.functionName === '(garbage collector)'],
  ['idle (waiting for writes)', (f) => f.functionName === '(idle)'],
  ['token count (gpt-tokenizer, o200k_base)', (f) => f.url.includes('/node_modules/gpt-tokenizer/')],
  ['redact: secretlint preset rules', (f) => f.url.includes('/node_modules/@secretlint/')],
  ['redact: our detectors (rules.js)', inDist('export/rules.js')],
  ['redact: the rest (redact.js, clean.js)', (f) => /\/dist\/export\/(redact|clean)\.js$/.test(f.url)],
  [
    'dedupe digest (canonicalJson + sha256)',
    (f) => inDist('model/canonical-json.js')(f) || f.functionName === 'digest',
  ],
  ['store: load sessions (SQLite, JSON.parse)', inDist('store/')],
  [
    'build samples (turns, build.js, tool catalogue)',
    (f) => /\/dist\/(export\/build|model\/|replay\/)/.test(f.url),
  ],
  ['render (formats/)', inDist('export/formats/')],
  ['row: JSON.stringify, U+2028 escapes (take)', is('take', 'export/run.js')],
  [
    'write (Sink, fs streams)',
    (f) => inDist('export/sink.js')(f) || /internal\/(fs\/streams|streams\/)/.test(f.url),
  ],
  ['module loading', (f) => /modules\/(esm|cjs)|realm/.test(f.url) || f.functionName.startsWith('compile')],
];

/** Profile time by category: {totalMs, rows: [{category, ms, share}]}, largest first. */
export function summarize(path) {
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
    .map(([category, spent]) => ({ category, ms: spent, share: spent / total }));
  return { totalMs: total, rows };
}

export function format(summary, samples) {
  const width = Math.max(...summary.rows.map((r) => r.category.length));
  const line = (label, ms, share) =>
    `${label.padEnd(width)}   ${ms.toFixed(0).padStart(8)}   ${(ms / samples).toFixed(3).padStart(9)}   ${(100 * share).toFixed(1).padStart(5)} %`;
  return [
    `${'CPU profile'.padEnd(width)}   total ms   ms/sample   share`,
    ...summary.rows.map((r) => line(r.category, r.ms, r.share)),
    line('all', summary.totalMs, 1),
  ].join('\n');
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { samples: { type: 'string' }, json: { type: 'boolean', default: false } },
  });
  if (positionals.length !== 1 || !(Number(values.samples) > 0)) {
    process.stderr.write('usage: node bench/export/profile.mjs PROFILE.cpuprofile --samples N [--json]\n');
    process.exit(2);
  }
  const summary = summarize(positionals[0]);
  process.stdout.write(
    `${values.json ? JSON.stringify(summary, null, 2) : format(summary, Number(values.samples))}\n`,
  );
}
