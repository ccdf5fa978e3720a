#!/usr/bin/env node
// The floor for ingest: read every line of every .jsonl file under a directory and JSON.parse it, nothing
// else. Streams line by line in 1 MiB chunks (as the CLI's reader does), so memory stays at one chunk plus
// the current line. node bench/ingest/baseline.mjs <dir>; result JSON goes to the file BENCH_RSS_FILE names.

import { closeSync, openSync, readdirSync, readSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const root = process.argv[2];
const out = process.env.BENCH_RSS_FILE;
if (!root || !out) {
  process.stderr.write('usage: BENCH_RSS_FILE=FILE node bench/ingest/baseline.mjs <dir>\n');
  process.exit(2);
}

function* walk(dir) {
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    const stat = statSync(path);
    if (stat.isDirectory()) yield* walk(path);
    else if (name.endsWith('.jsonl')) yield path;
  }
}

const chunkSize = 1024 * 1024;
const decoder = new TextDecoder('utf-8');
const buffer = Buffer.allocUnsafe(chunkSize);
let files = 0;
let bytes = 0;
let lines = 0;
let typed = 0;

function parse(bytesOfLine) {
  if (bytesOfLine.length === 0) return;
  const value = JSON.parse(decoder.decode(bytesOfLine));
  lines++;
  // Touch the result so the parse cannot be thought dead.
  if (typeof value.type === 'string') typed++;
}

const started = performance.now();
for (const file of walk(root)) {
  files++;
  const fd = openSync(file, 'r');
  let pieces = [];
  let pending = 0;
  try {
    for (;;) {
      const read = readSync(fd, buffer, 0, chunkSize, null);
      if (read === 0) break;
      bytes += read;
      let from = 0;
      for (;;) {
        const newline = buffer.indexOf(10, from);
        if (newline === -1 || newline >= read) {
          // The line goes on in the next chunk: keep a copy of this piece (the buffer is reused).
          if (from < read) {
            pieces.push(Buffer.from(buffer.subarray(from, read)));
            pending += read - from;
          }
          break;
        }
        if (pending === 0) parse(buffer.subarray(from, newline));
        else {
          pieces.push(buffer.subarray(from, newline));
          parse(Buffer.concat(pieces, pending + newline - from));
          pieces = [];
          pending = 0;
        }
        from = newline + 1;
      }
    }
    if (pending > 0) parse(Buffer.concat(pieces, pending));
  } finally {
    closeSync(fd);
  }
}
const seconds = (performance.now() - started) / 1000;

const usage = process.resourceUsage();
writeFileSync(
  out,
  JSON.stringify({
    files,
    bytes,
    lines,
    typed,
    seconds,
    maxRSS: usage.maxRSS,
    userCPUTime: usage.userCPUTime,
    systemCPUTime: usage.systemCPUTime,
  }),
);
