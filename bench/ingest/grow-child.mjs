#!/usr/bin/env node
// One run of grow.mjs inside one process, so that node's start-up and module loading (more than 5% of a
// 0.4 s ingest on their own) are not in the figures: the first ingest of a projects/ tree, then the lines of
// each step appended to the transcript and the re-ingest, each timed from opening the store to closing it.
//
//   node bench/ingest/grow-child.mjs <dist> <projects> <transcript> <db> <steps.json>
//
// steps.json: [{ "name": "...", "lines": "<jsonl text to append>" }, ...]. Prints JSON on stdout:
// { first: {seconds, cpu, summary}, steps: [{name, seconds, cpu, summary}] }.

import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dist, root, transcript, dbPath, stepsFile] = process.argv.slice(2);
const load = (path) => import(pathToFileURL(join(dist, path)).href);
const [{ openDb }, { ingest }] = await Promise.all([load('store/db.js'), load('sources/ingest.js')]);

function timed() {
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  const db = openDb(dbPath, { command: 'ingest' });
  let summary;
  try {
    [summary] = ingest(db, [root]);
  } finally {
    db.close();
  }
  const used = process.cpuUsage(cpu);
  return {
    seconds: Number(process.hrtime.bigint() - start) / 1e9,
    cpu: (used.user + used.system) / 1e6,
    summary,
  };
}

// The first ingest also pays for compiling the code it runs; the steps after it find it compiled, as a second
// ingest in a long-lived process would. Both sides open and close the store.
const first = timed();
const steps = [];
for (const step of JSON.parse(readFileSync(stepsFile, 'utf8'))) {
  appendFileSync(transcript, step.lines);
  steps.push({ name: step.name, ...timed() });
}
process.stdout.write(JSON.stringify({ first, steps }));
