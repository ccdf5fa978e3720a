// opencode.db as a running opencode leaves it: WAL mode, recent rows only in the -wal, possibly locked. The
// adapter reads a private copy, so the user's files stay byte-identical; bad input is named and skipped.
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sessionId } from '../../../src/model/ids.js';
import { ingest } from '../../../src/sources/ingest.js';
import { opencode } from '../../../src/sources/opencode/index.js';
import { SessionStore } from '../../../src/store/sessions.js';
import { tempDir } from '../../helpers/cli.js';
import {
  insertV1,
  openStore,
  smallSession,
  v1Schema,
  writeTree,
  writeV1,
} from '../../helpers/opencode-store.js';
import { tempStore } from '../../helpers/store.js';

let home: ReturnType<typeof tempDir>;
let store: ReturnType<typeof tempStore>;
let data: string;
let file: string;
const open: Database.Database[] = [];
beforeEach(() => {
  home = tempDir('opencode-db-');
  store = tempStore();
  data = join(home.path, 'opencode');
  file = join(data, 'opencode.db');
});
afterEach(() => {
  for (const db of open.splice(0)) if (db.open) db.close();
  store.close();
  home.remove();
});

/** A database kept open like opencode keeps it: the rows stay in the -wal until a checkpoint. */
function running(sessions = [smallSession('ses_live', 'live')]): Database.Database {
  const db = openStore(file, v1Schema);
  db.pragma('wal_autocheckpoint = 0');
  insertV1(db, sessions);
  open.push(db);
  return db;
}

const fingerprintOf = (path: string) => {
  const stat = statSync(path);
  return {
    hash: createHash('sha256').update(readFileSync(path)).digest('hex'),
    mtimeMs: stat.mtimeMs,
    size: stat.size,
  };
};

describe('reading opencode.db safely', () => {
  it('reads rows that are only in the -wal and leaves the database, -wal and -shm byte-identical', () => {
    running();
    const before = ['', '-wal', '-shm'].map((suffix) => fingerprintOf(file + suffix));
    expect(before[1]?.size).toBeGreaterThan(0);
    const [summary] = ingest(store.db, [data]);
    expect(summary?.warnings).toEqual([]);
    expect(summary?.sessions.new).toBe(1);
    expect(['', '-wal', '-shm'].map((suffix) => fingerprintOf(file + suffix))).toEqual(before);
  });

  it('reads a database another process holds a write lock on (the committed rows)', () => {
    const db = running();
    db.prepare('BEGIN EXCLUSIVE').run();
    insertV1(db, [smallSession('ses_uncommitted', 'later')]);
    const [summary] = ingest(store.db, [data]);
    expect(summary?.warnings).toEqual([]);
    const ids = [...new SessionStore(store.db).list()].map((row) => row.source_id);
    expect(ids).toEqual(['ses_live']);
    db.prepare('ROLLBACK').run();
  });

  it('fingerprints the -wal too: a write that only reached the -wal is read on the next ingest', () => {
    const db = running();
    ingest(store.db, [data]);
    const mainBefore = statSync(file);
    insertV1(db, [smallSession('ses_second', 'second')]);
    expect(statSync(file).size).toBe(mainBefore.size);
    const [summary] = ingest(store.db, [data]);
    expect(summary?.files.read).toBe(1);
    expect(summary?.sessions).toEqual({ new: 1, updated: 0, unchanged: 1 });
  });
});

describe('re-ingest', () => {
  it('reads nothing when nothing changed, and adds only the new messages of a session that grew', () => {
    const db = running();
    const [first] = ingest(store.db, [data]);
    expect(first?.messages).toBe(4);
    const [same] = ingest(store.db, [data]);
    expect(same?.files).toMatchObject({ read: 0, unchanged: 1 });

    const sessions = new SessionStore(store.db);
    const id = sessionId('opencode', 'ses_live');
    const rowids = () =>
      store.db.prepare('SELECT rowid FROM messages WHERE session_id = ? ORDER BY seq').pluck().all(id);
    const kept = rowids();
    db.prepare(
      'INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?)',
    ).run(
      'msg_ses_live_4',
      'ses_live',
      1770000000010,
      1770000000010,
      JSON.stringify({ role: 'user', time: { created: 1770000000010 } }),
    );
    db.prepare(
      'INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?, ?)',
    ).run(
      'prt_4',
      'msg_ses_live_4',
      'ses_live',
      1770000000010,
      1770000000010,
      JSON.stringify({ type: 'text', text: 'one more thing' }),
    );
    const [grown] = ingest(store.db, [data]);
    expect(grown?.sessions).toEqual({ new: 0, updated: 1, unchanged: 0 });
    // What this ingest added, not what the session holds.
    expect(grown?.messages).toBe(1);
    // The stored messages were kept, not rewritten: only the new one was added.
    expect(rowids().slice(0, kept.length)).toEqual(kept);
    expect(sessions.messages(id)).toHaveLength(5);
  });

  it('re-reads a tree session when one of its part files changes, and only then', () => {
    writeTree(data, [smallSession('ses_tree', 'one')]);
    ingest(store.db, [data]);
    const [same] = ingest(store.db, [data]);
    expect(same?.files).toMatchObject({ read: 0, unchanged: 1 });
    const part = join(data, 'storage', 'part', 'msg_ses_tree_3', 'prt_msg_ses_tree_3_3.json');
    writeFileSync(part, JSON.stringify({ id: 'prt_msg_ses_tree_3_3', type: 'text', text: 'and more' }));
    const [changed] = ingest(store.db, [data]);
    expect(changed?.files.read).toBe(1);
    expect(changed?.sessions.updated).toBe(1);
  });
});

describe('bad input', () => {
  it('names a bad row by table and id, skips it, and ingests the rest', () => {
    const db = running();
    db.prepare('UPDATE message SET data = ? WHERE id = ?').run('{"role": "assist', 'msg_ses_live_3');
    db.prepare('UPDATE part SET data = ? WHERE id = ?').run('not json', 'prt_msg_ses_live_1_1');
    db.prepare('UPDATE part SET data = ? WHERE id = ?').run('{"text": "no type"}', 'prt_msg_ses_live_2_3');
    const [summary] = ingest(store.db, [data]);
    expect(summary?.warnings.map((w) => w.message)).toEqual([
      'table message, row msg_ses_live_3: data is not valid JSON; skipped',
      'table part, row prt_msg_ses_live_1_1: data is not valid JSON; skipped',
      'table part, row prt_msg_ses_live_2_3: no part type; skipped',
    ]);
    expect(summary?.skippedLines).toBe(3);
    expect(summary?.sessions.new).toBe(1);
    expect(summary?.messages).toBe(2);
  });

  it('explains a file named opencode.db that is not SQLite, and still ingests the tree beside it', () => {
    writeTree(data, [smallSession('ses_tree', 'tree')]);
    mkdirSync(data, { recursive: true });
    writeFileSync(file, 'this is not a database\n'.repeat(20));
    const [summary] = ingest(store.db, [data]);
    expect(summary?.warnings).toEqual([
      { file, message: 'not an SQLite database (opencode.db should be one); skipped', unreadable: true },
    ]);
    expect(summary?.files).toMatchObject({ read: 1, failed: 1 });
    expect(summary?.sessions.new).toBe(1);
  });

  it('explains a half-written database and stores nothing from it', () => {
    const whole = join(home.path, 'whole.db');
    writeV1(
      whole,
      Array.from({ length: 40 }, (_, n) =>
        smallSession(`ses_${String(n).padStart(3, '0')}`, 'x'.repeat(2000)),
      ),
    );
    mkdirSync(data, { recursive: true });
    copyFileSync(whole, file);
    truncateSync(file, Math.floor(statSync(whole).size / 2));
    const [summary] = ingest(store.db, [data]);
    expect(summary?.files).toMatchObject({ read: 0, failed: 1 });
    expect(summary?.sessions.new).toBe(0);
    expect(summary?.warnings).toEqual([
      {
        file,
        message:
          'cannot read the database: database disk image is malformed (damaged or half-written?); nothing from it was stored',
        unreadable: true,
      },
    ]);
  });

  it('names corrupt files of the storage tree and ingests what is readable', () => {
    writeTree(data, [smallSession('ses_ok', 'ok'), smallSession('ses_bad', 'bad')]);
    const storage = join(data, 'storage');
    const badPart = join(storage, 'part', 'msg_ses_ok_2', 'prt_msg_ses_ok_2_2.json');
    writeFileSync(badPart, '{"type": "tool", ');
    const roleless = join(storage, 'message', 'ses_ok', 'msg_ses_ok_3.json');
    writeFileSync(roleless, JSON.stringify({ id: 'msg_ses_ok_3', time: { created: 1 } }));
    const badSession = join(storage, 'session', 'global', 'ses_bad.json');
    writeFileSync(badSession, '{ "id": ');
    const [summary] = ingest(store.db, [data]);
    expect(summary?.warnings).toEqual([
      { file: badSession, message: 'not valid JSON (Unexpected end of JSON input)', unreadable: true },
      { file: badPart, message: expect.stringMatching(/^not valid JSON \(.*\); skipped$/) },
      { file: roleless, message: 'not an opencode message (no role user/assistant); skipped' },
    ]);
    expect(summary?.sessions.new).toBe(1);
    // The call whose part was lost is gone; the prompt is there.
    expect(summary?.messages).toBe(1);
  });

  it('tolerates missing fields: a session file with no fields, a tool part with no state', () => {
    const session = smallSession('ses_sparse', 'sparse');
    const step = session.messages[1]?.parts[1] as Record<string, unknown>;
    delete step.state;
    writeTree(data, [session]);
    writeFileSync(join(data, 'storage', 'session', 'global', 'ses_sparse.json'), '{}');
    const [summary] = ingest(store.db, [data]);
    expect(summary?.warnings).toEqual([]);
    const sessions = new SessionStore(store.db);
    const row = sessions.row(sessionId('opencode', 'ses_sparse'));
    expect(row).toMatchObject({ title: 'prompt sparse', cwd: null, unanswered_count: 1 });
  });
});

describe('what the walker skips', () => {
  it('prunes message/part folders of a storage tree and the snapshot folder of a data dir, nothing else', () => {
    writeTree(data, [smallSession('ses_tree', 'tree')]);
    writeV1(file, []);
    expect(opencode.prune?.(join(data, 'storage', 'part'))).toBe(true);
    expect(opencode.prune?.(join(data, 'storage', 'message'))).toBe(true);
    expect(opencode.prune?.(join(data, 'snapshot'))).toBe(true);
    expect(opencode.prune?.(join(data, 'storage', 'session'))).toBe(false);
    expect(opencode.prune?.(join(home.path, 'part'))).toBe(false);
    expect(opencode.prune?.(join(home.path, 'snapshot'))).toBe(false);
  });

  it('detects databases by name, tree sessions by path, exports by their opening', () => {
    expect(opencode.detect(join(data, 'opencode.db'))).toBe(true);
    expect(opencode.detect(join(data, 'opencode-dev.db'))).toBe(true);
    expect(opencode.detect(join(data, 'opencode.db-wal'))).toBe(false);
    expect(opencode.detect(join(data, 'storage', 'session', 'p', 'ses_1.json'))).toBe(true);
  });
});
