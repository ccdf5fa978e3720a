#!/usr/bin/env node
// The floors of the export benchmark: what any export of a store pays before it builds a single sample.
//
//   node bench/export/baseline.mjs --mode load --db STORE   every session through dist/store/sessions.js, as the
//                                                           export reads them (SessionStore.load per id)
//   node bench/export/baseline.mjs --mode raw --db STORE    every row of the messages table with better-sqlite3,
//                                                           read-only, text columns decoded, nothing parsed
//   node bench/export/baseline.mjs --mode jsonl --db STORE --out FILE
//                                                           the floor an export is held to: every session loaded
//                                                           as `load` does, its messages written as one JSON line
//                                                           (JSON.stringify) to FILE, 1 MB writes
//
// Prints one JSON line: {mode, sessions, messages, parts (load, jsonl) or chars (raw: of the
// parts, source and usage columns), bytes (jsonl: written), ms (the reading alone, after the imports)}.
// Run under bench/ingest/measure.mjs for peak RSS and CPU time.

import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { values } = parseArgs({
  options: { mode: { type: 'string' }, db: { type: 'string' }, out: { type: 'string' } },
});
if (
  !values.db ||
  !['load', 'raw', 'jsonl'].includes(values.mode) ||
  (values.mode === 'jsonl') !== (values.out !== undefined)
) {
  process.stderr.write(
    'usage: node bench/export/baseline.mjs --mode load|raw|jsonl --db STORE [--out FILE]\n',
  );
  process.exit(2);
}

let sessions = 0;
let messages = 0;
let chars = 0;
let parts = 0;
let bytes = 0;

let started;
if (values.mode === 'load' || values.mode === 'jsonl') {
  // The export's own way in: openDb (WAL, migrations checked), then one SessionStore.load per stored id.
  const { openDb } = await import(pathToFileURL(join(repo, 'dist', 'store', 'db.js')).href);
  const { SessionStore } = await import(pathToFileURL(join(repo, 'dist', 'store', 'sessions.js')).href);
  const { closeSync, openSync, writeSync } = await import('node:fs');
  started = performance.now();
  const db = openDb(values.db);
  const fd = values.out === undefined ? undefined : openSync(values.out, 'w');
  let pending = [];
  let pendingBytes = 0;
  const flush = () => {
    const chunk = Buffer.from(pending.join(''));
    for (let at = 0; at < chunk.length; ) at += writeSync(fd, chunk, at);
    bytes += chunk.length;
    pending = [];
    pendingBytes = 0;
  };
  try {
    const store = new SessionStore(db);
    for (const id of store.allIds()) {
      const loaded = store.load(id);
      if (!loaded) continue;
      sessions++;
      messages += loaded.session.messages.length;
      for (const message of loaded.session.messages) parts += message.parts.length;
      if (fd === undefined) continue;
      const line = `${JSON.stringify(loaded.session.messages)}\n`;
      pending.push(line);
      pendingBytes += line.length;
      if (pendingBytes >= 1 << 20) flush();
    }
    if (fd !== undefined) flush();
  } finally {
    if (fd !== undefined) closeSync(fd);
    db.close();
  }
} else {
  const { default: Database } = await import('better-sqlite3');
  started = performance.now();
  const db = new Database(values.db, { readonly: true });
  try {
    sessions = db.prepare('SELECT count(*) FROM sessions').pluck().get();
    for (const row of db.prepare('SELECT parts, source, usage FROM messages').iterate()) {
      messages++;
      chars += row.parts.length + row.source.length + (row.usage?.length ?? 0);
    }
  } finally {
    db.close();
  }
}

process.stdout.write(
  `${JSON.stringify({ mode: values.mode, sessions, messages, ...(values.mode === 'raw' ? { chars } : { parts }), ...(values.mode === 'jsonl' ? { bytes } : {}), ms: performance.now() - started })}\n`,
);
