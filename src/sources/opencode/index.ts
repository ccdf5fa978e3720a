import { closeSync, openSync, readSync, type Stats, statSync } from 'node:fs';
import type { FileResult, Fingerprint, ParsedSession, SourceAdapter, Warning } from '../types.js';
import { readDatabase } from './database.js';
import { Tally } from './parse.js';
import { isDatabaseName, opencodeRoots, pruned, treeSession } from './paths.js';
import { looksLikeExport, readExport, readTreeSession, treeFingerprint } from './tree.js';

const sniffBytes = 512;

/**
 * One unit of opencode's storage: a database (`opencode.db`, `opencode-<channel>.db`), a storage-tree session
 * file (`storage/session/<project>/<session>.json`), or the JSON `opencode export` prints.
 */
function detect(file: string): boolean {
  if (isDatabaseName(file) || treeSession(file)) return true;
  if (!file.endsWith('.json')) return false;
  const fd = openSync(file, 'r');
  try {
    const buffer = Buffer.alloc(sniffBytes);
    const head = buffer.subarray(0, readSync(fd, buffer, 0, sniffBytes, 0)).toString('utf8');
    return looksLikeExport(head);
  } finally {
    closeSync(fd);
  }
}

/** A database is unchanged only if its -wal is too (most recent writes live there until a checkpoint). */
function fingerprint(file: string, stat: Stats): Fingerprint {
  if (treeSession(file)) return treeFingerprint(file, stat);
  if (!isDatabaseName(file)) return { size: stat.size, mtimeMs: stat.mtimeMs, ino: stat.ino };
  let size = stat.size;
  let mtimeMs = stat.mtimeMs;
  try {
    const wal = statSync(`${file}-wal`);
    size += wal.size;
    mtimeMs = Math.max(mtimeMs, wal.mtimeMs);
  } catch {
    // No -wal: everything is in the database file.
  }
  return { size, mtimeMs, ino: stat.ino };
}

function parseFile(file: string): FileResult {
  const warnings: Warning[] = [];
  const tally = new Tally();
  const parsedBytes = statSync(file).size;
  if (isDatabaseName(file)) {
    const read = readDatabase(file, warnings, tally);
    const result: FileResult = {
      sessions: [],
      spawns: read.spawns,
      warnings,
      notes: [],
      lines: 0,
      skipped: 0,
      parsedBytes,
    };
    // Counts and notes are complete only once the database was read to the end.
    result.sessions = {
      *[Symbol.iterator](): Generator<ParsedSession> {
        yield* read.sessions;
        result.lines = read.counts.rows;
        result.skipped = read.counts.skipped;
        result.notes.push(...tally.notes());
      },
    };
    return result;
  }
  const read = treeSession(file) ? readTreeSession(file, warnings, tally) : readExport(file, warnings, tally);
  return {
    sessions: read.sessions,
    spawns: read.spawns,
    warnings,
    notes: tally.notes(),
    lines: read.counts.rows,
    skipped: read.counts.skipped,
    parsedBytes,
  };
}

export const opencode: SourceAdapter = {
  agent: 'opencode',
  // 2: tool results keep their title and metadata
  version: '2',
  detect,
  defaultRoots: () => opencodeRoots(),
  parseFile,
  fingerprint,
  prune: pruned,
};
