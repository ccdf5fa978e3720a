// The request log of a live Claude Code 2.1.328 transcript as it grows: each ingest stores what the file holds
// so far, and the next one the rest, with every turn's request rebuilt exactly both times.

import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { ingest } from '../../src/sources/ingest.js';
import { type Db, openDb } from '../../src/store/db.js';
import { migrations } from '../../src/store/migrations.js';
import { SessionStore } from '../../src/store/sessions.js';
import { root, tempDir } from '../helpers/cli.js';
import { tempStore } from '../helpers/store.js';

const source = join(
  root,
  'test/fixtures/real/claude-code-2.1.328/projects/-home-ada-projects-demo-app/5d5d5d5d-0004-4000-8000-00000000000d.jsonl',
);
const lines = readFileSync(source, 'utf8').split('\n').filter(Boolean);
// Cut just before the last request record: the first two requests and their responses are written.
const cut = lines.findLastIndex((line) => line.startsWith('{"type":"api-request"'));
const requests = (upTo: number) =>
  lines.slice(0, upTo).filter((line) => line.startsWith('{"type":"api-request"')).length;

const store = tempStore();
afterAll(() => store.close());
const file = join(store.dir, '5d5d5d5d-0004-4000-8000-00000000000d.jsonl');
const sessions = new SessionStore(store.db);
const mainId = () => [...sessions.list()].find((row) => row.kind === 'main')?.id as string;
const count = (table: string) =>
  store.db.prepare(`SELECT count(*) FROM ${table} WHERE session_id = ?`).pluck().get(mainId()) as number;

describe('a growing transcript’s request log', () => {
  it('stores the requests the file holds so far, each rebuilt exactly', () => {
    writeFileSync(file, `${lines.slice(0, cut).join('\n')}\n`);
    ingest(store.db, [file]);
    const { byResponse } = sessions.loadRequests(mainId());
    expect(byResponse.size).toBe(requests(cut));
    expect([...byResponse.values()].map((r) => r.fidelity)).toEqual(['exact', 'exact']);
  });

  it('adds the rest when it grows, keeping the messages already stored (no duplicate rows)', () => {
    appendFileSync(file, `${lines.slice(cut).join('\n')}\n`);
    const [summary] = ingest(store.db, [file]);
    expect(summary?.sessions.updated).toBe(1);
    const { byResponse } = sessions.loadRequests(mainId());
    expect(byResponse.size).toBe(requests(lines.length));
    expect([...byResponse.values()].every((r) => r.fidelity === 'exact')).toBe(true);
    const log = sessions.requestLog(mainId());
    expect(count('request_messages')).toBe(Object.keys(log?.messages ?? {}).length);
    expect(count('requests')).toBe(requests(lines.length));
    // Nothing changed: nothing is written again.
    const [again] = ingest(store.db, [file]);
    expect(again?.files.unchanged).toBe(1);
  });
});

describe('request shapes shared between sessions', () => {
  const projects = join(root, 'test/fixtures/real/claude-code-2.1.328/projects/-home-ada-projects-demo-app');
  const a = '5a5a5a5a-0001-4000-8000-00000000000a';
  const b = '5b5b5b5b-0002-4000-8000-00000000000b';
  const bodies = (db: Db) => db.prepare('SELECT count(*) FROM shape_bodies').pluck().get() as number;
  /** Every request of the session rebuilt, and how well: one entry per response, then the unbound ones. */
  const rebuilt = (db: Db, sourceId: string) => {
    const s = new SessionStore(db);
    const id = [...s.list()].find((row) => row.source_id === sourceId)?.id as string;
    const { byResponse, unbound } = s.loadRequests(id);
    return [...byResponse.values(), ...unbound].map((r) => r.fidelity);
  };
  const recorded = (sourceId: string) =>
    readFileSync(join(projects, `${sourceId}.jsonl`), 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('{"type":"api-request"')).length;
  const requestRows = (db: Db) => db.prepare('SELECT count(*) FROM requests').pluck().get() as number;

  it('keeps one body for a shape every session names, and drops it when no session does any more', () => {
    const shared = tempStore();
    try {
      const fileA = join(shared.dir, `${a}.jsonl`);
      const fileB = join(shared.dir, `${b}.jsonl`);
      writeFileSync(fileA, readFileSync(join(projects, `${a}.jsonl`)));
      writeFileSync(fileB, readFileSync(join(projects, `${b}.jsonl`)));
      ingest(shared.db, [fileA, fileB]);
      // Both main sessions were sent shape d23bfaf4…: one body, named twice.
      expect(shared.db.prepare('SELECT count(*) FROM request_shapes').pluck().get()).toBe(2);
      expect(bodies(shared.db)).toBe(1);
      expect(requestRows(shared.db)).toBe(recorded(a) + recorded(b));
      expect(rebuilt(shared.db, a).length).toBeGreaterThan(0);
      expect(rebuilt(shared.db, b).length).toBeGreaterThan(0);
      expect(new Set([...rebuilt(shared.db, a), ...rebuilt(shared.db, b)])).toEqual(new Set(['exact']));

      // The same transcripts without their request records: the body goes with the last session naming it.
      const withoutRequests = (file: string) =>
        writeFileSync(
          file,
          `${readFileSync(file, 'utf8')
            .split('\n')
            .filter((line) => line !== '' && !line.startsWith('{"type":"api-request'))
            .join('\n')}\n`,
        );
      withoutRequests(fileA);
      ingest(shared.db, [fileA]);
      expect(bodies(shared.db)).toBe(1);
      expect(requestRows(shared.db)).toBe(recorded(b));
      expect(new Set(rebuilt(shared.db, b))).toEqual(new Set(['exact']));
      withoutRequests(fileB);
      ingest(shared.db, [fileB]);
      expect(shared.db.prepare('SELECT count(*) FROM request_shapes').pluck().get()).toBe(0);
      expect(bodies(shared.db)).toBe(0);
    } finally {
      shared.close();
    }
  });

  it('stores a shape that has another one’s hash but not its content as its own body', () => {
    // Two sessions in one ingest, the second's shape edited under the same shape hash (a corrupt or tampered
    // log): the body of the first, kept in memory to skip serialising it again, must not be reused for it.
    const shared = tempStore();
    try {
      const fileA = join(shared.dir, `${a}.jsonl`);
      const fileB = join(shared.dir, `${b}.jsonl`);
      writeFileSync(fileA, readFileSync(join(projects, `${a}.jsonl`)));
      const edited = readFileSync(join(projects, `${b}.jsonl`), 'utf8')
        .split('\n')
        .map((line) =>
          line.startsWith('{"type":"api-request-shape"')
            ? line.replace('"You are a Claude agent', '"You are an edited Claude agent')
            : line,
        )
        .join('\n');
      expect(edited).toContain('You are an edited Claude agent');
      writeFileSync(fileB, edited);
      ingest(shared.db, [fileA, fileB]);
      expect(bodies(shared.db)).toBe(2);
      const systems = shared.db
        .prepare(
          `SELECT s.session_id, b.system FROM request_shapes s JOIN shape_bodies b USING (digest)
           JOIN sessions ON sessions.id = s.session_id ORDER BY sessions.source_id`,
        )
        .all() as { system: string }[];
      expect(systems.map((row) => row.system.includes('You are an edited Claude agent'))).toEqual([
        false,
        true,
      ]);
    } finally {
      shared.close();
    }
  });

  it('moves the bodies of a store made before m009_shared_shape_bodies, every request still exact', () => {
    // The store as the current version writes it, copied into one that has only the migrations before m009,
    // with each shape's body back in its request_shapes row as that version stored it.
    const current = tempStore();
    const scratch = tempDir('replay-m009-');
    const oldPath = join(scratch.path, 'old.db');
    try {
      ingest(current.db, [join(projects, `${a}.jsonl`)]);
      const fidelities = rebuilt(current.db, a);
      expect(fidelities.length).toBeGreaterThan(0);
      const shapes = current.db
        .prepare(
          'SELECT s.session_id, s.hash, b.system, b.tools FROM request_shapes s JOIN shape_bodies b USING (digest)',
        )
        .all();
      current.db.close();
      const raw = new Database(oldPath);
      raw.exec(
        'CREATE TABLE migrations (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, applied_at TEXT NOT NULL)',
      );
      const before = migrations.findIndex((m) => m.name === 'm009_shared_shape_bodies');
      migrations.slice(0, before).forEach((m, index) => {
        raw.exec(m.sql);
        raw.prepare('INSERT INTO migrations (name, applied_at) VALUES (?, ?)').run(m.name, 'then');
        raw.pragma(`user_version = ${index + 1}`);
      });
      raw.exec(`ATTACH '${current.path}' AS current`);
      for (const table of ['sessions', 'messages', 'source_files', 'requests', 'request_messages']) {
        // The columns the old schema has (later migrations add some to these tables).
        const columns = (raw.pragma(`main.table_info(${table})`) as { name: string }[])
          .map((column) => column.name)
          .join(', ');
        raw.exec(`INSERT INTO main.${table} (${columns}) SELECT ${columns} FROM current.${table}`);
      }
      const insert = raw.prepare(
        'INSERT INTO request_shapes (session_id, hash, system, tools) VALUES (@session_id, @hash, @system, @tools)',
      );
      for (const row of shapes) insert.run(row);
      raw.close();

      const upgraded = openDb(oldPath);
      try {
        expect(bodies(upgraded)).toBe(1);
        expect(upgraded.prepare('SELECT digest FROM request_shapes').pluck().all()).toEqual([
          expect.stringMatching(/^m009:/),
        ]);
        expect(requestRows(upgraded)).toBe(recorded(a));
        expect(rebuilt(upgraded, a)).toEqual(fidelities);
        expect(new Set(fidelities)).toEqual(new Set(['exact']));
      } finally {
        upgraded.close();
      }
    } finally {
      current.close();
      scratch.remove();
    }
  });
});
