import { appendFileSync, copyFileSync, cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { sessionId } from '../../src/model/ids.js';
import { splitTurns } from '../../src/model/turns.js';
import { claudeCode } from '../../src/sources/claude-code/index.js';
import { ingest } from '../../src/sources/ingest.js';
import { openDb, StoreError } from '../../src/store/db.js';
import { migrations } from '../../src/store/migrations.js';
import { RunStore } from '../../src/store/runs.js';
import { SessionStore } from '../../src/store/sessions.js';
import { root } from '../helpers/cli.js';
import { tempStore } from '../helpers/store.js';

const fixtures = join(root, 'test', 'fixtures', 'claude-code');
const mainId = sessionId('claude-code', '11111111-1111-4111-8111-111111111111');

let store: ReturnType<typeof tempStore>;
beforeEach(() => {
  store = tempStore();
});
afterEach(() => {
  vi.restoreAllMocks();
  store.close();
});

describe('store', () => {
  it('opens with WAL, foreign keys and every migration applied, each recorded by name', () => {
    const { db } = store;
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(db.pragma('user_version', { simple: true })).toBe(migrations.length);
    expect(db.prepare('SELECT name FROM migrations ORDER BY id').pluck().all()).toEqual(
      migrations.map((m) => m.name),
    );
    // Opening again applies nothing twice.
    store.db.close();
    const again = openDb(store.path);
    expect(again.prepare('SELECT count(*) FROM migrations').pluck().get()).toBe(migrations.length);
    again.close();
  });

  it('refuses a database written by a newer version, with a clear error, and leaves it untouched', () => {
    store.db.prepare("INSERT INTO migrations (name, applied_at) VALUES ('m999_from_the_future', 'x')").run();
    store.db.close();
    const before = readFileSync(store.path);
    expect(() => openDb(store.path)).toThrow(StoreError);
    expect(() => openDb(store.path)).toThrow(
      /newer version of replay-history \(unknown migration m999_from_the_future\)/,
    );
    const raw = new Database(store.path);
    raw.pragma('user_version = 99');
    raw.prepare("DELETE FROM migrations WHERE name = 'm999_from_the_future'").run();
    raw.close();
    expect(() => openDb(store.path)).toThrow(/newer version/);
    expect(before.length).toBeGreaterThan(0);
  });

  it('does not parse an unchanged file again', () => {
    const parse = vi.spyOn(claudeCode, 'parseFile');
    const file = join(store.dir, 'a.jsonl');
    copyFileSync(join(fixtures, 'split-response.jsonl'), file);
    const [first] = ingest(store.db, [file]);
    expect(first?.sessions.new).toBe(1);
    expect(parse).toHaveBeenCalledTimes(1);
    const [second] = ingest(store.db, [file]);
    expect(parse).toHaveBeenCalledTimes(1);
    expect(second?.files).toEqual({ read: 0, continued: 0, unchanged: 1, ignored: 0, failed: 0 });
    // The file was not read, and its session is counted as what it is: unchanged.
    expect(second?.sessions).toEqual({ new: 0, updated: 0, unchanged: 1 });
  });

  it('adds only the new messages of a file that grew, leaving stored rows as they were', () => {
    const file = join(store.dir, 'grow.jsonl');
    const lines = readFileSync(join(fixtures, 'split-response.jsonl'), 'utf8').split('\n');
    writeFileSync(file, `${lines.slice(0, 5).join('\n')}\n`);
    ingest(store.db, [file]);
    const rows = () =>
      store.db
        .prepare('SELECT rowid, seq, hash FROM messages WHERE session_id = ? ORDER BY seq')
        .all(mainId) as {
        rowid: number;
        seq: number;
      }[];
    const before = rows();
    expect(before).toHaveLength(3);
    appendFileSync(file, `${lines[5]}\n`);
    const [summary] = ingest(store.db, [file]);
    expect(summary?.sessions).toEqual({ new: 0, updated: 1, unchanged: 0 });
    expect(summary).toMatchObject({ messages: 1, rewritten: { messages: 0, toolCalls: 0 } });
    const after = rows();
    expect(after).toHaveLength(4);
    expect(after.slice(0, 3)).toEqual(before);
  });

  it('reads a torn last line once it is complete', () => {
    const file = join(store.dir, 'live.jsonl');
    const lines = readFileSync(join(fixtures, 'split-response.jsonl'), 'utf8').split('\n');
    const last = lines[5] as string;
    writeFileSync(file, `${lines.slice(0, 5).join('\n')}\n${last.slice(0, 40)}`);
    const [first] = ingest(store.db, [file]);
    expect(first?.warnings).toEqual([
      { file, line: 6, message: 'last line is incomplete (still being written?); not read yet' },
    ]);
    expect(new SessionStore(store.db).row(mainId)?.turn_count).toBe(1);
    appendFileSync(file, `${last.slice(40)}\n`);
    const [second] = ingest(store.db, [file]);
    expect(second?.warnings).toEqual([]);
    expect(new SessionStore(store.db).row(mainId)?.turn_count).toBe(2);
  });

  it('stores history copied into a resumed session once, and still builds its contexts in full', () => {
    ingest(store.db, [join(fixtures, 'resumed')]);
    const sessions = new SessionStore(store.db);
    const a = sessionId('claude-code', '44444444-4444-4444-8444-444444444444');
    const b = sessionId('claude-code', '55555555-5555-4555-8555-555555555555');
    expect(sessions.row(a)).toMatchObject({ message_count: 4, turn_count: 2, continues_session_id: null });
    expect(sessions.row(b)).toMatchObject({
      message_count: 2,
      turn_count: 1,
      continues_session_id: a,
      continues_native_id: 'a2',
    });
    expect(store.db.prepare('SELECT count(*) FROM messages').pluck().get()).toBe(6);
    const loaded = sessions.load(b);
    expect(loaded?.own).toBe(4);
    const turns = splitTurns(loaded?.session.messages ?? [], loaded?.own);
    expect(turns).toHaveLength(1);
    expect(turns[0]?.context).toHaveLength(5);
    // Re-ingesting changes nothing.
    const [again] = ingest(store.db, [join(fixtures, 'resumed')]);
    expect(again?.files.unchanged).toBe(2);
  });

  it('links sub-agents to their parent and keeps the sub-agent file over the inline mirror', () => {
    const dir = join(store.dir, 'projects');
    cpSync(join(fixtures, 'subagents'), dir, { recursive: true });
    const [summary] = ingest(store.db, [dir]);
    expect(summary?.warnings).toEqual([]);
    const rows = [...new SessionStore(store.db).list()];
    const parent = rows.find((r) => r.kind === 'main');
    expect(rows.map((r) => [r.kind, r.origin, r.parent_id === (parent?.id ?? '-')])).toEqual(
      expect.arrayContaining([
        ['main', 'file', false],
        ['subagent', 'file', true],
        ['compaction', 'file', true],
      ]),
    );
    expect(rows).toHaveLength(3);
    const child = rows.find((r) => r.kind === 'subagent');
    expect(child?.spawned_by).toBe('toolu_task');
    expect(child?.message_count).toBe(2);
  });

  it('leaves the store as it was before a file whose write failed', () => {
    const dir = join(store.dir, 'projects');
    mkdirSync(dir);
    copyFileSync(join(fixtures, 'mirror-only.jsonl'), join(dir, 'mirror-only.jsonl'));
    const save = SessionStore.prototype.save;
    let calls = 0;
    vi.spyOn(SessionStore.prototype, 'save').mockImplementation(function (this: SessionStore, ...args) {
      // The file holds two sessions (the parent and a sub-agent known from its mirror): fail on the second.
      if (++calls === 2) throw new Error('disk full');
      return save.apply(this, args);
    });
    expect(() => ingest(store.db, [dir])).toThrow('disk full');
    expect(store.db.prepare('SELECT count(*) FROM sessions').pluck().get()).toBe(0);
    expect(store.db.prepare('SELECT count(*) FROM messages').pluck().get()).toBe(0);
    expect(store.db.prepare('SELECT count(*) FROM source_files').pluck().get()).toBe(0);
    vi.restoreAllMocks();
    const [retry] = ingest(store.db, [dir]);
    expect(retry?.sessions.new).toBe(2);
  });
});

describe('a run, made', () => {
  it('is stored whole or not at all: a write failing midway (a full disk) leaves no run with part of its sessions', () => {
    const runs = new RunStore(store.db);
    // the fourth session's row cannot be written, as on a disk that filled up then
    store.db.exec(
      "CREATE TRIGGER full BEFORE INSERT ON run_sessions WHEN NEW.position = 3 BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END",
    );
    const made = () =>
      runs.create(
        {
          id: 'run_20261206T000000_000000',
          model: 'recorded',
          mode: 'forced',
          options: {},
          outFile: 'pairs.jsonl',
        },
        ['a', 'b', 'c', 'd', 'e'],
      );
    expect(made).toThrow('database or disk is full');
    expect(runs.latest()).toBeUndefined();
    expect(store.db.prepare('SELECT count(*) FROM run_sessions').pluck().get()).toBe(0);
    store.db.exec('DROP TRIGGER full');
    made();
    expect(runs.sessions('run_20261206T000000_000000')).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(runs.resolve('latest').id).toBe('run_20261206T000000_000000');
  });
});

describe('garbage between logs', () => {
  it('is collected after a large log, and after as much read in small ones, never after every small one', () => {
    const logs = join(root, 'test', 'fixtures', 'claude-code');
    const count = (largeFile: number) => {
      let calls = 0;
      const fresh = tempStore();
      try {
        const [summary] = ingest(fresh.db, [logs], { largeFile, afterLargeFile: () => calls++ });
        return { calls, read: summary?.files.read ?? 0 };
      } finally {
        fresh.close();
      }
    };
    // every log is over 100 bytes: one collection each
    const each = count(100);
    expect(each.read).toBeGreaterThan(10);
    expect(each.calls).toBe(each.read);
    // every log is under 8 KB: one collection per 32 KB read, so some, far fewer than the logs
    const some = count(8 * 1024);
    expect(some.calls).toBeGreaterThan(0);
    expect(some.calls).toBeLessThan(some.read / 4);
    // a size that neither a log nor all of them reach: none
    expect(count(1024 * 1024 * 1024).calls).toBe(0);
  });
});
