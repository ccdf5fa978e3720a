// The proof that an ingest of a log that grew leaves the store exactly as one full read of the whole log does,
// whatever the reader did with the new bytes (continued from where it stopped, or read the file again).

import { appendFileSync, cpSync, readdirSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { ingest, type PathSummary } from '../../src/sources/ingest.js';
import { tempDir } from './cli.js';
import { tempStore } from './store.js';
import { dumpStore } from './store-dump.js';

/** A fixture tree copied to a scratch directory, so one of its files can be cut and grown in place. */
export interface Scratch {
  dir: string;
  remove: () => void;
}

export function scratchCopy(paths: string[]): Scratch {
  const dir = tempDir('replay-growth-');
  const logs = join(dir.path, 'logs');
  for (const path of paths) cpSync(path, join(logs, basename(path)), { recursive: true });
  return { dir: logs, remove: dir.remove };
}

/** The store one full ingest of `dir` makes. */
export function fullRead(dir: string): Record<string, unknown[]> {
  const store = tempStore();
  try {
    ingest(store.db, [dir]);
    return dumpStore(store.db);
  } finally {
    store.close();
  }
}

/** Every `.jsonl` file under `dir` (not in a `schema/` folder), sorted. */
export function logFiles(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory() && entry.name !== 'schema') found.push(...logFiles(path));
    else if (entry.isFile() && entry.name.endsWith('.jsonl')) found.push(path);
  }
  return found.sort();
}

/** At most `most` offsets, spread over the file, always including its end. */
export function spread(ends: number[], most: number): number[] {
  if (ends.length <= most) return ends;
  const stride = Math.ceil(ends.length / most);
  const picked = ends.filter((_, i) => i % stride === 0);
  if (picked.at(-1) !== ends.at(-1)) picked.push(ends.at(-1) as number);
  return picked;
}

/** Byte offsets just past each line of a log (a last line without a newline ends at the file's end). */
export function lineEnds(bytes: Buffer): number[] {
  const ends: number[] = [];
  for (let at = bytes.indexOf(10); at !== -1; at = bytes.indexOf(10, at + 1)) ends.push(at + 1);
  if (ends.at(-1) !== bytes.length) ends.push(bytes.length);
  return ends;
}

/** The file cut to its first `bytes` bytes, in place (same inode, as a log that is being written). */
function cut(file: string, whole: Buffer, bytes: number): void {
  truncateSync(file, 0);
  if (bytes > 0) appendFileSync(file, whole.subarray(0, bytes));
}

/** The file grown from `from` to `to` bytes by appending, as its writer does. */
function grow(file: string, whole: Buffer, from: number, to: number): void {
  appendFileSync(file, whole.subarray(from, to));
}

export interface GrowthCase {
  /** Ingests of the grown file that continued from the stored offset instead of reading the file again. */
  continued: number;
  ingests: number;
}

const continuedIn = (summaries: PathSummary[]): number =>
  summaries.reduce((n, s) => n + (s.files.continued ?? 0), 0);

/**
 * Cuts `file` (inside the scratch `dir`) at `at` bytes, ingests `dir`, grows the file back to whole, ingests again,
 * and returns the store. Each cut gets a fresh store.
 */
export function cutThenWhole(
  dir: string,
  file: string,
  at: number,
): { dump: Record<string, unknown[]>; continued: number } {
  const whole = readFileSync(file);
  const store = tempStore();
  try {
    cut(file, whole, at);
    ingest(store.db, [dir]);
    grow(file, whole, at, whole.length);
    const continued = continuedIn(ingest(store.db, [dir]));
    return { dump: dumpStore(store.db), continued };
  } finally {
    store.close();
    writeFileSync(file, whole);
  }
}

/**
 * Grows `file` from nothing through every offset in `steps` (ascending, ending at the file's size), ingesting
 * `dir` into one store after each step, and returns that store. With `eachStep`, the store after each step is
 * also compared with a full read of the file as it is then, after every `eachStep`-th step (a wrong row that a
 * later full read would mend shows there, not at the end): the offsets where they differ are in `differ`.
 */
export function growThrough(
  dir: string,
  file: string,
  steps: number[],
  options: { eachStep?: number } = {},
): { dump: Record<string, unknown[]>; continued: number; ingests: number; differ: number[] } {
  const whole = readFileSync(file);
  const store = tempStore();
  let continued = 0;
  const differ: number[] = [];
  try {
    cut(file, whole, 0);
    let at = 0;
    for (const [i, step] of steps.entries()) {
      grow(file, whole, at, step);
      at = step;
      continued += continuedIn(ingest(store.db, [dir]));
      const checked = options.eachStep !== undefined && i % options.eachStep === 0;
      if (checked && !isDeepStrictEqual(dumpStore(store.db), fullRead(dir))) differ.push(step);
    }
    return { dump: dumpStore(store.db), continued, ingests: steps.length, differ };
  } finally {
    store.close();
    writeFileSync(file, whole);
  }
}
