#!/usr/bin/env node
// The floor for ingesting an opencode database, as baseline.mjs is for JSONL: open every `opencode.db` under a
// directory read-only and JSON.parse every JSON column of every row of the tables the adapter reads (session,
// message, part), nothing else. One full scan per table in storage order, which is the cheapest way SQLite can
// hand the rows over; the ingest instead copies the database first and reads it session by session through the
// indexes (that difference is part of what the ratio to this floor measures).
//   BENCH_RSS_FILE=FILE node bench/ingest/baseline-sqlite.mjs <dir or opencode.db>
// Result JSON (same fields as baseline.mjs; `lines` are rows) goes to the file BENCH_RSS_FILE names.

import { existsSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
// Already a dependency of the CLI (its opencode adapter reads the database through it).
import Database from 'better-sqlite3';

/**
 * The JSON-holding columns of opencode's V1 tables (packages/opencode/src/session/session.sql.ts). Those the
 * schema at hand lacks are left out, so an older store still works. Session rows are one per session: parsing
 * all of their JSON, used by the adapter or not, costs next to nothing.
 */
const jsonColumns = {
  session: ['summary_diffs', 'metadata', 'revert', 'permission', 'model'],
  message: ['data'],
  part: ['data'],
};

/** The database names the adapter reads (`opencode.db`, `opencode-<channel>.db`), as in src/sources/opencode. */
const databaseName = /^opencode(-[\w.-]+)?\.db$/;

/**
 * Runs `use(db)` on a read-only connection and leaves the folder as it was. A read-only connection to a WAL
 * database creates an empty -wal and a -shm it cannot delete on close; left behind, they would sit in the cached
 * corpus, and the -wal is part of what the ingest fingerprints and copies. Only files this call created (and a
 * -wal it left empty) are removed.
 */
export function withReadOnly(file, use) {
  const sidecars = [`${file}-wal`, `${file}-shm`].filter((path) => !existsSync(path));
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return use(db);
  } finally {
    db.close();
    for (const path of sidecars) {
      if (existsSync(path) && (path.endsWith('-shm') || statSync(path).size === 0)) rmSync(path);
    }
  }
}

function* databases(path) {
  if (!statSync(path).isDirectory()) {
    yield path;
    return;
  }
  for (const name of readdirSync(path).sort()) {
    const child = join(path, name);
    if (statSync(child).isDirectory()) yield* databases(child);
    else if (databaseName.test(basename(child))) yield child;
  }
}

/** Reads one database; adds to `totals` ({ rows, values, typed }). */
function scan(db, totals) {
  const tables = new Set(db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all());
  for (const [table, wanted] of Object.entries(jsonColumns)) {
    if (!tables.has(table)) continue;
    const have = new Set(db.prepare('SELECT name FROM pragma_table_info(?)').pluck().all(table));
    const columns = wanted.filter((column) => have.has(column));
    // The id is read too, as the adapter must; `raw` skips building an object per row.
    const select = db.prepare(`SELECT ${['id', ...columns].join(', ')} FROM ${table}`).raw();
    for (const row of select.iterate()) {
      totals.rows++;
      for (let i = 1; i < row.length; i++) {
        if (typeof row[i] !== 'string') continue;
        const value = JSON.parse(row[i]);
        totals.values++;
        // Touch the result so the parse cannot be thought dead.
        if (value !== null && typeof value === 'object' && typeof value.type === 'string') totals.typed++;
      }
    }
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = process.argv[2];
  const out = process.env.BENCH_RSS_FILE;
  if (!root || !out) {
    process.stderr.write(
      'usage: BENCH_RSS_FILE=FILE node bench/ingest/baseline-sqlite.mjs <dir or opencode.db>\n',
    );
    process.exit(2);
  }
  const totals = { rows: 0, values: 0, typed: 0 };
  let files = 0;
  let bytes = 0;
  const started = performance.now();
  for (const file of databases(root)) {
    files++;
    bytes += statSync(file).size;
    withReadOnly(file, (db) => scan(db, totals));
  }
  const seconds = (performance.now() - started) / 1000;
  const usage = process.resourceUsage();
  writeFileSync(
    out,
    JSON.stringify({
      files,
      bytes,
      lines: totals.rows,
      values: totals.values,
      typed: totals.typed,
      seconds,
      maxRSS: usage.maxRSS,
      userCPUTime: usage.userCPUTime,
      systemCPUTime: usage.systemCPUTime,
    }),
  );
}
