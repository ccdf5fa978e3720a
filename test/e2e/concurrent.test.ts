import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { root, run, tempDir } from '../helpers/cli.js';

// Hooks run `ingest` after every turn of every agent session: two sessions ending together run two at once, on a
// store that may not exist yet. Each write transaction takes the write lock first (IMMEDIATE) and each migration
// is asked for again under it, so they take turns: before, one of them failed with "database is locked" (a
// deferred transaction that read before the other's commit cannot write) or "table sessions already exists" (two
// processes migrating a new store).

let dir: ReturnType<typeof tempDir>;
beforeEach(() => {
  dir = tempDir('rh-concurrent-');
});
afterEach(() => dir.remove());

/** What the store holds, row by row, in a form two stores can be compared by. */
function contents(db: string): { sessions: unknown[]; messages: unknown[]; files: unknown[] } {
  const store = new Database(db, { readonly: true });
  try {
    return {
      sessions: store
        .prepare('SELECT id, message_count, tool_call_count, meta_hash FROM sessions ORDER BY id')
        .all(),
      messages: store.prepare('SELECT session_id, seq, hash FROM messages ORDER BY session_id, seq').all(),
      files: store.prepare('SELECT path, parsed_bytes FROM source_files ORDER BY path').all(),
    };
  } finally {
    store.close();
  }
}

/**
 * Six ingests of the sample sessions at once, `trials` times, each time into a new store (made and migrated first,
 * when `made`: then they all read it, then write, over one another): every one exits 0, and the store is what one
 * ingest makes, row by row.
 */
async function sixAtOnce(trials: number, made: boolean): Promise<void> {
  const logs = join(dir.path, 'logs');
  cpSync(join(root, 'sample-sessions'), logs, { recursive: true });
  const empty = join(dir.path, 'empty');
  mkdirSync(empty);
  const reference = join(dir.path, 'reference.db');
  expect((await run(['ingest', logs, '--db', reference])).exitCode).toBe(0);
  for (let trial = 0; trial < trials; trial++) {
    const db = join(dir.path, `store-${trial}.db`);
    if (made) expect((await run(['ingest', empty, '--db', db])).exitCode).toBe(0);
    const ran = await Promise.all(Array.from({ length: 6 }, () => run(['ingest', logs, '--db', db])));
    for (const one of ran) expect(one.exitCode, one.stderr).toBe(0);
    expect(contents(db)).toEqual(contents(reference));
  }
}

describe('ingests at once', () => {
  it('into a new store: every one exits 0, and the store is what one ingest makes', async () => {
    await sixAtOnce(3, false);
  }, 120_000);

  it('into a store that exists: every one exits 0, none finds the store locked', async () => {
    await sixAtOnce(6, true);
  }, 120_000);

  it('says so, and what to do, when another process holds the store longer than it can wait (exit 1)', async () => {
    const db = join(dir.path, 'store.db');
    const empty = join(dir.path, 'empty');
    mkdirSync(empty);
    expect((await run(['ingest', empty, '--db', db])).exitCode).toBe(0);
    const holder = new Database(db);
    holder.prepare('BEGIN IMMEDIATE').run();
    try {
      const waited = await run(['ingest', join(root, 'sample-sessions'), '--db', db]);
      expect(waited.exitCode, waited.stderr).toBe(1);
      expect(waited.stderr).toContain(`error: the store ${db} stayed busy: another replay-history process`);
      expect(waited.stderr).toContain('hint: run the command again when the other has finished');
    } finally {
      holder.prepare('ROLLBACK').run();
      holder.close();
    }
    expect((await run(['ingest', join(root, 'sample-sessions'), '--db', db])).exitCode).toBe(0);
  }, 60_000);

  it('of a log that grew: every one exits 0, and the store holds it once, as a fresh ingest of it does', async () => {
    const source = join(
      root,
      'sample-sessions',
      'claude-code',
      '-home-ada-todo-api',
      '6f1c2a34-7b1d-4c55-9d0e-2a8b3c4d5e61.jsonl',
    );
    const lines = readFileSync(source, 'utf8').split('\n').filter(Boolean);
    const folder = join(dir.path, 'projects', '-home-ada-todo-api');
    mkdirSync(folder, { recursive: true });
    const log = join(folder, '6f1c2a34-7b1d-4c55-9d0e-2a8b3c4d5e61.jsonl');
    const projects = join(dir.path, 'projects');
    const reference = join(dir.path, 'reference.db');
    for (let trial = 0; trial < 3; trial++) {
      const db = join(dir.path, `store-${trial}.db`);
      writeFileSync(log, `${lines.slice(0, 10).join('\n')}\n`);
      expect((await run(['ingest', projects, '--db', db])).exitCode).toBe(0);
      writeFileSync(log, `${lines.join('\n')}\n`);
      const ran = await Promise.all(Array.from({ length: 4 }, () => run(['ingest', projects, '--db', db])));
      for (const one of ran) expect(one.exitCode, one.stderr).toBe(0);
      if (trial === 0) expect((await run(['ingest', projects, '--db', reference])).exitCode).toBe(0);
      const got = contents(db);
      expect(got.messages).toEqual(contents(reference).messages);
      expect(got.sessions).toEqual(contents(reference).sessions);
    }
  }, 120_000);
});
