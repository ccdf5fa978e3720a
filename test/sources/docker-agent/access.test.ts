import {
  copyFileSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Part } from '../../../src/model/session.js';
import { dockerAgent } from '../../../src/sources/docker-agent/index.js';
import { openDb } from '../../../src/store/db.js';
import { tempDir } from '../../helpers/cli.js';
import { createStore, legacy, type Store } from './store.js';

let dir: ReturnType<typeof tempDir>;
beforeEach(() => {
  dir = tempDir('docker-agent-');
});
afterEach(() => dir.remove());

const id = 'a1b2c3d4-0000-4000-8000-000000000001';
const path = (name: string) => join(dir.path, name);

/** Every file of the directory with its bytes and mtime: what "left exactly as it was" means. */
function snapshotOf(folder: string): Record<string, { bytes: string; mtimeMs: number }> {
  const out: Record<string, { bytes: string; mtimeMs: number }> = {};
  for (const name of readdirSync(folder).sort()) {
    const file = join(folder, name);
    out[name] = { bytes: readFileSync(file).toString('base64'), mtimeMs: statSync(file).mtimeMs };
  }
  return out;
}

const read = (file: string) => [...dockerAgent.parseFile(file).sessions];
const texts = (parts: Part[]) => parts.flatMap((p) => (p.type === 'text' ? [p.text] : []));

function conversation(store: Store, prompt = 'Hello'): void {
  store.session({ id });
  store.message(id, { role: 'user', content: prompt });
  store.message(id, { role: 'assistant', content: 'Hi.' }, { agent: 'root' });
}

describe('docker-agent database access', () => {
  it('sees writes still only in the WAL of a running docker-agent and leaves db, -wal and -shm untouched', () => {
    const file = path('session.db');
    const store = createStore(file);
    store.db.pragma('wal_autocheckpoint = 0');
    conversation(store);
    // docker-agent is still running: nothing has been checkpointed into the main file.
    expect(statSync(`${file}-wal`).size).toBeGreaterThan(0);
    const before = snapshotOf(dir.path);
    expect(dockerAgent.detect(file)).toBe(true);
    const sessions = read(file);
    expect(sessions.flatMap((s) => s.messages.flatMap((m) => texts(m.parts)))).toEqual(['Hello', 'Hi.']);
    expect(snapshotOf(dir.path)).toEqual(before);
    store.close();
  });

  it('reads a WAL database whose -shm is gone (docker-agent crashed) without creating one beside it', () => {
    const source = path('live.db');
    const store = createStore(source);
    store.db.pragma('wal_autocheckpoint = 0');
    conversation(store, 'After a crash');
    const file = path('session.db');
    copyFileSync(source, file);
    copyFileSync(`${source}-wal`, `${file}-wal`);
    store.close();
    const before = snapshotOf(dir.path);
    expect(read(file)[0]?.messages.map((m) => texts(m.parts)[0])).toEqual(['After a crash', 'Hi.']);
    expect(snapshotOf(dir.path)).toEqual(before);
  });

  it('reads a rollback-journal database in place, read-only, and reports one locked by a writer', () => {
    const file = path('session.db');
    const store = createStore(file, { wal: false, version: legacy });
    store.session({ id }, [{ message: { agentName: '', message: { role: 'user', content: 'Old' } } }]);
    store.close();
    const before = snapshotOf(dir.path);
    expect(read(file)).toHaveLength(1);
    expect(snapshotOf(dir.path)).toEqual(before);

    const writer = new Database(file);
    writer.exec('BEGIN EXCLUSIVE');
    try {
      expect(() => read(file)).toThrow(/locked by another program/);
    } finally {
      writer.exec('ROLLBACK');
      writer.close();
    }
  });

  it('reads a rollback-journal database caught mid-transaction as of its last commit', () => {
    const file = path('session.db');
    const store = createStore(file, { wal: false, version: legacy });
    store.session({ id }, [{ message: { agentName: '', message: { role: 'user', content: 'Committed' } } }]);
    store.db.pragma('cache_size = 1');
    store.db.exec('BEGIN');
    // Enough rows that pages spill into the main file before commit, with their originals in the -journal.
    for (let n = 0; n < 400; n++) store.session({ id: `pending-${n}` }, [{ summary: 'x'.repeat(500) }]);
    const before = snapshotOf(dir.path);
    expect(before['session.db-journal']).toBeDefined();
    expect(read(file).map((s) => s.sourceId)).toEqual([id]);
    expect(snapshotOf(dir.path)).toEqual(before);
    store.db.exec('ROLLBACK');
    store.close();
  });

  it('detects docker-agent stores of every schema, and not opencode’s database, our own store or other SQLite', () => {
    const current = path('session.db');
    const live = createStore(current);
    conversation(live);
    // Created moments ago: the schema is still only in the WAL.
    expect(dockerAgent.detect(current)).toBe(true);
    live.close();
    expect(dockerAgent.detect(current)).toBe(true);
    const old = path('old.db');
    createStore(old, { version: legacy }).close();
    expect(dockerAgent.detect(old)).toBe(true);

    const opencode = new Database(path('opencode.db'));
    opencode.exec(
      'CREATE TABLE session (id TEXT PRIMARY KEY); CREATE TABLE message (id TEXT); CREATE TABLE part (id TEXT)',
    );
    opencode.close();
    expect(dockerAgent.detect(path('opencode.db'))).toBe(false);

    const ours = openDb(path('replay.db'));
    ours.close();
    expect(dockerAgent.detect(path('replay.db'))).toBe(false);

    const other = new Database(path('app.db'));
    other.exec('CREATE TABLE sessions (id TEXT PRIMARY KEY, user TEXT, created_at TEXT)');
    other.close();
    expect(dockerAgent.detect(path('app.db'))).toBe(false);

    writeFileSync(path('notes.jsonl'), '{"type":"user"}\n');
    expect(dockerAgent.detect(path('notes.jsonl'))).toBe(false);
  });

  it('reports a session.db that is not SQLite, is truncated, has no tables, or lost its session tables', () => {
    writeFileSync(path('session.db'), 'this is not a database\n');
    expect(() => dockerAgent.detect(path('session.db'))).toThrow(/not a SQLite database/);
    expect(() => dockerAgent.parseFile(path('session.db'))).toThrow(/not a SQLite database/);

    const truncated = path('t/session.db');
    mkdirSync(path('t'));
    const store = createStore(truncated, { wal: false });
    for (let n = 0; n < 50; n++) store.session({ id: `s-${n}`, title: 't'.repeat(2000) });
    store.close();
    truncateSync(truncated, 1000);
    expect(() => dockerAgent.detect(truncated)).toThrow(/a SQLite database that cannot be read/);

    mkdirSync(path('e'));
    const empty = new Database(path('e/session.db'));
    empty.exec('PRAGMA user_version = 1');
    empty.close();
    expect(() => dockerAgent.detect(path('e/session.db'))).toThrow(/no tables/);

    mkdirSync(path('d'));
    const damaged = createStore(path('d/session.db'), { wal: false });
    damaged.db.exec('DROP TABLE session_items');
    damaged.close();
    expect(() => dockerAgent.detect(path('d/session.db'))).toThrow(/without the tables that hold sessions/);
    // Not named like docker-agent's store: somebody else's broken file, not reported.
    writeFileSync(path('x.db'), 'SQLite format 3\0garbage');
    expect(dockerAgent.detect(path('x.db'))).toBe(false);
  });

  it('fingerprints the -wal too: a write that only reached the WAL is seen as a change', () => {
    const file = path('session.db');
    const store = createStore(file);
    store.db.pragma('wal_autocheckpoint = 0');
    conversation(store);
    const print = () => {
      const stat = statSync(file);
      return dockerAgent.fingerprint?.(file, stat);
    };
    const mainBefore = statSync(file);
    const first = print();
    store.message(id, { role: 'user', content: 'More' });
    const mainAfter = statSync(file);
    expect([mainAfter.size, mainAfter.mtimeMs]).toEqual([mainBefore.size, mainBefore.mtimeMs]);
    expect(print()).not.toEqual(first);
    store.close();
  });
});
