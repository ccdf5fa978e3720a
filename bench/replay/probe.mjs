#!/usr/bin/env node
// Runs a program in this process (like bench/ingest/measure.mjs) and watches its memory from inside:
//
//   BENCH_PROBE_FILE=FILE node --expose-gc bench/replay/probe.mjs <program.js> [args...]
//
// Every 500 ms it forces a full garbage collection and samples the V8 heap still in use: what the program
// keeps alive, without the garbage V8 has not collected yet (which peak RSS cannot tell apart). Every 100 ms
// it also notes the most V8 had reserved (heapTotal) and the most memory outside its heap (external). And it
// counts `abort` listeners per AbortSignal (added minus removed) and reports the most that one signal held at
// once: a listener that is never removed stays alive, with what it holds, as long as its signal does.
// On exit it writes to FILE: {heapMiB: [samples], heapTotalMaxMiB, externalMaxMiB, maxRSS (KiB), CPU times,
// abortAdded, abortRemoved, abortMostOnOneSignal}.

import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const out = process.env.BENCH_PROBE_FILE;
const [program, ...args] = process.argv.slice(2);
if (!out || !program || typeof globalThis.gc !== 'function') {
  process.stderr.write(
    'usage: BENCH_PROBE_FILE=FILE node --expose-gc bench/replay/probe.mjs <program.js> [args...]\n',
  );
  process.exit(2);
}

// A WeakMap, so that counting keeps no signal alive (each request has its own, which undici leaves listeners on).
const listeners = new WeakMap();
let added = 0;
let removed = 0;
let most = 0;
const { addEventListener, removeEventListener } = EventTarget.prototype;
EventTarget.prototype.addEventListener = function (type, listener, options) {
  if (type === 'abort' && this instanceof AbortSignal) {
    added++;
    const n = (listeners.get(this) ?? 0) + 1;
    listeners.set(this, n);
    most = Math.max(most, n);
  }
  return addEventListener.call(this, type, listener, options);
};
EventTarget.prototype.removeEventListener = function (type, listener, options) {
  if (type === 'abort' && this instanceof AbortSignal && listeners.has(this)) {
    removed++;
    listeners.set(this, listeners.get(this) - 1);
  }
  return removeEventListener.call(this, type, listener, options);
};

const heap = [];
const seen = { rss: 0, heapTotal: 0, external: 0 };
const peek = () => {
  const usage = process.memoryUsage();
  seen.rss = Math.max(seen.rss, usage.rss);
  seen.heapTotal = Math.max(seen.heapTotal, usage.heapTotal);
  seen.external = Math.max(seen.external, usage.external);
};
let ticks = 0;
const sample = () => {
  peek();
  globalThis.gc();
  heap.push(Number((process.memoryUsage().heapUsed / 2 ** 20).toFixed(1)));
};
// Every 100 ms: what V8 has reserved and what lives outside its heap; every fifth time, a full GC first.
const timer = setInterval(() => (++ticks % 5 === 0 ? sample() : peek()), 100);
timer.unref();

process.on('exit', () => {
  sample();
  const usage = process.resourceUsage();
  writeFileSync(
    out,
    JSON.stringify({
      heapMiB: heap,
      heapTotalMaxMiB: Number((seen.heapTotal / 2 ** 20).toFixed(1)),
      externalMaxMiB: Number((seen.external / 2 ** 20).toFixed(1)),
      maxRSS: usage.maxRSS,
      userCPUTime: usage.userCPUTime,
      systemCPUTime: usage.systemCPUTime,
      abortAdded: added,
      abortRemoved: removed,
      abortMostOnOneSignal: most,
    }),
  );
});

process.argv = [process.argv[0], resolve(program), ...args];
await import(pathToFileURL(resolve(program)).href);
