#!/usr/bin/env node
// Runs a program inside this process and records what it cost, for a parent that cannot read a child's
// peak RSS itself: node bench/ingest/measure.mjs <program.js> [args...]
// On exit, writes {maxRSS (KiB), userCPUTime, systemCPUTime (µs), mainThreadCPUTime (µs, Linux only)} as JSON to
// the file named by BENCH_RSS_FILE. The process's CPU time counts every thread (worker threads, V8's collector
// helpers); the main thread's own tells whether it is the one a multi-threaded command waits on.

import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const out = process.env.BENCH_RSS_FILE;
const [program, ...args] = process.argv.slice(2);
if (!out || !program) {
  process.stderr.write('usage: BENCH_RSS_FILE=FILE node bench/ingest/measure.mjs <program.js> [args...]\n');
  process.exit(2);
}

// 'exit' also fires after process.exit() and after an uncaught error, so a failed run still reports.
process.on('exit', () => {
  const usage = process.resourceUsage();
  writeFileSync(
    out,
    JSON.stringify({
      maxRSS: usage.maxRSS,
      userCPUTime: usage.userCPUTime,
      systemCPUTime: usage.systemCPUTime,
      ...mainThread(),
    }),
  );
});

/** The main thread's user + system time from /proc (clock ticks of 10 ms), where there is a /proc. */
function mainThread() {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { mainThreadCPUTime: (Number(fields[11]) + Number(fields[12])) * 10_000 };
  } catch {
    return {};
  }
}

// dist/cli/main.js runs itself on import and reads process.argv: make it look as if it was started directly.
process.argv = [process.argv[0], resolve(program), ...args];
await import(pathToFileURL(resolve(program)).href);
