#!/usr/bin/env node
// The floors of the export benchmark: what any export of a store pays before it builds a single sample.
//
//   node bench/export/baseline.mjs --mode load --db STORE   every session through dist/store/sessions.js, as the
//                                                           export reads them (SessionStore.load per id)
//   node bench/export/baseline.mjs --mode raw --db STORE    every row of the messages table with better-sqlite3,
//                                                           read-only, text columns decoded, nothing parsed
//
// Prints one JSON line: {mode, sessions, messages, parts (load) or chars (raw: of the
// parts, source and usage columns), ms (the reading alone, after the imports)}.
// Run under bench/ingest/measure.mjs for peak RSS and CPU time.

import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { values } = parseArgs({
  options: { mode: { type: 'string' }, db: { type: 'string' } },
});
if (!values.db || (values.mode !== 'load' && values.mode !== 'raw')) {
  process.stderr.write('usage: node bench/export/baseline.mjs --mode load|raw --db STORE\n');
  process.exit(2);
}

let sessions = 0;
let messages = 0;
let chars = 0;
let parts = 0;

let started;
if (values.mode === 'load') {
  // The export's own way in: openDb (WAL, migrations checked), then one SessionStore.load per stored id.
  const { openDb } = await import(pathToFileURL(join(repo, 'dist', 'store', 'db.js')).href);
  const { SessionStore } = await import(pathToFileURL(join(repo, 'dist', 'store', 'sessions.js')).href);
  started = performance.now();
  const db = openDb(values.db);
  try {
    const store = new SessionStore(db);
    for (const id of store.allIds()) {
      const loaded = store.load(id);
      if (!loaded) continue;
      sessions++;
      messages += loaded.session.messages.length;
      for (const message of loaded.session.messages) parts += message.parts.length;
    }
  } finally {
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
  `${JSON.stringify({ mode: values.mode, sessions, messages, ...(values.mode === 'load' ? { parts } : { chars }), ms: performance.now() - started })}\n`,
);
