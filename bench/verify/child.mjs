#!/usr/bin/env node
// One measured run of the side-effect checker, for bench/verify/run.mjs. Loads the built checker
// (dist/verify/check.js), starts it on one root, optionally changes the files listed in a file (between start
// and finish, as a command under `verify` would), finishes, and prints its own figures as one JSON line. Run it
// through bench/ingest/measure.mjs, which writes the process's peak RSS and CPU time to BENCH_RSS_FILE:
//
//   node bench/ingest/measure.mjs bench/verify/child.mjs --root DIR --cache-dir DIR [--change-list FILE] [--no-watcher]
//   node bench/ingest/measure.mjs bench/verify/child.mjs --load-only      (load the modules, nothing else)
//
// @parcel/watcher is imported before the checker starts, and timed on its own: the checker imports it lazily
// inside its watcher setup, so without this the setup time would include loading the native module.

import { appendFileSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const MiB = 1024 * 1024;
const { values } = parseArgs({
  options: {
    root: { type: 'string' },
    'cache-dir': { type: 'string' },
    'change-list': { type: 'string' },
    'load-only': { type: 'boolean', default: false },
    'no-watcher': { type: 'boolean', default: false },
  },
});
if (!values['load-only'] && (!values.root || !values['cache-dir'])) {
  process.stderr.write(
    'usage: node bench/ingest/measure.mjs bench/verify/child.mjs --root DIR --cache-dir DIR [--change-list FILE]\n',
  );
  process.exit(2);
}

const rssMiB = () => process.memoryUsage.rss() / MiB;
const out = {};
let t = performance.now();
const { Checker } = await import('../../dist/verify/check.js');
out.loadCheckerMs = performance.now() - t;
t = performance.now();
await import('@parcel/watcher');
out.loadWatcherMs = performance.now() - t;
out.rssLoadedMiB = rssMiB();

if (!values['load-only']) {
  const changeList = values['change-list']
    ? readFileSync(values['change-list'], 'utf8').split('\n').filter(Boolean)
    : [];
  t = performance.now();
  const checker = await Checker.start({
    roots: [values.root],
    cacheDir: values['cache-dir'],
    ...(values['no-watcher'] ? { watch: false } : {}),
  });
  out.startMs = performance.now() - t;
  out.rssStartedMiB = rssMiB();

  t = performance.now();
  for (const path of changeList) appendFileSync(path, '// changed by the verify benchmark\n');
  out.changed = changeList.length;
  out.changeMs = performance.now() - t;

  t = performance.now();
  const report = await checker.finish();
  out.finishMs = performance.now() - t;
  out.rssFinishedMiB = rssMiB();

  out.manifest = report.manifest;
  out.watcher = report.watcher;
  out.clean = report.clean;
  out.changes = report.changes.length;
  out.changeKinds = {};
  for (const change of report.changes) out.changeKinds[change.kind] = (out.changeKinds[change.kind] ?? 0) + 1;
  out.gaps = report.gaps.length;
}
process.stdout.write(`${JSON.stringify(out)}\n`);
